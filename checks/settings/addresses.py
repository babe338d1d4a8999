"""Which hosts a chat channel's URL may not name: this machine and the cloud's metadata service.

A channel URL is a request Lookout makes on the config author's behalf; one
aimed at ``http://169.254.169.254/`` (the instance metadata service of AWS,
Azure, GCP, OCI…) or at a port on this machine posts there, and the
delivery log records the answer. Refused unless the channel sets
``allow_private_address: true``:

- the names ``localhost`` and ``*.localhost`` (RFC 6761 §6.3: always this
  machine), and the metadata names in ``METADATA_NAMES``;
- loopback (127.0.0.0/8, ``::1``), "this host" (0.0.0.0/8, ``::``, which
  Linux connects to this machine), link-local (169.254.0.0/16, fe80::/10:
  the metadata services live there) and the metadata addresses outside those
  ranges (``METADATA_ADDRESSES``);
- each of those written as IPv4-mapped (``::ffff:169.254.169.254``),
  IPv4-compatible (``::127.0.0.1``) or NAT64 (``64:ff9b::a9fe:a9fe``, RFC 6052)
  IPv6, and in the short, octal, hex and decimal IPv4 forms that
  ``inet_aton`` — hence ``getaddrinfo`` and every HTTP client here — accepts
  (``127.1``, ``0177.0.0.1``, ``0x7f000001``, ``2130706433``; the WHATWG URL
  standard's IPv4 parser reads them the same way).

Private ranges (10/8, 172.16/12, 192.168/16, fc00::/7) stay allowed: an
on-premise relay lives there. Only the URL's text is checked: a name that
resolves to a refused address (in DNS, ``/etc/hosts``, or by rebinding
between checks) is not caught here.
"""

from __future__ import annotations

import ipaddress
from urllib.parse import unquote, urlsplit

METADATA_NAMES = frozenset(
    {
        "metadata",  # GCP's short name, resolved by its instances' search domain
        "metadata.google.internal",
        "metadata.goog",
        "instance-data",  # AWS's name for 169.254.169.254 inside a VPC
        "instance-data.ec2.internal",
    }
)
"""Host names of cloud instance metadata services (lower case, no trailing dot)."""

METADATA_ADDRESSES = frozenset(
    {
        ipaddress.ip_address("fd00:ec2::254"),  # AWS IMDS over IPv6 (a unique local address)
        ipaddress.ip_address("100.100.100.200"),  # Alibaba Cloud (shared address space)
    }
)
"""Metadata service addresses outside the link-local ranges, refused although private."""

_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")  # RFC 6052's well-known prefix
_COMPAT = ipaddress.IPv6Network("::/96")  # IPv4-compatible (deprecated, RFC 4291 §2.5.5.1)
_THIS_HOST = ipaddress.IPv4Network("0.0.0.0/8")  # RFC 1122: "this host on this network"

Address = ipaddress.IPv4Address | ipaddress.IPv6Address


def _number(part: str) -> int | None:
    """Return one part of an ``inet_aton`` address: decimal, ``0``-octal or ``0x``-hex."""
    text = part.lower()
    try:
        if text.startswith("0x"):
            return int(text[2:] or "0", 16)
        if len(text) > 1 and text.startswith("0"):
            return int(text[1:], 8)
        return int(text, 10) if text.isdigit() else None
    except ValueError:
        return None


def lenient_ipv4(host: str) -> ipaddress.IPv4Address | None:
    """Return the IPv4 address ``inet_aton`` reads ``host`` as, or None when it is a name.

    One to four parts split by dots, each decimal, octal (leading ``0``) or hex
    (``0x``); the last part fills the remaining bytes (``127.1`` is 127.0.0.1,
    ``2130706433`` is 127.0.0.1). Source: POSIX ``inet_addr`` / glibc ``inet_aton``,
    and the WHATWG URL standard's IPv4 parser.

    Args:
        host: a host name as written in a URL, lower case, without brackets.
    """
    parts = host.split(".")
    if not 1 <= len(parts) <= 4 or not all(parts):
        return None
    numbers = [_number(p) for p in parts]
    if any(n is None for n in numbers):
        return None
    values = [n for n in numbers if n is not None]
    head, last = values[:-1], values[-1]
    if any(n > 255 for n in head) or last >= 256 ** (5 - len(values)):
        return None
    value = last
    for index, byte in enumerate(head):
        value += byte << (8 * (3 - index))
    return ipaddress.IPv4Address(value)


def _embedded_ipv4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """Return the IPv4 address an IPv6 address carries (mapped, compatible or NAT64), if any."""
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address in _NAT64 or (address in _COMPAT and int(address) > 1):  # not ``::`` or ``::1``
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return None


def _address_reason(address: Address) -> str | None:
    """Return why ``address`` is refused, or None."""
    if isinstance(address, ipaddress.IPv6Address):
        inner = _embedded_ipv4(address)
        if inner is not None:
            reason = _address_reason(inner)
            return f"{reason}, written as IPv6" if reason else None
    if address in METADATA_ADDRESSES:
        return f"{address} is a cloud metadata service address"
    if address.is_loopback:
        return f"{address} is a loopback address (this machine)"
    if address.is_unspecified or (
        isinstance(address, ipaddress.IPv4Address) and address in _THIS_HOST
    ):
        return f"{address} means this machine"
    if address.is_link_local:
        return f"{address} is link-local (where cloud metadata services answer)"
    return None


def refused_host(host: str, *, numeric_names: bool = True) -> str | None:
    """Return why a URL's ``host`` may not be a channel's destination, or None when it may.

    Args:
        host: the host part of a URL as ``urlsplit`` gives it (brackets removed);
            percent-escapes and one trailing dot are undone first.
        numeric_names: read a host that is all numbers (``2130706433``) as an
            IPv4 address. False for Apprise services whose "host" is a token
            (a Telegram bot id), where it is not an address.
    """
    name = unquote(host).lower().rstrip(".") if host not in ("", ".") else host
    if name == "localhost" or name.endswith(".localhost"):
        return f"{name!r} is this machine (loopback)"
    if name in METADATA_NAMES:
        return f"{name!r} is a cloud metadata service's name"
    address: Address | None
    try:
        address = ipaddress.ip_address(name)
    except ValueError:
        address = None
    if address is None and "%" in name:  # an IPv6 zone id: ``fe80::1%eth0``
        try:
            address = ipaddress.ip_address(name.split("%")[0])
        except ValueError:
            address = None
    if address is None and (numeric_names or "." in name or name.startswith("0x")):
        address = lenient_ipv4(name)
    return _address_reason(address) if address is not None else None


def refused_url(url: str, *, numeric_names: bool = True) -> str | None:
    """Return the message refusing ``url``'s host (see ``refused_host``), or None.

    The message names the reason and the way out, never the URL (it may hold a secret).

    Args:
        url: a channel URL; one that does not parse is left to the other checks.
        numeric_names: passed to ``refused_host``.
    """
    try:
        host = urlsplit(url.strip()).hostname
    except ValueError:
        return None
    if not host:
        return None
    reason = refused_host(host, numeric_names=numeric_names)
    if reason is None:
        return None
    return (
        f"{reason}: a channel may not post to this machine or a cloud metadata service "
        "(set allow_private_address: true on the channel to allow it)"
    )
