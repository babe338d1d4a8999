r"""The regular expressions every engine Lookout reads means alike: a pattern checked at load.

A ``validity`` ``regex:`` runs on the source's engine: POSIX ERE / Tcl ARE
(PostgreSQL, Redshift, Snowflake), RE2 (DuckDB, ClickHouse, BigQuery, SQL
Server), PCRE2 (MariaDB), ICU (MySQL 8), Java (Spark, Databricks, Trino) and
Python (SQLite, through the function Lookout registers). ``problem`` accepts
the part they share and names what it refuses, with where:

- the pattern must compile in Python's ``re`` (its error and position);
- no ``(?`` group (non-capturing, lookaround, named, inline flags): POSIX ERE has none;
- outside brackets a backslash only escapes a character that is special
  (``\. \* \+ \? \( \) \[ \] \{ \} \| \^ \$ \\``): ``\d``, ``\w``, ``\s``,
  ``\b`` and back-references exist in some engines only;
- inside brackets no backslash (POSIX reads it as itself, the others as an
  escape), no nested ``[`` (Java's union, POSIX's ``[:alpha:]``), and no ``&&``,
  ``--``, ``||`` or ``~~`` (Java's and Python's set operations);
- no lazy or possessive quantifier (``*?``, ``++``): POSIX ERE has neither;
- ``{`` only as a bound ``{n}``, ``{n,}`` or ``{n,m}`` with m at most 255 (POSIX's
  ``RE_DUP_MAX``, PostgreSQL's limit), never ``{,m}``;
- no empty alternative or group (``a|``, ``()``): undefined in POSIX ERE.

What still differs is documented (docs/checks.md, "Regular expressions per
engine"): whether ``.`` and ``[^…]`` match a newline, and non-ASCII text in
engines that match bytes.
"""

from __future__ import annotations

import re
import warnings

_SPECIAL = frozenset(".*+?()[]{}|^$\\")
_HINTS = {
    "d": "write [0-9] for \\d",
    "D": "write [^0-9] for \\D",
    "w": "write [A-Za-z0-9_] for \\w",
    "W": "write [^A-Za-z0-9_] for \\W",
    "s": "list the spaces, e.g. [ ] for \\s",
    "S": "list what is not a space, e.g. [^ ] for \\S",
}
_MAX_BOUND = 255
_BOUND = re.compile(r"\{(\d+)(,(\d*))?\}")


def problem(pattern: str) -> str | None:
    """Why ``pattern`` is not a regular expression every engine reads alike, or None.

    The message names the construct and its position (1-based character).
    """
    try:
        with warnings.catch_warnings():  # its nested-set warnings: refused below, by name
            warnings.simplefilter("ignore", FutureWarning)
            re.compile(pattern)
    except re.error as error:
        where = f" at character {error.pos + 1}" if error.pos is not None else ""
        return f"is not a valid regular expression: {error.msg}{where}"
    if not pattern:
        return "must not be empty"
    return _scan(pattern)


_Step = tuple[int, str] | str
"""The index after a token and its sort (``atom``, ``quant``, ``open``, ``bar``), or a refusal."""


def _scan(pattern: str) -> str | None:
    i, previous = 0, ""  # the sort of the last token outside brackets
    while i < len(pattern):
        step = _STEPS.get(pattern[i], _atom)(pattern, i, previous)
        if isinstance(step, str):
            return step
        i, previous = step
    return None


def _at(i: int) -> str:
    return f"at character {i + 1}"


def _atom(pattern: str, i: int, previous: str) -> _Step:
    return i + 1, "atom"


def _escape(pattern: str, i: int, previous: str) -> _Step:
    nxt = pattern[i + 1]
    if nxt not in _SPECIAL:
        hint = _HINTS.get(nxt, "escape only . * + ? ( ) [ ] { } | ^ $ and the backslash")
        return f"uses \\{nxt} {_at(i)}, which not every engine reads alike: {hint}"
    return i + 2, "atom"


def _open(pattern: str, i: int, previous: str) -> _Step:
    if pattern.startswith("(?", i):
        return (
            f"uses a (?…) group {_at(i)}: POSIX regular expressions (PostgreSQL, Redshift,"
            " Snowflake) have no non-capturing, lookaround, named or flag groups;"
            " write a plain group (…)"
        )
    if pattern.startswith("()", i):
        return f"has an empty group {_at(i)}"
    return i + 1, "open"


def _bar(pattern: str, i: int, previous: str) -> _Step:
    if previous in ("open", "bar", "") or i + 1 == len(pattern) or pattern[i + 1] in "|)":
        return f"has an empty alternative {_at(i)}: write (a)? for an optional a"
    return i + 1, "bar"


def _quantifier(pattern: str, i: int, previous: str) -> _Step:
    if previous == "quant":
        return (
            f"uses a lazy or possessive quantifier {_at(i)}: POSIX regular expressions have neither"
        )
    return i + 1, "quant"


def _bound(pattern: str, i: int, previous: str) -> _Step:
    bound = _BOUND.match(pattern, i)
    if bound is None:
        return f"has a '{{' {_at(i)} that is no bound {{n}}, {{n,}} or {{n,m}}: escape it as \\{{"
    high = bound.group(3)
    if int(bound.group(1)) > _MAX_BOUND or (high and int(high) > _MAX_BOUND):
        return f"repeats more than {_MAX_BOUND} times {_at(i)}: POSIX's limit (RE_DUP_MAX)"
    return bound.end(), "quant"


def _close_brace(pattern: str, i: int, previous: str) -> _Step:
    return f"has a '}}' {_at(i)} that closes no bound: escape it as \\}}"


def _bracket_step(pattern: str, i: int, previous: str) -> _Step:
    found = _bracket(pattern, i)
    return found if isinstance(found, str) else (found, "atom")


_STEPS = {
    "\\": _escape,
    "[": _bracket_step,
    "(": _open,
    ")": lambda pattern, i, previous: (i + 1, "close"),
    "|": _bar,
    "*": _quantifier,
    "+": _quantifier,
    "?": _quantifier,
    "{": _bound,
    "}": _close_brace,
}


def _bracket(pattern: str, start: int) -> int | str:
    """The index after the bracket expression at ``start``, or why it is refused."""
    i = start + 1
    if i < len(pattern) and pattern[i] == "^":
        i += 1
    if i < len(pattern) and pattern[i] == "]":
        i += 1  # a ] first is itself
    while i < len(pattern) and pattern[i] != "]":
        char = pattern[i]
        at = f"at character {i + 1}"
        if char == "\\":
            return (
                f"has a backslash inside [...] {at}: POSIX reads it as itself, the other"
                " engines as an escape; put ] first, - first or last, ^ anywhere but first"
            )
        if char == "[":
            return f"has a '[' inside [...] {at}: Java reads a nested class, POSIX [:class:]"
        if pattern[i : i + 2] in ("&&", "--", "||", "~~"):
            return (
                f"has '{pattern[i : i + 2]}' inside [...] {at}: a set operation in Java or Python"
            )
        i += 1
    return i + 1
