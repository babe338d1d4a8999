"""``compare``: a table reconciled with another (on the same source or another engine).

::

    compare: {table, with: {source?, table?, filter?}, key: [..], columns?: [..],
              mode?: counts|aggregates|rows, filter?}                 expect "== 0"

``with.source`` is another configured source (left out: the check's own),
``with.table`` its table (left out: the same name). ``filter`` applies to
``table``, ``with.filter`` to the other side, each in its own dialect.
``columns`` left out: every column of ``table`` but the key, which the other
side must have too; given, it is not empty, names no key column, and is not
taken by mode ``counts`` (which compares row counts only).

Modes, each judged on ``differences`` (``== 0`` unless said):

- ``counts``: rows on each side; ``differences`` is how many apart.
- ``aggregates``: per column, the count of non-NULL values, NULLs and distinct
  values, and for numbers sum, min and max (for dates and timestamps min and
  max), each side's normal form compared; ``differences`` is how many differ.
- ``rows`` (the default): keys in ``with`` only (``missing``), in ``table``
  only (``extra``), and rows on both whose columns differ (``different``);
  found by hashing key ranges and cutting only those whose hashes differ
  (``checks.declared.row_diff_bisect``); samples of each, 10 keys at most.

NULL rule: a NULL equals a NULL and nothing else (in a column and in a key).
Values are compared in a normal form, the same on every engine
(``checks.declared.row_text``: decimals at the larger scale, timestamps in
UTC, trailing spaces dropped). Both sides empty: not evaluated (unless
``allow_empty``); one side empty: compared, every row of the other differs.
Metrics: ``rows_in_scope`` (``table``'s rows), ``with_rows``, ``differences``,
and per mode ``missing``, ``extra``, ``different`` with ``missing_keys``,
``extra_keys``, ``different_keys`` (text), or ``aggregates_compared`` and
``differing`` (text).
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationInfo,
    field_validator,
    model_validator,
)

from checks.fields.expectation import Unit
from checks.fields.rules import did_you_mean, fail_here, not_blank
from checks.kinds.base import Compiled, Counts, Judged, Kind, Loc, Scope
from checks.kinds.in_words import metric, rows
from checks.kinds.row_count import in_scope
from checks.report import CheckResult

MODES = ("counts", "aggregates", "rows")
SAMPLE_KEYS = 10
"""Keys a sample of ``missing``, ``extra`` or ``different`` names at most."""


class CompareWith(BaseModel):
    """``with:``: the other side (source, table and filter; each left out: the check's own)."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    source: str | None = None
    table: str | None = None
    filter: str | None = None

    @field_validator("source", "table", "filter")
    @classmethod
    def _named(cls, value: str | None) -> str | None:
        return (
            None if value is None else not_blank(value.strip(), "must not be empty; leave it out")
        )


class Compare(Kind):
    """``compare``: a table reconciled with another, by counts, aggregates or rows."""

    model_config = ConfigDict(populate_by_name=True)

    KIND: ClassVar[str] = "compare"
    UNITS: ClassVar[frozenset[Unit]] = frozenset({"number"})
    COMPARED: ClassVar[str] = "differences"
    OWN_RUN: ClassVar[bool] = True
    BY: ClassVar[bool] = False  # each side is its own query plan, never a GROUP BY
    NO_BY: ClassVar[str] = "it compares two queries' results, not segments of one table"

    with_: CompareWith = Field(alias="with")
    key: list[str] = Field(default_factory=list)
    columns: list[str] | None = None  # None: every column but the key
    mode: str = "rows"

    @field_validator("mode")
    @classmethod
    def _mode(cls, value: str) -> str:
        if value not in MODES:
            raise ValueError(
                f"mode is one of {', '.join(MODES)}; got {value!r}{did_you_mean(value, MODES)}"
            )
        return value

    @field_validator("key", "columns")
    @classmethod
    def _names(cls, value: list[str] | None, info: ValidationInfo) -> list[str] | None:
        if value is None:
            return None
        if info.field_name == "columns" and not value:
            raise ValueError(
                "columns is empty: leave it out to compare every column but the key, "
                "or name the columns to compare"
            )
        for name in value:
            not_blank(name.strip(), "must name a column")
        if len(set(value)) < len(value):
            raise ValueError("names a column twice")
        return [name.strip() for name in value]

    @model_validator(mode="after")
    def _needs_key(self) -> Compare:
        if self.mode == "counts" and self.columns is not None:
            raise fail_here(
                "mode counts compares row counts only: leave 'columns' out, "
                "or use mode aggregates or rows to compare columns",
                ("columns",),
            )
        for index, name in enumerate(self.columns or []):
            if name in self.key:
                raise fail_here(
                    f"column {name!r} is in key: a key column is matched, never compared; "
                    "leave it out of columns",
                    ("columns", index),
                )
        if self.mode == "rows" and not self.key:
            raise ValueError("mode rows needs 'key': the columns that identify a row on both sides")
        same = self.with_.source is None and self.with_.table in (None, self.table)
        if same and self.with_.filter is None:
            raise ValueError("'with' names the same table on the same source: nothing to compare")
        return self

    @property
    def other_table(self) -> str:
        """The other side's table."""
        return self.with_.table or self.table

    @property
    def columns_used(self) -> list[str]:
        """The key and the compared columns, of ``table``."""
        return [*self.key, *(self.columns or [])]

    def sql(self, scope: Scope) -> Compiled:
        """``table``'s rows in scope (the run's other statements are ``compare_run``'s)."""
        for index, name in enumerate(self.key):
            scope.column(name, f"key.{index}")
        for index, name in enumerate(self.columns or []):
            scope.column(name, f"columns.{index}")
        counts = scope.scoped(in_scope())
        return scope.done(counts, None, None)

    def judged(self, counts: Counts) -> Judged:
        """``differences`` against ``expect``."""
        return counts.judge_compared(self, sample_rows=0)

    @classmethod
    def words(cls, result: CheckResult) -> str:
        """``2 missing, 1 extra, 3 different, of 1,000 rows and 999 in with``, and the like."""
        ours, theirs = metric(result, "rows_in_scope"), metric(result, "with_rows")
        sides = f"{rows(ours)} in table, {rows(theirs)} in with"
        if "aggregates_compared" in result.metrics:
            compared, differing = (
                metric(result, "aggregates_compared"),
                metric(result, "differences"),
            )
            said = f"{differing:,} of {compared:,} aggregates differ ({sides})"
            listed = result.metrics.get("differing")
            return f"{said}: {listed}" if listed else said
        if "missing" not in result.metrics:
            return f"{sides}: {metric(result, 'differences'):,} apart"
        parts = []
        for name in ("missing", "extra", "different"):
            count = metric(result, name)
            keys = result.metrics.get(f"{name}_keys")
            parts.append(f"{count:,} {name}" + (f" ({keys})" if keys else ""))
        return f"{', '.join(parts)}; {sides}"

    def column_problems(self, column_type: str, have: str) -> list[tuple[Loc, str]]:
        """None here: both sides' columns are checked by ``compare_run.resolve``."""
        return []


def keys_in_words(keys: list[str], total: int) -> str:
    """The first ``SAMPLE_KEYS`` keys, and how many more (``1, 2, 3 and 7 more``)."""
    shown = ", ".join(keys[:SAMPLE_KEYS])
    more = total - min(total, SAMPLE_KEYS)
    return f"{shown} and {more:,} more" if more else shown
