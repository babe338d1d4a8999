"""An aggregate over only the rows where a condition holds, in each dialect.

Checks on one table whose ``WHERE`` clauses differ share one scan of the whole
table (``checks.declared.scan_plan``): each aggregate of a check with a
``WHERE`` carries that condition as its own filter. SQL:2003's filter clause,
``agg(x) FILTER (WHERE c)``, means exactly "``agg(x)`` over the rows where ``c``
holds" for every aggregate; a dialect without it gets ``agg(CASE WHEN c THEN x
END)``, which means the same only for aggregates that skip NULLs.
"""

from __future__ import annotations

from sqlglot import exp

FILTER_DIALECTS = frozenset({"postgres", "duckdb", "sqlite", "spark", "databricks", "trino"})
"""Dialects whose aggregates take ``FILTER (WHERE …)`` (SQL:2003's filter clause;
SQLite since 3.30, Spark since 3.0). Others get ``CASE`` (sqlglot writes ``FILTER``
unchanged for MySQL and ClickHouse, which refuse it)."""

CASE_AGGREGATES = (exp.Count, exp.Sum, exp.Avg, exp.Min, exp.Max)
"""Aggregates of one argument that skip NULLs: ``agg(CASE WHEN c THEN x END)`` is
``agg(x)`` over the rows where ``c`` holds (``count(*)`` becomes ``count(CASE WHEN
c THEN 1 END)``)."""

NAMES_BY_FUNCTION = frozenset({"postgres"})
"""Dialects naming a column not named by its outermost function (PostgreSQL's
``FigureColname``), which a filter on an aggregate does not change."""


def filtered(value: exp.Expr, where: exp.Expr, dialect: str) -> exp.Expr:
    """A copy of ``value`` with each of its aggregates over only the rows where ``where`` holds.

    ``FILTER (WHERE …)`` in ``FILTER_DIALECTS`` (an aggregate already filtered
    keeps both conditions); elsewhere the argument in ``CASE WHEN where THEN …
    END``, which only ``case_safe`` projections may take.
    """
    holder_of_root = exp.Paren(this=value.copy())  # so an aggregate at the root can be replaced
    for agg in list(holder_of_root.find_all(exp.AggFunc)):
        if dialect in FILTER_DIALECTS:
            holder = agg.parent
            if isinstance(holder, exp.Filter):  # already filtered: both conditions
                kept = holder.expression
                kept.set("this", exp.and_(kept.this, where.copy()))
            else:
                agg.replace(exp.Filter(this=agg.copy(), expression=exp.Where(this=where.copy())))
            continue
        inner = agg.this
        target = inner.expressions[0] if isinstance(inner, exp.Distinct) else inner
        taken = exp.Literal.number(1) if isinstance(target, exp.Star) else target.copy()
        case = exp.Case(ifs=[exp.If(this=where.copy(), true=taken)])
        if isinstance(inner, exp.Distinct):
            inner.set("expressions", [case])
        else:
            agg.set("this", case)
    out: exp.Expr = holder_of_root.this
    return out


def case_safe(projection: exp.Expr) -> bool:
    """Whether every aggregate in ``projection`` is one of ``CASE_AGGREGATES``, one argument."""
    for agg in projection.find_all(exp.AggFunc):
        if not isinstance(agg, CASE_AGGREGATES) or isinstance(agg.parent, exp.Filter):
            return False
        if any(v for k, v in agg.args.items() if k not in ("this", "big_int")):
            return False  # a second argument (``big_int``: sqlglot's COUNT flag, no argument)
        inner = agg.this
        if isinstance(inner, exp.Distinct) and len(inner.expressions) != 1:
            return False
        if inner is None:
            return False
    return True
