"""Typed checks: the common rules in one line each, with stated semantics.

Beside a raw ``sql`` query, a check can be one of these kinds; the YAML keys
are the public contract (README, "Typed checks")::

    row_count:       {table}                                      expect "> 0"
    missing:         {table, column, missing_values?}              expect "== 0"
    duplicates:      {table, columns, nulls?, count?}              expect "== 0"
    accepted_values: {table, column, values, null?}                expect "== 0"
    relationships:   {table, column, to: table.column}             expect "== 0"
    freshness:       {table, column, max_age, timezone?}           expect "<= max_age"
    range:           {table, column, min?, max?, null?}            expect "== 0"
    schema:          {table, columns: {name: type}}                expect "== 0"

Every kind also takes ``filter:``, a SQL boolean expression that narrows the
table to the check's *scope*; it is parsed in the source's dialect and runs
inside the compiled query, through the SQL guard like any query. A check whose
scope has 0 rows is not evaluated (see ``checks.report.CheckOutcome``).

NULL rules (also in the README):

- ``missing`` counts NULLs, and the ``missing_values`` listed.
- ``duplicates``: ``nulls: distinct`` (default, the SQL standard, as a
  UNIQUE constraint) never counts a key holding a NULL as a duplicate;
  ``nulls: equal`` groups NULLs together as GROUP BY does. Rows with a NULL
  key are counted either way (``rows_with_null_key``).
- ``accepted_values``: a NULL is a violation by default (``null: violation``,
  counted apart as ``null_values``); ``null: allowed`` accepts it.
- ``relationships``: a NULL key points at nothing and is no orphan; it is
  counted as ``null_keys``. Orphans are found with NOT EXISTS, never NOT IN.
- ``freshness``: NULL timestamps are ignored; a scope holding only NULLs is
  not evaluated. A timestamp without a time zone is read in ``timezone``
  (default UTC).
- ``range``: a NULL has no magnitude and is not out of range
  (``null: allowed``, counted as ``null_values``); ``null: violation`` counts it.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from decimal import Decimal
from typing import Annotated, Any, ClassVar, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, field_validator, model_validator

from checks.automation.expectation import Unit, duration_text
from checks.automation.fields import DurationS, did_you_mean, fail_here, not_blank, time_zone
from checks.automation.yaml_messages import exponent_hint, shown


def _scalar(value: object) -> object:
    """One listed value: text, a number or a boolean (one message, not one per type tried)."""
    if isinstance(value, str | int | float | bool):
        return value
    hint = ""
    if isinstance(value, dt.date):
        hint = "; quote it to list it as text"
    elif value is None:
        hint = "; NULL is never listed: accepted_values takes null: allowed, missing counts it"
    raise ValueError(f"a listed value is text, a number or a boolean (got {shown(value)}){hint}")


Scalar = Annotated[str | int | float | bool, BeforeValidator(_scalar)]
"""A value listed by ``accepted_values`` or ``missing_values``."""
Bound = int | float | Decimal | dt.date | dt.datetime

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
_TO = re.compile(r"\s*([^.\s]+)\s*\.\s*([^.\s]+)\s*")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class Kind(_Strict):
    """What every kind has: the table, the optional ``filter``, and its rules.

    Class attributes (not YAML keys):
        KIND: the YAML key.
        UNITS: the expectation units it can be compared with.
        DEFAULT_EXPECT: the expectation when ``expect`` is not given.
        COMPARED: the metric the expectation compares by default.
    """

    KIND: ClassVar[str] = ""
    UNITS: ClassVar[frozenset[Unit]] = frozenset({"number", "percent", "rows", "anomaly"})
    DEFAULT_EXPECT: ClassVar[str] = "== 0"
    COMPARED: ClassVar[str] = "violations"

    table: str
    filter: str | None = None

    @field_validator("table")
    @classmethod
    def _table(cls, value: str) -> str:
        return not_blank(value.strip(), "must name a table")

    @field_validator("filter")
    @classmethod
    def _filter(cls, value: str | None) -> str | None:
        return None if value is None else not_blank(value, "must not be empty; leave it out")

    def default_expect(self) -> str:
        """The expectation text used when the check gives none."""
        return self.DEFAULT_EXPECT

    @property
    def compared(self) -> str:
        """The metric the expectation compares."""
        return self.COMPARED

    @property
    def columns_used(self) -> list[str]:
        """The columns of ``table`` this check reads (for validation)."""
        return []


class RowCount(Kind):
    """``row_count``: how many rows are in scope."""

    KIND: ClassVar[str] = "row_count"
    UNITS: ClassVar[frozenset[Unit]] = frozenset({"number", "rows", "anomaly"})
    DEFAULT_EXPECT: ClassVar[str] = "> 0"
    COMPARED: ClassVar[str] = "rows_in_scope"


class _OneColumn(Kind):
    column: str

    @field_validator("column")
    @classmethod
    def _column(cls, value: str) -> str:
        return not_blank(value.strip(), "must name a column")

    @property
    def columns_used(self) -> list[str]:
        """The columns of ``table`` this check reads (for validation)."""
        return [self.column]


class Missing(_OneColumn):
    """``missing``: rows whose column is NULL (or one of ``missing_values``)."""

    KIND: ClassVar[str] = "missing"
    COMPARED: ClassVar[str] = "missing"

    missing_values: list[Scalar] = Field(default_factory=list)


class Duplicates(Kind):
    """``duplicates``: rows sharing a key (``columns``) with another row."""

    KIND: ClassVar[str] = "duplicates"

    columns: list[str] = Field(min_length=1)
    nulls: Literal["distinct", "equal"] = "distinct"
    count: Literal["surplus_rows", "duplicate_groups", "rows_in_duplicate_groups"] = "surplus_rows"

    @field_validator("columns")
    @classmethod
    def _columns(cls, value: list[str]) -> list[str]:
        cleaned = [not_blank(c.strip(), "must name a column") for c in value]
        if len({c.lower() for c in cleaned}) != len(cleaned):
            raise ValueError("a column is listed twice")
        return cleaned

    @property
    def compared(self) -> str:
        """The metric the expectation compares: ``count``."""
        return self.count

    @property
    def columns_used(self) -> list[str]:
        """The key columns."""
        return list(self.columns)


class AcceptedValues(_OneColumn):
    """``accepted_values``: rows whose column is not one of ``values``."""

    KIND: ClassVar[str] = "accepted_values"

    values: list[Scalar] = Field(min_length=1)
    null: Literal["violation", "allowed"] = "violation"


class Relationships(_OneColumn):
    """``relationships``: rows whose key has no match in ``to`` (``table.column``)."""

    KIND: ClassVar[str] = "relationships"
    COMPARED: ClassVar[str] = "orphans"

    to: str

    @field_validator("to")
    @classmethod
    def _to(cls, value: str) -> str:
        if not _TO.fullmatch(value):
            raise ValueError(
                f"'to' is the parent table and column as table.column (got {shown(value)})"
            )
        return value

    @property
    def to_table(self) -> str:
        """The parent table."""
        match = _TO.fullmatch(self.to)
        assert match is not None  # checked when loaded
        return match.group(1)

    @property
    def to_column(self) -> str:
        """The parent column."""
        match = _TO.fullmatch(self.to)
        assert match is not None
        return match.group(2)


class Freshness(_OneColumn):
    """``freshness``: how long ago the newest ``column`` value in scope is."""

    KIND: ClassVar[str] = "freshness"
    UNITS: ClassVar[frozenset[Unit]] = frozenset({"duration"})
    COMPARED: ClassVar[str] = "age_s"

    max_age_s: DurationS | None = Field(default=None, alias="max_age")
    timezone: str | None = None

    @field_validator("timezone")
    @classmethod
    def _zone(cls, value: str | None) -> str | None:
        return None if value is None else time_zone(value)

    def default_expect(self) -> str:
        """``<= max_age``."""
        if self.max_age_s is None:
            raise ValueError("freshness needs max_age (or an expect such as '< 3h')")
        return f"<= {duration_text(Decimal(repr(self.max_age_s)))}"


class Range(_OneColumn):
    """``range``: rows whose column is below ``min`` or above ``max`` (both inclusive)."""

    KIND: ClassVar[str] = "range"

    min: Bound | None = None
    max: Bound | None = None
    null: Literal["allowed", "violation"] = "allowed"

    @field_validator("min", "max", mode="before")
    @classmethod
    def _iso(cls, value: object) -> object:
        """Read a quoted date or timestamp (``'2024-01-31'``) as one; YAML reads unquoted ones."""
        if isinstance(value, str):
            for parse in (dt.date.fromisoformat, dt.datetime.fromisoformat):
                try:
                    return parse(value.strip())
                except ValueError:
                    continue
            raise ValueError(
                f"expected a number, a date or a timestamp (got {shown(value)})"
                f"{exponent_hint(value)}"
            )
        if isinstance(value, float) and not math.isfinite(value):
            raise ValueError(
                f"expected a finite number, a date or a timestamp (got {shown(value)})"
            )
        return value

    @model_validator(mode="after")
    def _bounds(self) -> Range:
        if self.min is None and self.max is None:
            raise ValueError("range needs min, max or both")
        if self.min is not None and self.max is not None:
            if _bound_kind(self.min) != _bound_kind(self.max):
                raise ValueError("min and max must both be numbers, dates or timestamps")
            low: Any = self.min  # the same kind, checked above
            if low > self.max:
                raise ValueError(f"min ({self.min}) is above max ({self.max})")
        return self


def _bound_kind(value: Any) -> str:
    if isinstance(value, dt.datetime):
        return "timestamp"
    if isinstance(value, dt.date):
        return "date"
    return "number"


class Schema(Kind):
    """``schema``: the columns the table must have, each with a type family or exact type."""

    KIND: ClassVar[str] = "schema"
    UNITS: ClassVar[frozenset[Unit]] = frozenset({"number", "rows"})
    COMPARED: ClassVar[str] = "problems"

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


KINDS: dict[str, type[Kind]] = {
    k.KIND: k
    for k in (
        RowCount,
        Missing,
        Duplicates,
        AcceptedValues,
        Relationships,
        Freshness,
        Range,
        Schema,
    )
}
"""Every typed kind by its YAML key, in the order the README lists them."""
