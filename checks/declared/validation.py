"""An automation's declared checks checked against their source before anything runs.

``validate_checks`` is what ``lookout validate`` adds to loading a file: for
each raw query, the SQL guard, parsing in the source's dialect and the
catalog's tables and columns (``checks.sql.catalog_check``), then the lint
(``checks.sql.lint``) as warnings, and a warning when it reads no table (a
check that looks at no data); for each typed check, its table and
columns against the catalog (with the closest name), its ``filter:`` like a
query, its ``over:`` column as a run builds its buckets, and what its kind
needs of its column's type (``Kind.column_problems``: a timestamp for
``freshness``, numbers or dates for ``range``, listed values a number column
can hold).

Every problem is an ``AutomationError`` pointing into the YAML: the file,
the line and column inside the SQL where known (else where the value
starts), and the field (``checks.0.sql``, ``checks.2.missing.column``).
Without the source (``source=None``, ``lookout validate --no-sources``) only
what needs no catalog is checked.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field

import sqlglot

from checks.automation.check import Check
from checks.automation.loader import LoadResult
from checks.automation.model import Automation
from checks.automation.time_buckets import Over
from checks.declared.buckets import window
from checks.declared.compare_run import Sources, check_other_side
from checks.declared.compile import compile_check
from checks.errors import AutomationError, CheckDefinitionError, SourceError
from checks.fields.yaml_tree import Loc
from checks.kinds.base import Kind
from checks.sources import Source
from checks.sources.base import Column, DataSet
from checks.sql.catalog_check import QueryProblem, check_condition, check_query
from checks.sql.lint import LintWarning, lint, lint_condition
from checks.sql.tables import tables_read
from checks.sql.types import family


@dataclass
class Validation:
    """What ``validate_checks`` found in one automation."""

    errors: list[AutomationError] = field(default_factory=list)
    warnings: list[AutomationError] = field(default_factory=list)


def validate_checks(
    automation: Automation,
    loaded: LoadResult,
    *,
    source: Source | None,
    dialect: str,
    max_sql_chars: int = 20_000,
    sources: Sources | None = None,
    source_names: Collection[str] | None = None,
) -> Validation:
    """Check every declared check of ``automation`` against its source.

    Args:
        automation: a good automation of ``loaded``.
        loaded: where its values are in its file (``LoadResult.places``).
        source: the open source, or None to check only what needs no catalog.
        dialect: the source's sqlglot dialect (known from the settings even
            when the source is not opened).
        max_sql_chars: the longest query the source accepts.
        sources: the other sources by name (``SourcePool.get``), for a ``compare``'s
            ``with.source``: its table and columns are checked there too.
        source_names: the configured sources' names (an unknown one is named closest).

    Raises:
        SourceError: the source's catalog cannot be read.

    """
    catalog = source.catalog() if source is not None else None
    schema = source.schema if source is not None else None
    found = Validation()
    context = _Context(automation, loaded, found, dialect, catalog, schema, max_sql_chars)
    context.source, context.sources, context.names = source, sources, source_names
    for index, check in enumerate(automation.checks):
        context.check(index, check)
    return found


@dataclass
class _Context:
    automation: Automation
    loaded: LoadResult
    found: Validation
    dialect: str
    catalog: Sequence[DataSet] | None
    schema: str | None
    max_sql_chars: int
    source: Source | None = None
    sources: Sources | None = None
    names: Collection[str] | None = None

    def report(
        self,
        into: list[AutomationError],
        loc: Loc,
        message: str,
        line: int | None = None,
        column: int | None = None,
    ) -> None:
        where = self.loaded.place_of(self.automation, loc)
        at_line, at_column = where.inside(line, column)
        into.append(
            AutomationError(
                message,
                path=self.automation.path,
                line=at_line,
                column=at_column,
                field=".".join(str(part) for part in loc),
            )
        )

    def problems(self, loc: Loc, found: Sequence[QueryProblem]) -> None:
        for problem in found:
            self.report(self.found.errors, loc, problem.message, problem.line, problem.column)

    def lints(self, loc: Loc, found: Sequence[LintWarning]) -> None:
        for warning in found:
            self.report(self.found.warnings, loc, warning.message, warning.line, warning.column)

    def check(self, index: int, check: Check) -> None:
        spec = check.spec
        if spec is None:
            assert check.sql is not None
            loc: Loc = ("checks", index, "sql")
            problems = check_query(
                check.sql,
                dialect=self.dialect,
                catalog=self.catalog,
                schema=self.schema,
                max_chars=self.max_sql_chars,
            )
            self.problems(loc, problems)
            if not problems:
                self.lints(loc, self.lint(check.sql))
                if not _reads_a_table(check.sql, self.dialect):
                    self.report(
                        self.found.warnings,
                        loc,
                        "the query reads no table of the source: its result does not depend "
                        "on the data, so it is the same on every run",
                        1,
                        1,
                    )
            return
        self.typed(index, spec, check.over)

    def lint(self, sql: str) -> list[LintWarning]:
        return lint(
            sql, dialect=self.dialect, catalog=self.catalog, timezone=self.automation.timezone
        )

    def typed(self, index: int, spec: Kind, over: Over | None) -> None:
        base: Loc = ("checks", index, spec.KIND)
        catalog = self.catalog if self.catalog is not None else _assumed(spec)
        # ``over:`` is compiled as a run compiles it (its column must be a time column), with
        # the window of now; without a catalog its column's type is not known.
        if self.catalog is None:
            over = None
        found = window(over, self.automation.timezone, dt.datetime.now(dt.UTC)) if over else None
        try:
            compiled = compile_check(
                spec, catalog, self.dialect, sample_rows=1, over=over, buckets=found
            )
        except CheckDefinitionError as exc:
            parts = (exc.field or spec.KIND).split(".")
            where = ("checks", index, *(int(p) if p.isdigit() else p for p in parts))
            self.report(self.found.errors, where, exc.message)
            return
        if spec.filter:
            where = (*base, "filter")
            problems = check_condition(
                spec.filter,
                table=compiled.table,
                dialect=self.dialect,
                catalog=self.catalog,
                schema=self.schema,
            )
            self.problems(where, problems)
            if problems:
                return
            self.lints(
                where,
                lint_condition(
                    spec.filter,
                    table=compiled.table,
                    dialect=self.dialect,
                    catalog=self.catalog,
                    timezone=self.automation.timezone,
                ),
            )
        for sql in (compiled.counts_sql, compiled.sample_sql):
            if sql is not None:  # Lookout's own SQL: a refusal here is a bug worth seeing
                self.problems(
                    base,
                    check_query(
                        sql,
                        dialect=self.dialect,
                        catalog=self.catalog,
                        schema=self.schema,
                        max_chars=self.max_sql_chars,
                    ),
                )
        if self.catalog is not None:
            self.column_kind(base, spec, compiled.column_type)
        if spec.OWN_RUN:
            self.other_side(index, spec)

    def other_side(self, index: int, spec: Kind) -> None:
        """A ``compare``'s other side: its source configured, its table and columns there."""
        try:
            check_other_side(spec, self.source, self.sources, self.names)
        except CheckDefinitionError as exc:
            parts = (exc.field or spec.KIND).split(".")
            where = ("checks", index, *(int(p) if p.isdigit() else p for p in parts))
            self.report(self.found.errors, where, exc.message)
        except SourceError as exc:
            self.report(self.found.errors, ("checks", index, spec.KIND, "with", "source"), str(exc))

    def column_kind(self, base: Loc, spec: Kind, column_type: str | None) -> None:
        have = family(column_type, self.dialect) if column_type else None
        if column_type is None or have is None:
            return
        for where, message in spec.column_problems(column_type, have):
            self.report(self.found.errors, (*base, *where), message)


def _reads_a_table(sql: str, dialect: str) -> bool:
    """Whether a query that passed the guard reads a data set (CTEs and ``range()`` are none)."""
    try:
        return bool(tables_read(sqlglot.parse_one(sql, read=dialect), dialect))
    except Exception:  # the guard parsed it; should sqlglot differ, say nothing
        return True


def _assumed(spec: Kind) -> list[DataSet]:
    """A catalog holding just what the check names, to compile it with no source at hand."""
    return [
        DataSet(table, tuple(Column(name, "") for name in dict.fromkeys(columns)), 0)
        for table, columns in spec.tables_read().items()
    ]
