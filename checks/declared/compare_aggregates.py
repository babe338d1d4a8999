"""``compare``'s ``aggregates`` mode: per column, the same aggregates on both sides, compared.

One statement per side, every compared column's aggregates in it:
``count(*)``; per column the non-NULL values (``count``), the NULLs (the
rows less those), the distinct values (``count(DISTINCT …)``, text without
trailing spaces) and, for numbers, ``sum``, ``min`` and ``max``; for dates and
timestamps ``min`` and ``max``. Each value is compared in its column's normal
form (``checks.declared.row_text.py_text``: a sum at the column's scale, a
timestamp in UTC), so ``10.5`` and ``10.50`` agree. SQLite sums REALs: its
sums are rounded to the scale like every other's.
"""

from __future__ import annotations

from typing import Any

from sqlglot import exp

from checks.declared import row_text
from checks.declared.compare_sides import SideSpec
from checks.declared.row_text import Rule
from checks.report import Metrics
from checks.sql.types import family

SHOWN = 5
"""Differing aggregates named in the result at most (then ``and N more``)."""


def _aggregates(side: SideSpec) -> tuple[list[exp.Expr], list[tuple[str, Rule | None]]]:
    """One side's projections, each one's name (``amount.sum``) and rule (None: a count).

    Each projection is named in the evidence after its column and aggregate
    (``amount__sum``; ``row_count`` the rows), a quoted identifier sqlglot
    escapes: an aggregate's name holds no ``_``, so no two names meet.
    """
    projections: list[exp.Expr] = [exp.alias_(exp.Count(this=exp.Star()), "row_count")]
    named: list[tuple[str, Rule | None]] = [("rows", None)]

    def add(column: str, aggregate: str, tree: exp.Expr, rule: Rule | None) -> None:
        projections.append(exp.alias_(tree, f"{column}__{aggregate}", quoted=True))
        named.append((f"{column}.{aggregate}", rule))

    for column, rule in zip(side.columns, side.rules, strict=True):
        ref = exp.column(column.name, table="t", quoted=True)
        have = family(column.type, side.dialect)
        distinct = exp.func("RTRIM", ref.copy()) if have == "text" else ref.copy()
        add(column.name, "count", exp.Count(this=ref.copy()), None)
        add(column.name, "distinct", exp.Count(this=exp.Distinct(expressions=[distinct])), None)
        if rule.form == "number":
            summed: exp.Expr = ref.copy()
            if side.dialect != "sqlite":  # SQLite has no DECIMAL: its sum is a REAL
                fixed = exp.DataType.build(f"DECIMAL(38, {rule.scale})")
                summed = exp.cast(ref.copy(), fixed)
            add(column.name, "sum", exp.Sum(this=summed), rule)
            add(column.name, "min", exp.Min(this=ref.copy()), rule)
            add(column.name, "max", exp.Max(this=ref.copy()), rule)
        elif rule.form in ("timestamp", "date"):
            add(column.name, "min", exp.Min(this=ref.copy()), rule)
            add(column.name, "max", exp.Max(this=ref.copy()), rule)
    return projections, named


def _run(side: SideSpec) -> list[tuple[str, str | None]]:
    projections, named = _aggregates(side)
    table = exp.Table(
        this=exp.to_identifier(side.data_set.name, quoted=True),
        alias=exp.TableAlias(this=exp.to_identifier("t")),
    )
    tree = exp.select(*projections).from_(table)
    if side.where is not None:
        tree = tree.where(side.where.copy())
    found = side.source.query(tree.sql(dialect=side.dialect), max_rows=1, timeout_s=side.timeout_s)
    side.told("aggregates", found)
    row: list[Any] = list(found.rows[0])
    out = [(name, _text(value, rule)) for (name, rule), value in zip(named, row, strict=True)]
    total = int(row[0])
    for index, (name, _) in enumerate(named):
        if name.endswith(".count"):  # the NULLs, beside each count of values
            out.append((name.replace(".count", ".nulls"), str(total - int(row[index]))))
    return out


def _text(value: Any, rule: Rule | None) -> str | None:
    if rule is None:
        return None if value is None else str(int(value))
    return row_text.py_text(value, rule)


def compare_aggregates(left: SideSpec, right: SideSpec) -> Metrics:
    """Both sides' aggregates compared: ``aggregates_compared``, ``differences``, ``differing``.

    Raises:
        QueryError: a side's statement failed.
    """
    ours, theirs = dict(_run(left)), dict(_run(right))
    names = [n for n in ours if n != "rows"]
    differing = [f"{n}: {ours[n]} vs {theirs[n]}" for n in names if ours[n] != theirs[n]]
    metrics: Metrics = {
        "rows_in_scope": int(ours["rows"] or 0),
        "with_rows": int(theirs["rows"] or 0),
        "aggregates_compared": len(names) + 1,
        "differences": len(differing) + (ours["rows"] != theirs["rows"]),
    }
    if ours["rows"] != theirs["rows"]:
        differing.insert(0, f"rows: {ours['rows']} vs {theirs['rows']}")
    if differing:
        more = len(differing) - SHOWN
        metrics["differing"] = "; ".join(differing[:SHOWN]) + (
            f" and {more} more" if more > 0 else ""
        )
    return metrics
