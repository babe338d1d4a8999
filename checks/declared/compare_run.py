"""One ``compare`` check run: its two sides found, its mode's queries on each, its result.

``resolve`` finds both sides (``checks.kinds.compare``): the other source
among the run's (``Sources``, ``SourcePool.get``), both tables, the key and the
columns on each side (every error at its field, with the closest name), and
each column's normal form from both sides' types (``checks.declared.row_text``).
``run_compare_check`` then runs the mode: ``counts`` (one ``count(*)`` per
side), ``aggregates`` (one statement per side: ``compare_aggregates``) or
``rows`` (``checks.declared.row_diff_bisect``). Every statement goes through
its side's ``Source.query`` (the guard, the read-only connection, the limits)
and is evidence: ``C<n>`` the first, ``C<n>.2``, ``C<n>.3``… the next; the
metric ``queries_by_side`` says which ran on which side.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass

from sqlglot import exp

from checks.automation.check import Check
from checks.declared import row_text
from checks.declared.catalog_names import parse_filter, resolve_column, resolve_table
from checks.declared.compare_aggregates import compare_aggregates
from checks.declared.compare_sides import PythonSide, Side, SideSpec, SqlSide
from checks.declared.row_diff_bisect import diff_rows
from checks.declared.typed_judge import fill_result
from checks.errors import CheckDefinitionError, QueryError, SourceError
from checks.fields.rules import did_you_mean
from checks.kinds.base import Clock, Counts, Kind
from checks.kinds.compare import SAMPLE_KEYS, Compare, keys_in_words
from checks.report import CheckOutcome, CheckResult, Evidence, Metrics
from checks.settings.limits import Limits
from checks.sources import QueryResult, Source
from checks.sources.base import Column, DataSet
from checks.sql.types import family

Sources = Callable[[str], Source]
"""The run's open sources by name (``SourcePool.get``); raises ``SourceError``."""


@dataclass
class Sides:
    """Both sides of a compare, resolved: ``table`` (left) and ``with`` (right)."""

    left: SideSpec
    right: SideSpec


def other_source(
    spec: Compare, source: Source, sources: Sources | None, names: Collection[str] | None
) -> Source:
    """The ``with`` side's source: the check's own when ``with.source`` is left out or the same.

    Raises:
        CheckDefinitionError: ``with.source`` is not configured (with the closest name).
        SourceError: it cannot be opened.
    """
    wanted = spec.with_.source
    if wanted is None or wanted == source.name:
        return source
    if names is not None and wanted not in names:
        known = ", ".join(sorted(names)) or "none"
        raise CheckDefinitionError(
            f"no source {wanted!r} is configured{did_you_mean(wanted, names)}; configured: {known}",
            field="compare.with.source",
        )
    if sources is None:
        raise SourceError(f"source {wanted!r} is not open here (only {source.name} is)")
    return sources(wanted)


def resolve(
    spec: Compare,
    source: Source,
    other: Source,
    *,
    timeout_s: float,
    told: Callable[[str, str, QueryResult], None],
    fetch_cap: int,
) -> Sides:
    """Both sides' tables, keys, columns and normal forms.

    Raises:
        CheckDefinitionError: a table, key or column missing on a side, at its field.
        SourceError: a catalog cannot be read.
    """
    left = resolve_table(spec.table, source.catalog(), "compare.table")
    where = f" (with: {other.name})"
    try:
        right = resolve_table(spec.other_table, other.catalog(), "compare.with.table")
    except CheckDefinitionError as exc:
        message = exc.message.replace("in this source", f"in source {other.name}")
        raise CheckDefinitionError(message, field=exc.field) from None

    def theirs(name: str, at: str) -> Column:
        try:
            return resolve_column(right, name, at)
        except CheckDefinitionError as exc:
            raise CheckDefinitionError(exc.message + where, field=at) from None

    keys = [resolve_column(left, k, f"compare.key.{i}") for i, k in enumerate(spec.key)]
    their_keys = [theirs(k.name, f"compare.key.{i}") for i, k in enumerate(keys)]
    given = spec.columns or []
    named: list[tuple[str, str]] = [(c, f"compare.columns.{i}") for i, c in enumerate(given)]
    if spec.columns is None:  # every column but the key, which the other side must have too
        taken = {k.name for k in keys}
        named = [(c.name, "compare.with") for c in left.columns if c.name not in taken]
    columns = [resolve_column(left, name, at) for name, at in named]
    their_columns = [theirs(c.name, at) for c, (_, at) in zip(columns, named, strict=True)]
    key_rules = [_rule(a, b, source, other) for a, b in zip(keys, their_keys, strict=True)]
    rules = [_rule(a, b, source, other) for a, b in zip(columns, their_columns, strict=True)]
    int_key = len(keys) == 1 and all(
        family(c.type, s.dialect) == "integer"
        for c, s in ((keys[0], source), (their_keys[0], other))
    )
    mine = parse_filter(spec.filter, source.dialect, "compare.filter") if spec.filter else None
    with_filter = spec.with_.filter
    yours = parse_filter(with_filter, other.dialect, "compare.with.filter") if with_filter else None

    def side(label: str, on: Source, data_set: DataSet, where_: exp.Expr | None,
             key_columns: list[Column], compared: list[Column]) -> SideSpec:  # fmt: skip
        return SideSpec(
            label=label,
            source=on,
            data_set=data_set,
            where=where_,
            keys=key_columns,
            key_rules=key_rules,
            columns=compared,
            rules=rules,
            int_key=int_key,
            timeout_s=timeout_s,
            told=lambda asked, found: told(label, asked, found),
            fetch_cap=fetch_cap,
        )

    return Sides(
        side("table", source, left, mine, keys, columns),
        side("with", other, right, yours, their_keys, their_columns),
    )


def check_other_side(
    spec: Kind, source: Source | None, sources: Sources | None, names: Collection[str] | None
) -> None:
    """What ``lookout validate`` checks of a ``compare``'s two sides (nothing of other kinds).

    Without ``source`` (``--no-sources``) only that ``with.source`` is configured.

    Raises:
        CheckDefinitionError: an unknown source, or a table, key or column missing, at its field.
        SourceError: the other source cannot be opened or read.
    """
    if not isinstance(spec, Compare):
        return
    if source is None:
        wanted = spec.with_.source
        if wanted is not None and names is not None and wanted not in names:
            known = ", ".join(sorted(names)) or "none"
            raise CheckDefinitionError(
                f"no source {wanted!r} is configured{did_you_mean(wanted, names)}; "
                f"configured: {known}",
                field="compare.with.source",
            )
        return
    other = other_source(spec, source, sources, names)
    resolve(spec, source, other, timeout_s=1.0, told=lambda *_: None, fetch_cap=1)


def _rule(a: Column, b: Column, left: Source, right: Source) -> row_text.Rule:
    return row_text.rule_for((a.type, left.dialect), (b.type, right.dialect))


def side_of(spec: SideSpec) -> Side:
    """The side as the row diff asks it: hashed in its SQL, else in Python."""
    return SqlSide(spec) if spec.dialect in row_text.HASHED_IN_SQL else PythonSide(spec)


def run_compare_check(
    check: Check,
    source: Source,
    limits: Limits,
    *,
    position: int,
    timeout_s: float,
    clock: Clock,
    sources: Sources | None = None,
    names: Collection[str] | None = None,
) -> tuple[CheckResult, list[Evidence]]:
    """Run one ``compare`` check; return its result and its evidence (``C<n>``, ``C<n>.2``…).

    Args:
        sources: the run's other sources by name (None: only ``source`` is open).
        names: the configured sources' names, for an unknown ``with.source``.

    A problem with the check or a failing query is an error on the check, never a pass.
    """
    spec = check.spec
    assert isinstance(spec, Compare)
    result = CheckResult(
        check.name, "", check.expectation.text, None, CheckOutcome.NOT_EVALUATED, kind=spec.KIND
    )
    evidence: list[Evidence] = []
    by_side: dict[str, list[str]] = {"table": [], "with": []}

    def told(label: str, asked: str, found: QueryResult) -> None:
        number = len(evidence) + 1
        ev_id = f"C{position}" if number == 1 else f"C{position}.{number}"
        by_side[label].append(ev_id)
        evidence.append(Evidence.of_result(found, evidence_id=ev_id, origin="check", limits=limits))
        if number == 1:
            result.sql, result.evidence_id = found.sql, ev_id

    try:
        other = other_source(spec, source, sources, names)
        sides = resolve(
            spec,
            source,
            other,
            timeout_s=timeout_s,
            told=told,
            fetch_cap=limits.fingerprint_max_rows,
        )
        metrics = _measure(spec, sides)
    except CheckDefinitionError as exc:
        return _errored(result, exc.message), evidence
    except (QueryError, SourceError) as exc:
        return _errored(result, str(exc)), evidence
    metrics["queries"] = len(evidence)
    metrics["queries_by_side"] = "; ".join(
        f"{label} ({name}): {', '.join(ids)}"
        for (label, ids), name in zip(by_side.items(), (source.name, other.name), strict=True)
    )
    both_empty = metrics["rows_in_scope"] == 0 and metrics["with_rows"] == 0
    scope = f"{sides.left.data_set.name} and {other.name}.{sides.right.data_set.name}"
    if both_empty and not check.allow_empty:
        result.metrics = metrics
        result.reason = f"0 rows on both sides: {scope}"
        return result, evidence
    counts = Counts(
        row=dict(metrics),
        metrics=metrics,
        in_scope=int(metrics["rows_in_scope"] or 0),
        scope=scope,
        table=sides.left.data_set.name,
        expect=check.expectation,
        source=source,
        clock=clock,
    )
    fill_result(result, spec.judged(counts), metrics, spec)
    if both_empty:
        result.reason = f"0 rows on both sides: {scope} (allowed: allow_empty)"
    return result, evidence


def _measure(spec: Compare, sides: Sides) -> Metrics:
    if spec.mode == "counts":
        ours, theirs = (_count(s) for s in (sides.left, sides.right))
        return {"rows_in_scope": ours, "with_rows": theirs, "differences": abs(ours - theirs)}
    if spec.mode == "aggregates":
        return compare_aggregates(sides.left, sides.right)
    return _rows(sides)


def _count(side: SideSpec) -> int:
    table = exp.Table(
        this=exp.to_identifier(side.data_set.name, quoted=True),
        alias=exp.TableAlias(this=exp.to_identifier("t")),
    )
    tree = exp.select(exp.alias_(exp.Count(this=exp.Star()), "row_count")).from_(table)
    if side.where is not None:
        tree = tree.where(side.where.copy())
    found = side.source.query(tree.sql(dialect=side.dialect), max_rows=1, timeout_s=side.timeout_s)
    side.told("count", found)
    return int(found.rows[0][0])


def _rows(sides: Sides) -> Metrics:
    left, right = side_of(sides.left), side_of(sides.right)
    found = diff_rows(left, right, int_key=sides.left.int_key)
    assert found.summaries is not None
    ours, theirs = found.summaries
    metrics: Metrics = {
        "rows_in_scope": ours.rows,
        "with_rows": theirs.rows,
        "missing": len(found.missing),
        "extra": len(found.extra),
        "different": len(found.different),
        "differences": len(found.missing) + len(found.extra) + len(found.different),
        "levels": found.levels,
        "rows_fetched": sum(found.rows_fetched),
        "hashed": ", ".join(
            f"{s.spec.label} in {'SQL' if isinstance(s, SqlSide) else 'Python'}"
            for s in (left, right)
        ),
        "sample_keys": SAMPLE_KEYS,
    }
    for name, keys in (
        ("missing", found.missing),
        ("extra", found.extra),
        ("different", found.different),
    ):
        if keys:
            shown = [row_text.key_shown(k) for k in keys]
            metrics[f"{name}_keys"] = keys_in_words(shown, len(keys))
    _samples(left, right, found.missing, found.extra, found.different, found.where)
    return metrics


def _samples(
    left: Side,
    right: Side,
    missing: list[str],
    extra: list[str],
    different: list[str],
    where: dict[str, tuple[int, int]],
) -> None:
    """Each side's rows of the first sampled keys, as evidence (a side hashed in Python: none)."""
    wanted = [
        (left, extra[:SAMPLE_KEYS] + different[:SAMPLE_KEYS]),
        (right, missing[:SAMPLE_KEYS] + different[:SAMPLE_KEYS]),
    ]
    for side, keys in wanted:
        ranges = sorted({where[k] for k in keys})
        side.values(ranges, keys)


def _errored(result: CheckResult, message: str) -> CheckResult:
    result.error = message
    result.outcome = CheckOutcome.ERROR
    return result
