"""A test's ``where:`` and dbt-utils' expressions as SQL conditions in the adapter's dialect."""

from __future__ import annotations

from typing import Any

import sqlglot
from sqlglot import exp

from checks.dbt.conditions import Untranslatable
from checks.dbt.manifest import Manifest

_DIALECTS = {"sqlserver": "tsql", "databricks": "databricks", "postgres": "postgres"}


def dialect_of(manifest: Manifest) -> str:
    """Sqlglot's name of the manifest's adapter (``sqlserver``: ``tsql``)."""
    return _DIALECTS.get(manifest.adapter, manifest.adapter)


def condition(text: str, dialect: str, setting: str) -> exp.Expr:
    """``text`` as one SQL condition.

    Raises:
        Untranslatable: it holds Jinja, or is not one condition in ``dialect``.
    """
    if "{{" in text or "{%" in text:
        raise Untranslatable(f"{setting} holds Jinja, which only dbt renders")
    try:
        return sqlglot.parse_one(text, read=dialect or None, into=exp.Condition)
    except Exception as error:  # ParseError, TokenError, an unknown dialect
        raise Untranslatable(f"{setting} {text!r} is not one SQL condition: {error}") from None


def add_filter(kind: dict[str, Any], where: str | None, manifest: Manifest) -> None:
    """Set ``kind``'s ``filter:`` to the test's ``where:``, once it reads as one condition."""
    if where:
        condition(where, dialect_of(manifest), "where")
        kind["filter"] = where
