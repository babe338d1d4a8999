"""The regular expressions every engine Lookout reads means alike: a pattern checked at load.

A ``validity`` ``regex:`` runs on the source's engine: POSIX ERE / Tcl ARE
(PostgreSQL, Redshift, Snowflake), RE2 (DuckDB, ClickHouse, BigQuery, SQL
Server), PCRE2 (MariaDB), ICU (MySQL 8), Java (Spark, Databricks, Trino) and
Python (SQLite, through the function Lookout registers). ``problem`` accepts
the part they share and names what it refuses, with where:

- the pattern must compile in Python's ``re`` (its error and position);
- no ``(?`` group (non-capturing, lookaround, named, inline flags): POSIX ERE has none;
- outside brackets a backslash only escapes a character that is special
  (``\\. \\* \\+ \\? \\( \\) \\[ \\] \\{ \\} \\| \\^ \\$ \\\\``): ``\\d``, ``\\w``, ``\\s``,
  ``\\b`` and back-references exist in some engines only;
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
        re.compile(pattern)
    except re.error as error:
        where = f" at character {error.pos + 1}" if error.pos is not None else ""
        return f"is not a valid regular expression: {error.msg}{where}"
    if not pattern:
        return "must not be empty"
    return _scan(pattern)


def _scan(pattern: str) -> str | None:
    i, n = 0, len(pattern)
    previous = ""  # the last token outside brackets: "atom", "quant", "open", "bar", ""
    while i < n:
        char = pattern[i]
        at = f"at character {i + 1}"
        if char == "\\":
            nxt = pattern[i + 1]
            if nxt not in _SPECIAL:
                hint = _HINTS.get(nxt, "escape only . * + ? ( ) [ ] { } | ^ $ and \\")
                return f"uses \\{nxt} {at}, which not every engine reads alike: {hint}"
            i, previous = i + 2, "atom"
            continue
        if char == "[":
            found = _bracket(pattern, i)
            if isinstance(found, str):
                return found
            i, previous = found, "atom"
            continue
        if char == "(":
            if pattern.startswith("(?", i):
                return (
                    f"uses a (?…) group {at}: POSIX regular expressions (PostgreSQL, Redshift,"
                    " Snowflake) have no non-capturing, lookaround, named or flag groups;"
                    " write a plain group (…)"
                )
            if pattern.startswith("()", i):
                return f"has an empty group {at}"
            i, previous = i + 1, "open"
            continue
        if char == "|":
            if previous in ("open", "bar", "") or i + 1 == n or pattern[i + 1] in "|)":
                return f"has an empty alternative {at}: write (a)? for an optional a"
            i, previous = i + 1, "bar"
            continue
        if char in "*+?":
            if previous == "quant":
                return (
                    f"uses a lazy or possessive quantifier {at}: POSIX regular expressions"
                    " have neither"
                )
            i, previous = i + 1, "quant"
            continue
        if char == "{":
            bound = _BOUND.match(pattern, i)
            if bound is None:
                return f"has a '{{' {at} that is no bound {{n}}, {{n,}} or {{n,m}}: escape it as \\{{"
            high = bound.group(3)
            if int(bound.group(1)) > _MAX_BOUND or (high and int(high) > _MAX_BOUND):
                return f"repeats more than {_MAX_BOUND} times {at}: POSIX's limit (RE_DUP_MAX)"
            if previous == "quant":
                return f"repeats a repetition {at}: put it in a group"
            i, previous = bound.end(), "quant"
            continue
        if char == "}":
            return f"has a '}}' {at} that closes no bound: escape it as \\}}"
        i, previous = i + 1, "close" if char == ")" else "atom"
    return None


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
            return f"has '{pattern[i : i + 2]}' inside [...] {at}: a set operation in Java or Python"
        i += 1
    return i + 1
