"""Pydantic's validation errors of an automation as one-line messages, at their YAML place."""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel
from pydantic_core import ErrorDetails

from checks.automation.check import Check
from checks.automation.model import LOADER_FIELDS, Automation
from checks.fields.rules import did_you_mean
from checks.fields.yaml_messages import exponent_hint, shown
from checks.kinds.registry import KINDS


def _yaml_keys(model: type[BaseModel]) -> list[str]:
    fields = model.model_fields.items()
    return [info.alias or name for name, info in fields if name not in LOADER_FIELDS]


def relative_loc(err: ErrorDetails) -> tuple[Any, ...]:
    """Where an error is, under the automation: a validator may name its own place (``at``)."""
    ctx = err.get("ctx") or {}
    if err["type"] != "lookout":
        return tuple(err["loc"])
    at = tuple(ctx["at"])
    return (*err["loc"], *at) if ctx.get("relative") else at


def unknown_field(relative: tuple[Any, ...]) -> str:
    """``unknown field 'x' (did you mean 'y'?)``, with the keys of the model it is in."""
    key = str(relative[-1])
    known: list[str] = []
    if len(relative) == 1:
        known = _yaml_keys(Automation)
    elif len(relative) == 3 and relative[0] == "checks":
        if key == "filter":
            return (
                "unknown field 'filter': it goes inside the kind's mapping, "
                "e.g. missing: {table: orders, column: email, filter: \"status = 'paid'\"}"
            )
        known = [*_yaml_keys(Check), *KINDS]
    elif len(relative) == 4 and relative[0] == "checks" and relative[2] in KINDS:
        known = _yaml_keys(KINDS[relative[2]])
    return f"unknown field {key!r}{did_you_mean(key, known)}"


def kind_of(value: object) -> str:
    """A YAML value's kind in words: ``a mapping``, ``a list``, ``text``, ``nothing``…."""
    if value is None:
        return "nothing"
    kinds = {dict: "a mapping", list: "a list", str: "text", bool: "a boolean"}
    for kind, name in kinds.items():
        if isinstance(value, kind):
            return name
    return "a number" if isinstance(value, int | float) else type(value).__name__


def message_of(err: ErrorDetails) -> str:
    """Turn one pydantic error into a readable one-line message."""
    ctx = err.get("ctx") or {}
    kind, value = err["type"], err.get("input")
    if kind == "lookout":
        return str(ctx["message"])
    if kind == "value_error":
        return str(ctx["error"])
    if kind == "model_type":
        return f"expected a mapping of fields, got {kind_of(value)}"
    written = kind_of(value) if value is None or isinstance(value, dict | list) else shown(value)
    if len(written) > 60:
        written = written[:57] + "..."
    msg = err["msg"]
    hint = exponent_hint(value)
    if kind == "literal_error" and isinstance(value, str):  # a misspelt choice: the closest
        hint = did_you_mean(value, re.findall(r"'([^']*)'", str(ctx.get("expected", ""))))
    return f"{msg[:1].lower()}{msg[1:]} (got {written}){hint}"
