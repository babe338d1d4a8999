"""What every typed check kind is and implements: its YAML model and its four parts.

A kind is a pydantic model (a subclass of ``Kind``) whose fields are its YAML
keys, with their defaults; its docstring gives its NULL rule. Besides its
keys, each kind implements four parts, each called through the registry
(``checks.kinds.registry``), never by name:

=================  =====================================================================
part               what it gives
=================  =====================================================================
``sql``            its counts query and the sample of its violations, as sqlglot trees
                   over the check's scope (``Scope``, ``checks.kinds.scope``), in the
                   source's dialect
``judged``         its counts judged: the outcome, a reason, the sample's size
``words``          a judged result in words (``12 of 1,000 rows missing (1.20 %)``)
``column_problems`` what it needs of its column's type, checked against the catalog
=================  =====================================================================

``check_every_part`` (used by a test) says which part a kind left out, so a
kind missing one fails there rather than silently at run time.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

from pydantic import (
    BaseModel,
    ConfigDict,
    SerializerFunctionWrapHandler,
    field_validator,
    model_serializer,
)

from checks.fields.expectation import Expectation, Unit
from checks.fields.judgement import Judgement, judge_count
from checks.fields.rules import not_blank
from checks.kinds.scope import Compiled as Compiled
from checks.kinds.scope import Scope as Scope
from checks.report import CheckResult, Metrics
from checks.sources import Source

Clock = Callable[[], dt.datetime]
"""The current time, zone-aware."""

Loc = tuple[str | int, ...]
"""A place under a kind's mapping: ``("column",)``, ``("values", 2)``."""

PARTS = ("sql", "judged", "words", "column_problems")
"""The parts every kind implements (the methods ``Kind`` leaves undone)."""


class Judged:
    """What judging found: the outcome, a reason, and how many rows the sample would hold."""

    def __init__(self, outcome: Judgement, reason: str | None = None, sample_rows: int = 0) -> None:
        self.outcome = outcome
        self.reason = reason
        self.sample_rows = sample_rows


@dataclass
class Counts:
    """One row of a check's counts, read as its metrics, with what judging them needs.

    Attributes:
        row: the counts row as the source gave it (``latest`` as a value).
        metrics: the row as metrics; a kind adds the ones it derives.
        in_scope: ``rows_in_scope``.
        scope: the scope in words.
        table: the data set read, as the catalog names it.
        expect: the check's expectation.
        source: the source (``schema`` reads its live columns).
        clock: the current time (``freshness`` measures ages from it).
    """

    row: dict[str, Any]
    metrics: Metrics
    in_scope: int
    scope: str
    table: str
    expect: Expectation
    source: Source
    clock: Clock

    def count(self, name: str) -> int:
        """The metric ``name`` as a whole number (0 when absent or not a number)."""
        value = self.metrics.get(name)
        return int(value) if isinstance(value, int | float) else 0

    def judge_compared(self, kind: Kind, sample_rows: int) -> Judged:
        """The kind's compared count judged against ``expect`` (a percent of the scope)."""
        self.metrics["compared"] = kind.compared
        count = self.count(kind.compared)
        total = self.in_scope if kind.compared != "rows_in_scope" else None
        return Judged(judge_count(self.expect, count, total), sample_rows=sample_rows)


def all_null(column: str, counts: Counts) -> str | None:
    """Why nothing was compared when ``column`` is NULL in every row in scope, else None.

    For the kinds whose ``null: allowed`` leaves NULLs out of the comparison.
    """
    if counts.count("null_values") < counts.in_scope:
        return None
    return f"{column} is NULL in all {counts.in_scope} rows in scope: {counts.scope}"


class Kind(BaseModel):
    """What every kind has: the table, the optional ``filter``, and its rules.

    Class attributes (not YAML keys):
        KIND: the YAML key.
        UNITS: the expectation units it can be compared with.
        DEFAULT_EXPECT: the expectation when ``expect`` is not given.
        COMPARED: the metric the expectation compares by default.
        OVER: whether it takes ``over:`` (its metrics are counts, 0 over an empty bucket).
        MEASURES_EMPTY: whether an empty tested bucket is itself its measurement.
        SHOWS_ITS_PERCENT: whether its words already give the compared count as a percent.
        UNDEFINED_WHEN_EMPTY: whether its value over no rows is undefined, so an empty
            scope is not evaluated even with ``allow_empty`` (``aggregate``).
        BY: whether it takes ``by:`` (segments, ``checks.declared.segments``).
        NO_BY: why it does not, the error's words after ``<kind> does not take by:``.
        OWN_RUN: whether it runs its own queries, on more than one source
            (``compare``: ``checks.declared.compare_run``), rather than one counts query.

    ``by`` (a YAML key of every kind that takes it) lists the columns whose
    values cut the scope into segments, each judged alone.
    """

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    KIND: ClassVar[str] = ""
    UNITS: ClassVar[frozenset[Unit]] = frozenset({"number", "percent", "rows", "anomaly"})
    DEFAULT_EXPECT: ClassVar[str] = "== 0"
    COMPARED: ClassVar[str] = "violations"
    OVER: ClassVar[bool] = False
    MEASURES_EMPTY: ClassVar[bool] = False
    SHOWS_ITS_PERCENT: ClassVar[bool] = False
    UNDEFINED_WHEN_EMPTY: ClassVar[bool] = False
    BY: ClassVar[bool] = True
    NO_BY: ClassVar[str] = "it is about the table as a whole, not its rows"
    OWN_RUN: ClassVar[bool] = False

    table: str
    filter: str | None = None
    by: list[str] | None = None

    @field_validator("by", mode="before")
    @classmethod
    def _by_one(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value  # ``by: region`` is one column

    @field_validator("by")
    @classmethod
    def _by(cls, value: list[str] | None) -> list[str] | None:
        if value is None:
            return None
        if not cls.BY:
            raise ValueError(f"{cls.KIND} does not take by: {cls.NO_BY}")
        return segment_columns(value)

    @model_serializer(mode="wrap")
    def _without_by(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """Dump the kind; ``by`` only when given (a check without it dumps as it always did)."""
        data: dict[str, Any] = handler(self)
        if self.by is None:
            data.pop("by", None)
        return data

    @field_validator("table")
    @classmethod
    def _table(cls, value: str) -> str:
        return not_blank(value.strip(), "must name a table")

    @field_validator("filter")
    @classmethod
    def _filter(cls, value: str | None) -> str | None:
        return None if value is None else not_blank(value, "must not be empty; leave it out")

    def default_expect(self) -> str:
        """The expectation text used when the check gives none.

        Raises:
            ValueError: the kind has no default without one of its keys.
        """
        return self.DEFAULT_EXPECT

    def expect_conflict(self) -> str | None:
        """Why a written ``expect`` cannot stand beside this kind's keys, or None."""
        return None

    def unit_mismatch(self, text: str, unit: str) -> str:
        """Why ``expect`` (``text``, comparing ``unit``) cannot be compared with this kind."""
        wanted = {
            "number": "a number ('== 0')",
            "percent": "a percent ('<= 1%')",
            "rows": "'empty' / 'not empty'",
            "duration": "a duration ('< 3h')",
            "anomaly": "'anomaly'",
        }
        names = [
            wanted[u]
            for u in ("number", "percent", "duration", "rows", "anomaly")
            if u in self.UNITS
        ]
        allowed = " or ".join([", ".join(names[:-1]), names[-1]] if len(names) > 1 else names)
        what = {
            "number": "a number",
            "percent": "a percent",
            "duration": "a duration",
            "boolean": "a boolean",
            "rows": "rows",
            "anomaly": "against its history",
        }[unit]
        return f"{self.KIND} is compared with {allowed}; '{text}' compares {what}"

    @property
    def compared(self) -> str:
        """The metric the expectation compares."""
        return self.COMPARED

    @property
    def columns_used(self) -> list[str]:
        """The columns of ``table`` this check reads (for validation)."""
        return []

    def tables_read(self) -> dict[str, list[str]]:
        """Every table the check reads, with the columns it reads of each (``by:``'s too)."""
        return {self.table: [*self.columns_used, *(self.by or [])]}

    # The four parts each kind implements.

    def sql(self, scope: Scope) -> Compiled:
        """Its counts query (``rows_in_scope`` first) and the sample of its violations.

        Raises:
            CheckDefinitionError: a name not in the catalog (from ``scope``).
        """
        raise NotImplementedError(f"{self.KIND} has no SQL")

    def judged(self, counts: Counts) -> Judged:
        """Its counts judged: the outcome, a reason, the sample's size."""
        raise NotImplementedError(f"{self.KIND} has no judgement")

    @classmethod
    def words(cls, result: CheckResult) -> str:
        """What a judged result of this kind measured, in words, from its metrics."""
        raise NotImplementedError(f"{cls.KIND} has no words")

    def column_problems(self, column_type: str, have: str) -> list[tuple[Loc, str]]:
        """What is wrong with its column's type for it: places under the kind, and messages.

        Args:
            column_type: the column's type as the catalog names it.
            have: its family (``checks.sql.types.family``): ``integer``, ``text``, ….
        """
        raise NotImplementedError(f"{self.KIND} has no column rules")

    # Hooks with a default, for the kinds whose NULL rule or empty scope differ.

    def nothing_compared(self, counts: Counts) -> str | None:
        """Why no value in a non-empty scope was compared (every row skipped by its NULL rule)."""
        return None

    def unmeasured(self, metrics: Metrics) -> None:
        """Set the metrics an empty scope leaves unmeasured (as None)."""


class OneColumn(Kind):
    """A kind about one ``column`` of its table."""

    column: str

    @field_validator("column")
    @classmethod
    def _column(cls, value: str) -> str:
        return not_blank(value.strip(), "must name a column")

    @property
    def columns_used(self) -> list[str]:
        """The columns of ``table`` this check reads (for validation)."""
        return [self.column]


MAX_BY_COLUMNS = 4
"""At most this many ``by:`` columns (each segment is one value of each)."""


def segment_columns(names: list[str]) -> list[str]:
    """``by:``'s columns, stripped: at least one, at most ``MAX_BY_COLUMNS``, none twice.

    Raises:
        ValueError: an empty list or name, too many, or a name listed twice (any case).
    """
    if not names:
        raise ValueError("by: lists at least one column; leave it out for the whole scope")
    if len(names) > MAX_BY_COLUMNS:
        raise ValueError(f"by: lists at most {MAX_BY_COLUMNS} columns (got {len(names)})")
    cleaned = [not_blank(name.strip(), "must name a column") for name in names]
    if len({c.lower() for c in cleaned}) != len(cleaned):
        raise ValueError("by: lists a column twice")
    return cleaned


def missing_parts(kind: type[Kind]) -> list[str]:
    """The parts (``PARTS``) that neither ``kind`` nor a kind between it and ``Kind`` implements."""
    own = [c for c in kind.__mro__ if isinstance(c, type) and issubclass(c, Kind) and c is not Kind]
    return [part for part in PARTS if not any(part in c.__dict__ for c in own)]
