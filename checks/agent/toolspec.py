"""The agent's four tools as strict JSON schemas, and checking a call's arguments.

Tool names and shapes are the public contract of docs/design.md, The agent's tools; the
schemas follow OpenAI's function-calling format with ``strict: true`` (every
property required, ``additionalProperties: false``, an optional value written
as a ``["string", "null"]`` type).
"""

from __future__ import annotations

import json
from typing import Any

from checks.errors import LookoutError

READ_TOOLS = ("list_data_sets", "describe_data_set", "execute_query")
SUBMIT_REPORT = "submit_report"


def _tool(name: str, description: str, properties: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "strict": True,
            "parameters": {
                "type": "object",
                "properties": properties,
                "required": list(properties),
                "additionalProperties": False,
            },
        },
    }


TOOL_SCHEMAS: list[dict[str, Any]] = [
    _tool(
        "list_data_sets",
        "List the data sets (tables) of the source with their columns and estimated row "
        "counts (the database's statistics; describe_data_set counts). When "
        "there are more than fit, the most relevant slice is shown (partial: true); pass a "
        "query naming the tables or columns you need to rank those first.",
        {"query": {"type": ["string", "null"], "description": "words to rank by, or null"}},
    ),
    _tool(
        "describe_data_set",
        "Describe one data set: columns with types and NULL counts, row count, a few sample rows.",
        {"name": {"type": "string", "description": "the data set's name as listed"}},
    ),
    _tool(
        "execute_query",
        "Run one read-only SELECT in the source's SQL dialect. Returns an id (Q1, Q2, …) to "
        "cite, the columns and at most a few dozen rows: aggregate in SQL.",
        {"sql": {"type": "string", "description": "one SELECT statement"}},
    ),
    _tool(
        SUBMIT_REPORT,
        "Submit the report, exactly once; this ends the run.",
        {
            "finding": {"type": "string", "enum": ["clear", "needs_attention"]},
            "summary": {
                "type": "string",
                "description": "Markdown; every claim cites its query id, e.g. [Q1] or [C1]",
            },
            "evidence": {
                "type": "array",
                "items": {"type": "string"},
                "description": 'the ids of the queries the finding rests on, e.g. ["Q1", "C2"]',
            },
            "confidence": {"type": "string", "enum": ["low", "medium", "high"]},
        },
    ),
]
TOOL_NAMES = tuple(t["function"]["name"] for t in TOOL_SCHEMAS)
_SCHEMA_BY_NAME = {t["function"]["name"]: t["function"]["parameters"] for t in TOOL_SCHEMAS}


class ToolArgumentError(LookoutError):
    """A tool call's arguments are not JSON or do not match the tool's schema."""


def check_arguments(name: str, raw: str) -> dict[str, Any]:
    """Parse a tool call's raw ``arguments`` and check them against the tool's schema.

    Only the schema keywords ``TOOL_SCHEMAS`` uses are interpreted: ``type``
    (a name or a list of names), ``enum``, ``items``, ``required`` and
    ``additionalProperties: false``.

    Raises:
        ToolArgumentError: unknown tool, text that is not a JSON object, a
            missing or unexpected key, or a value of the wrong type; the
            message says which.
    """
    schema = _SCHEMA_BY_NAME.get(name)
    if schema is None:
        raise ToolArgumentError(f"unknown tool '{name}'; the tools are: {', '.join(TOOL_NAMES)}")
    try:
        args = json.loads(raw) if raw.strip() else {}
    except json.JSONDecodeError as exc:
        raise ToolArgumentError(
            f"arguments are not valid JSON ({exc.msg} at char {exc.pos})"
        ) from None
    if not isinstance(args, dict):
        raise ToolArgumentError("arguments must be a JSON object")
    props: dict[str, Any] = schema["properties"]
    extra = sorted(set(args) - set(props))
    if extra:
        raise ToolArgumentError(f"unexpected argument(s): {', '.join(extra)}")
    for key in schema["required"]:
        nullable = "null" in _types(props[key])
        if key not in args and not nullable:
            raise ToolArgumentError(f"missing argument '{key}'")
        args.setdefault(key, None)
        _check_value(key, args[key], props[key])
    return args


def _types(spec: dict[str, Any]) -> list[str]:
    kind = spec["type"]
    return kind if isinstance(kind, list) else [kind]


_PY_TYPES: dict[str, type | tuple[type, ...]] = {
    "string": str,
    "array": list,
    "null": type(None),
}


def _check_value(key: str, value: Any, spec: dict[str, Any]) -> None:
    kinds = _types(spec)
    if not any(isinstance(value, _PY_TYPES[k]) for k in kinds):
        raise ToolArgumentError(f"argument '{key}' must be {' or '.join(kinds)}")
    if "enum" in spec and value not in spec["enum"]:
        raise ToolArgumentError(f"argument '{key}' must be one of {', '.join(spec['enum'])}")
    if isinstance(value, list):
        for item in value:
            _check_value(f"{key}[]", item, spec["items"])
