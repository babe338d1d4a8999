"""``schema``: the columns the table must have, and the changes to them since the last run.

::

    schema: {table, columns?: {name: type}, changes?: forbid|warn}   expect "== 0"

``columns`` and ``changes`` may be given alone or together; at least one.

A type is a family (``TYPE_FAMILIES``) or an exact SQL type (``decimal(10,2)``)
compared in the source's dialect (``checks.sql.types.matches``). It reads the
live columns when judged; a missing column is what it reports, not a mistake
in it. A column is found by its exact name, else by a name differing only in
case when exactly one column has it; two columns differing only in case
(PostgreSQL's ``"Amount"`` and ``amount``) make a name written in neither case
an error naming both. It has no NULL rule. Metrics: ``rows_in_scope``, ``columns_expected``,
``missing_columns``, ``wrong_types``, ``problems``.

``changes`` compares the table's columns and types with those the same check
recorded in its last finished run (``checks.declared.schema_changes``, which
judges it after this kind: ``forbid`` fails on any change, ``warn`` warns);
its metrics are ``columns``, ``columns_added``, ``columns_removed``,
``types_changed`` and ``changes``. With ``changes`` alone there is no
``expect``: the changes are what is judged.
"""

from __future__ import annotations

import re
from typing import ClassVar, Literal

from pydantic import Field, field_validator, model_validator

from checks.fields.expectation import Unit
from checks.fields.judgement import failure, judge_count
from checks.fields.rules import did_you_mean, fail_here
from checks.kinds.base import Compiled, Counts, Judged, Kind, Loc, Scope
from checks.kinds.in_words import metric
from checks.kinds.row_count import in_scope
from checks.report import CheckResult
from checks.sql.catalog import Column
from checks.sql.types import matches

TYPE_FAMILIES: dict[str, str] = {
    "any": "any type (the column must exist)",
    "integer": "any integer type (smallint, integer, bigint, …)",
    "decimal": "an exact decimal (decimal / numeric, any precision)",
    "float": "a floating-point type (real, double)",
    "number": "any of integer, decimal or float",
    "text": "text (varchar, char, text, …)",
    "boolean": "boolean",
    "date": "date",
    "timestamp": "a timestamp without a time zone",
    "timestamptz": "a timestamp with a time zone",
    "time": "a time of day",
    "interval": "an interval",
    "json": "json",
    "uuid": "uuid",
    "binary": "binary data (blob, bytea, …)",
}
"""Names a ``schema`` check accepts for a column's type; any other name is an
exact SQL type (``decimal(10,2)``, ``bigint``) compared in the source's dialect."""

_TYPE_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_ ]*(\(\s*\d+(\s*,\s*\d+)?\s*\))?(\[\])?")


class Schema(Kind):
    """``schema``: the columns the table must have, each with a type family or exact type."""

    KIND: ClassVar[str] = "schema"
    UNITS: ClassVar[frozenset[Unit]] = frozenset({"number", "rows"})
    COMPARED: ClassVar[str] = "problems"
    BY: ClassVar[bool] = False  # the table's columns, the same in every segment

    columns: dict[str, str] | None = Field(default=None, min_length=1)
    changes: Literal["forbid", "warn"] | None = None

    @model_validator(mode="after")
    def _something(self) -> Schema:
        if self.columns is None and self.changes is None:
            raise ValueError(
                "schema needs columns (the columns and types the table must have),"
                " changes (forbid or warn: compared with the last run), or both"
            )
        return self

    @field_validator("columns")
    @classmethod
    def _types(cls, value: dict[str, str] | None) -> dict[str, str] | None:
        if value is None:
            return None
        for name, type_name in value.items():
            if not _TYPE_NAME.fullmatch(type_name.strip()):
                families = ", ".join(TYPE_FAMILIES)
                raise fail_here(  # at the column's type, not at the whole mapping
                    f"column {name}: {type_name!r} is not a type; use one of {families} "
                    "or a SQL type such as decimal(10,2)",
                    (name,),
                )
            misspelt = _misspelt_family(type_name.strip())
            if misspelt:
                raise fail_here(
                    f"column {name}: unknown type {type_name.strip()!r}{misspelt}", (name,)
                )
        return {name: type_name.strip() for name, type_name in value.items()}

    @property
    def compared(self) -> str:
        """``problems`` with ``columns``; ``changes`` alone compares the number of changes."""
        return "problems" if self.columns is not None else "changes"

    def expect_conflict(self) -> str | None:
        """With ``changes`` alone the changes are judged (``forbid``, ``warn``), not ``expect``."""
        if self.columns is not None:
            return None
        return (
            "schema with changes alone is judged by changes (forbid: failed, warn: warned);"
            " leave expect out, or give columns for expect to compare"
        )

    @property
    def columns_used(self) -> list[str]:
        """None: a missing column is what this check reports, not a mistake in it."""
        return []

    def sql(self, scope: Scope) -> Compiled:
        """``count(*)`` over the scope (the table is found); the columns are read when judged."""
        return scope.done(scope.scoped(in_scope()), None, None)

    def judged(self, counts: Counts) -> Judged:
        """The live columns against ``columns``: each missing or wrongly typed is a problem.

        With ``changes`` alone nothing is judged here: passed, until
        ``checks.declared.schema_changes`` sets it against the last run's columns.
        """
        if self.columns is None:
            counts.metrics.update(changes=0, compared=self.compared)
            return Judged(judge_count(counts.expect, 0, None))
        source = counts.source
        columns = source.table_columns(counts.table)
        exact = {c.name: c for c in columns}
        folded: dict[str, list[Column]] = {}
        for column in columns:
            folded.setdefault(column.name.lower(), []).append(column)
        missing: list[str] = []
        wrong: list[str] = []
        for name, wanted in self.columns.items():
            # the exact name first; another case only when one column alone has it
            same = [exact[name]] if name in exact else folded.get(name.lower(), [])
            if len(same) > 1:
                named = " and ".join(repr(c.name) for c in same)
                return Judged(
                    failure(
                        f"column {name!r} is ambiguous in {counts.table}: {named} differ only"
                        " in case; write the exact name"
                    )
                )
            if not same:
                missing.append(name)
            elif not matches(same[0].type, wanted, source.dialect):
                wrong.append(f"{same[0].name} is {same[0].type}, not {wanted}")
        counts.metrics.update(
            columns_expected=len(self.columns),
            missing_columns=len(missing),
            wrong_types=len(wrong),
            problems=len(missing) + len(wrong),
            compared=self.compared,
        )
        parts = []
        if missing:
            parts.append(f"missing column{'s' if len(missing) > 1 else ''}: {', '.join(missing)}")
        parts += wrong
        outcome = judge_count(counts.expect, len(missing) + len(wrong), None)
        return Judged(outcome, "; ".join(parts) or None)

    @classmethod
    def words(cls, result: CheckResult) -> str:
        """``1 problem in 4 columns``, ``2 changes in 19 columns since the last run``, or both."""
        parts = []
        if "columns_expected" in result.metrics:
            problems, expected = metric(result, "problems"), metric(result, "columns_expected")
            plural = "" if problems == 1 else "s"
            parts.append(f"{problems:,} problem{plural} in {expected:,} columns")
        if "columns_added" in result.metrics:  # compared with the last run
            changes, columns = metric(result, "changes"), metric(result, "columns")
            parts.append(
                f"{changes:,} change{'' if changes == 1 else 's'} in {columns:,} columns"
                " since the last run"
            )
        return "; ".join(parts) or "schema recorded"

    def column_problems(self, column_type: str, have: str) -> list[tuple[Loc, str]]:
        """None: the columns' types are what it checks, on every run."""
        return []


def _misspelt_family(type_name: str) -> str:
    """`` (did you mean 'integer'?)`` for an unknown type close to a family, else ``""``.

    A name that is neither a family nor a type sqlglot reads is still taken as an
    exact type (a PostgreSQL enum, say), compared by name; but one close to a family
    (``interger``) is a typo that would fail every run ("year is BIGINT, not interger").
    """
    word = type_name.lower()
    if word in TYPE_FAMILIES:
        return ""
    from sqlglot import exp  # on first use: most files have no schema check

    try:
        exp.DataType.build(word)
        return ""  # a SQL type sqlglot knows (int, float8, varchar(10))
    except Exception:  # sqlglot's ParseError, or ValueError for an odd name
        pass
    return did_you_mean(word, TYPE_FAMILIES)
