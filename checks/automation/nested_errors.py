"""A nested model's validation errors, placed under a key, to raise again with the others.

A check validates its kind with the kind's own model (``checks.kinds``), then
raises the kind's errors together with its own, each at its place under the
check (``missing.column``), as if the kind were one of the check's fields.
"""

from __future__ import annotations

from typing import Any, get_args

from pydantic_core import ErrorDetails, InitErrorDetails, PydanticCustomError
from pydantic_core.core_schema import ErrorType

ERROR_TYPES = frozenset(get_args(ErrorType))
"""pydantic's own error types; any other is a validator's own (``fail_here``)."""


def located(err: ErrorDetails, under: tuple[str, ...]) -> InitErrorDetails:
    """One error of a validation, at ``under`` + its place, to raise again with the others."""
    ctx = err.get("ctx")
    kind: Any = err["type"]
    if kind not in ERROR_TYPES:  # a validator's own error (``fail_here``)
        template = "{message}" if ctx and "message" in ctx else err["msg"]
        kind = PydanticCustomError(kind, template, ctx)
    found: InitErrorDetails = {"type": kind, "loc": (*under, *err["loc"]), "input": err["input"]}
    if ctx is not None:
        found["ctx"] = ctx
    return found
