"""``schema``: the columns the table must have, each with a type family or an exact type.

::

    schema: {table, columns: {name: type}}          expect "== 0"

A type is a family (``TYPE_FAMILIES``) or an exact SQL type (``decimal(10,2)``)
compared in the source's dialect (``checks.sql.types.matches``). It reads the
live columns when judged; a missing column is what it reports, not a mistake
in it. A column is found by its exact name, else by a name differing only in
case when exactly one column has it; two columns differing only in case
(PostgreSQL's ``"Amount"`` and ``amount``) make a name written in neither case
an error naming both. It has no NULL rule. Metrics: ``rows_in_scope``, ``columns_expected``,
``missing_columns``, ``wrong_types``, ``problems``.
"""

from __future__ import annotations

import re
from typing import ClassVar

from pydantic import Field, field_validator

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

    columns: dict[str, str] = Field(min_length=1)

    @field_validator("columns")
    @classmethod
    def _types(cls, value: dict[str, str]) -> dict[str, str]:
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
    def columns_used(self) -> list[str]:
        """None: a missing column is what this check reports, not a mistake in it."""
        return []

    def sql(self, scope: Scope) -> Compiled:
        """``count(*)`` over the scope (the table is found); the columns are read when judged."""
        return scope.done(scope.scoped(in_scope()), None, None)

    def judged(self, counts: Counts) -> Judged:
        """The live columns against ``columns``: each missing or wrongly typed is a problem."""
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
        """``1 problem in 4 columns``."""
        problems, expected = metric(result, "problems"), metric(result, "columns_expected")
        return f"{problems:,} problem{'' if problems == 1 else 's'} in {expected:,} columns"

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
