"""How values read from YAML, and YAML's own errors, are written in a problem's message."""

from __future__ import annotations

import datetime as dt
import json
import math
import re

import yaml

from checks.errors import AutomationError

_EXPONENT_ONLY = re.compile(r"([-+]?\d+)([eE][-+]?\d+)")  # 1e3: a number in YAML 1.2, text in 1.1


def exponent_hint(value: object) -> str:
    """``; YAML reads 1e3 as text: write 1.0e3`` for a number PyYAML reads as text, else ``""``.

    YAML 1.1, which PyYAML follows, reads a float only with a dot in its mantissa
    (``1.0e3``); ``1e3`` is the text '1e3', so a field wanting a number refuses it.
    """
    if not isinstance(value, str):
        return ""
    match = _EXPONENT_ONLY.fullmatch(value.strip())
    if not match:
        return ""
    return f"; YAML reads {value.strip()} as text: write {match.group(1)}.0{match.group(2)}"


def shown(value: object) -> str:
    """A value read from YAML as an error message shows it: as YAML writes it, never a Python repr.

    Text is single-quoted (``'Late Flights'``; double-quoted with escapes when it
    holds control characters), booleans are ``true``/``false``, infinities
    ``.inf``; a date or timestamp YAML read from an unquoted value says so
    (``the date 2024-01-01``), since that is why text was not found.
    """
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and not math.isfinite(value):
        return ".nan" if math.isnan(value) else ("-.inf" if value < 0 else ".inf")
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, str):
        if value.isprintable():
            return "'" + value.replace("'", "''") + "'"
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, dt.datetime):
        return f"the timestamp {value.isoformat(sep=' ')}"
    if isinstance(value, dt.date):
        return f"the date {value.isoformat()}"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list | tuple):
        return "a list"
    if isinstance(value, bytes):
        return "binary data"
    return "a value of another kind"


def yaml_error(exc: yaml.MarkedYAMLError) -> AutomationError:
    """Turn a PyYAML error into an ``AutomationError`` at its mark, with a hint where one helps."""
    mark = exc.problem_mark or exc.context_mark
    message = f"not valid YAML: {exc.problem or exc.context}"
    if exc.context and exc.problem:
        message += f" ({exc.context})"
    if exc.context == "while scanning a block scalar":
        message += "; quote a value that starts with '>' or '|', e.g. expect: \"> 0\""
    elif exc.problem == "but found another document":
        message += "; one YAML document per file: list several under 'automations:'"
    return AutomationError(
        message,
        line=mark.line + 1 if mark else None,
        column=mark.column + 1 if mark else None,
    )


def unknown_tag(tag: str) -> str:
    """The problem of a value whose YAML tag has no constructor (``!= 0`` read as a tag)."""
    return f"YAML reads {tag!r} as a tag; quote a value that starts with '!', e.g. expect: \"!= 0\""


def not_of_its_type(value: str, tag: str, exc: Exception) -> str:
    """The problem of a value that is not what its tag says (``2024-13-45``, ``!!int x``).

    Either the tag is written (``!!int``) or YAML gives it to a plain value that
    looks like one (a timestamp): quoted, the value stays text.
    """
    kind = tag.rsplit(":", 1)[-1]
    why = f" ({exc})" if kind == "timestamp" and isinstance(exc, ValueError) and str(exc) else ""
    return (
        f"YAML reads {shown(value)} as {_KIND_NAMES.get(kind, 'a ' + kind)}, and it is not a "
        f"valid one{why}; quote the value to keep it as text"
    )


_KIND_NAMES = {"int": "an integer", "float": "a number", "bool": "a boolean"}
