r"""The formats ``validity`` knows by name: each a pattern every engine reads alike, or a list.

Every pattern here is written in the subset of regular expressions that POSIX
ERE, RE2, PCRE2, ICU, Java and Python share (``checks.kinds.portable_regex``):
bracket classes (``[0-9]``, never ``\d``), plain groups, alternation, the
quantifiers ``? * + {n} {n,m}``; no backslash at all, so no engine's string
escaping can change them. Each matches the whole value (``validity`` anchors
it); none matches a NULL, an empty text, or surrounding spaces.

=============== ==============================================================================
``email``        WHATWG HTML "valid e-mail address" (local part of letters, digits and
                 ``.!#$%&'*+/=?^_`{|}~-``; domain labels of letters, digits and inner
                 hyphens, at most 63 characters), with at least one dot in the domain
``uuid``         RFC 9562 text form: 8-4-4-4-12 hexadecimal digits, either case, any version
``url``          ``http://`` or ``https://`` (either case), a host name of dotted labels (or an
                 IPv4 address), an optional ``:port`` and an optional path, query or fragment
                 of printable ASCII (``!`` to ``~``: no spaces, no IPv6 host, no non-ASCII)
``ipv4``         dotted quad, each part 0-255 without leading zeros (``010.1.1.1`` is not one)
``ipv6``         RFC 4291 section 2.2 text forms: eight groups, ``::`` compression, an IPv4
                 tail; no zone (``%eth0``) and no brackets
``e164_phone``   ITU-T E.164: ``+``, a country code not starting with 0, at most 15 digits
``iso_date``     ISO 8601 calendar date ``YYYY-MM-DD`` that exists in the proleptic Gregorian
                 calendar (``2024-02-29`` is one, ``2023-02-29`` and ``2024-04-31`` are not)
``iso_datetime`` an ``iso_date``, ``T`` (or ``t``, or a space, as RFC 3339 allows), ``hh:mm``
                 with optional ``:ss`` and fraction (``.`` or ``,``), and an optional ``Z`` or
                 ``+hh:mm`` / ``+hhmm`` / ``+hh`` offset; hours 00-23, no leap second
``iso_country``  ISO 3166-1 alpha-2 codes, upper case, as ``pycountry`` lists them
``iso_currency`` ISO 4217 alphabetic codes, upper case, as ``pycountry`` lists them
=============== ==============================================================================

``pycountry`` (Debian's iso-codes data) is the maintained source of both
lists; ``CODE_LISTS`` names its version in ``docs/checks.md``.
"""

from __future__ import annotations

from functools import cache
from typing import Literal

FormatName = Literal[
    "email",
    "uuid",
    "url",
    "ipv4",
    "ipv6",
    "e164_phone",
    "iso_date",
    "iso_datetime",
    "iso_country",
    "iso_currency",
]

_LABEL = "[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
_HOST = f"{_LABEL}([.]{_LABEL})*"
_OCTET = "(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])"
_IPV4 = f"{_OCTET}([.]{_OCTET}){{3}}"
_HEX = "[0-9A-Fa-f]{1,4}"


def _ipv6() -> str:
    """Every RFC 4291 text form of an IPv6 address, as alternatives.

    k groups before ``::`` and at most 7 - k after (5 - k with an IPv4 tail, which is
    two groups), or all eight (six and the tail) without ``::``.
    """
    forms = [f"({_HEX}:){{7}}{_HEX}", f"({_HEX}:){{6}}{_IPV4}", f"::({_HEX}(:{_HEX}){{0,6}})?"]
    forms.append(f"::({_HEX}:){{0,5}}{_IPV4}")
    for k in range(1, 8):
        after = f"({_HEX}(:{_HEX}){{0,{6 - k}}})?" if k < 7 else ""
        forms.append(f"({_HEX}:){{{k}}}:{after}")
        if k <= 5:
            forms.append(f"({_HEX}:){{{k}}}:({_HEX}:){{0,{5 - k}}}{_IPV4}")
    return "|".join(f"({form})" for form in forms)


_DAY_OF_ANY = "(0[1-9]|1[0-2])-(0[1-9]|1[0-9]|2[0-8])"
_DAY_29_30 = "(0[13-9]|1[0-2])-(29|30)"
_DAY_31 = "(0[13578]|1[02])-31"
_LEAP_YEAR = "([0-9]{2}(0[48]|[2468][048]|[13579][26])|([02468][048]|[13579][26])00)"
_DATE = f"([0-9]{{4}}-({_DAY_OF_ANY}|{_DAY_29_30}|{_DAY_31})|{_LEAP_YEAR}-02-29)"
_TIME = "([01][0-9]|2[0-3]):[0-5][0-9](:[0-5][0-9]([.,][0-9]+)?)?"
_OFFSET = "([Zz]|[+-]([01][0-9]|2[0-3])(:?[0-5][0-9])?)"

PATTERNS: dict[str, str] = {
    "email": ("[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@" + _LABEL + f"([.]{_LABEL})+"),
    "uuid": "[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}",
    "url": f"[Hh][Tt][Tt][Pp]([Ss])?://{_HOST}(:[0-9]{{1,5}})?([/?#][!-~]*)?",
    "ipv4": _IPV4,
    "ipv6": _ipv6(),
    "e164_phone": "[+][1-9][0-9]{1,14}",
    "iso_date": _DATE,
    "iso_datetime": f"{_DATE}[Tt ]{_TIME}{_OFFSET}?",
    "iso_country": "[A-Z]{2}",
    "iso_currency": "[A-Z]{3}",
}
"""Each format's pattern, matched against the whole value (``iso_*`` codes: their shape,
then the list)."""

CODE_LISTS = ("iso_country", "iso_currency")
"""The formats that are a list of codes besides their pattern."""


@cache
def codes(name: str) -> tuple[str, ...]:
    """The codes of a list format, sorted: ``iso_country`` (249) or ``iso_currency`` (178).

    From ``pycountry`` (ISO 3166-1 alpha-2 and ISO 4217 alphabetic codes, as Debian's
    iso-codes keeps them). Raises KeyError for a format that is no list.
    """
    import pycountry

    if name == "iso_country":
        return tuple(sorted(c.alpha_2 for c in pycountry.countries))
    if name == "iso_currency":
        return tuple(sorted(c.alpha_3 for c in pycountry.currencies))
    raise KeyError(name)


def code_source() -> str:
    """Where the code lists come from, with its version: ``pycountry 26.2.16``."""
    from importlib.metadata import version

    return f"pycountry {version('pycountry')}"
