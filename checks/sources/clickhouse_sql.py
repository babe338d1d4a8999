"""A checked query's result columns as SQL types them, where ClickHouse types them otherwise.

ClickHouse answers a comparison with ``UInt8`` (1 or 0) and the difference of two
timestamps with a number of seconds (``Decimal``), where SQL (DuckDB, PostgreSQL) gives
a boolean and an interval; a raw check's ``expect: is true`` or ``expect: < 3h`` would
then read a number. ``sql_results`` rewrites only the outermost query's result columns,
through sqlglot: a predicate becomes ``CAST(… AS Bool)``, and ``a - b`` of two timestamps
(typed from the catalog by sqlglot's ``annotate_types``) becomes
``toIntervalMicrosecond(dateDiff('microsecond', b, a))``, which the driver then reads
as a ``timedelta`` (``checks.sources.clickhouse_query.read_rows``). The rewrite adds
casts and date arithmetic only, and runs after the guard. Sources: ClickHouse docs,
"Comparison functions" (UInt8 results), "Operators" (``DateTime - DateTime``),
"dateDiff".
"""

from __future__ import annotations

import functools
from collections.abc import Mapping

import sqlglot
from sqlglot import exp
from sqlglot.optimizer.annotate_types import annotate_types
from sqlglot.optimizer.qualify import qualify

_PREDICATES = (exp.Predicate, exp.Connector, exp.Not)
_TIMESTAMPS = frozenset(
    {exp.DType.DATETIME, exp.DType.DATETIME64, exp.DType.TIMESTAMP, exp.DType.TIMESTAMPTZ}
)

Schema = tuple[tuple[str, tuple[tuple[str, str], ...]], ...]
"""The catalog as sqlglot's schema: (table, ((column, ClickHouse type), …)), hashable."""


def sql_results(sql: str, schema: Schema) -> str:
    """``sql`` with its result's booleans and timestamp differences typed as SQL types them.

    A query sqlglot cannot read (or type) is returned as it is.
    """
    return _rewritten(sql, schema)


@functools.lru_cache(maxsize=512)
def _rewritten(sql: str, schema: Schema) -> str:
    try:
        tree = sqlglot.parse_one(sql, read="clickhouse")
    except Exception:  # the guard parsed it; a failure here leaves it as it is
        return sql
    selects = [tree] if isinstance(tree, exp.Select) else list(_branches(tree))
    changed = False
    for select in selects:
        changed |= _booleans(select)
        changed |= _intervals(select, {t: dict(cols) for t, cols in schema})
    return tree.sql(dialect="clickhouse") if changed else sql


def _branches(tree: exp.Expr) -> list[exp.Select]:
    if isinstance(tree, exp.SetOperation):
        return [*_branches(tree.this), *_branches(tree.expression)]
    return [tree] if isinstance(tree, exp.Select) else []


def _booleans(select: exp.Select) -> bool:
    changed = False
    for projection in select.expressions:
        value = projection.unalias()
        if isinstance(value, _PREDICATES):
            value.replace(exp.cast(value.copy(), exp.DataType.build("Bool", dialect="clickhouse")))
            changed = True
    return changed


def _intervals(select: exp.Select, schema: Mapping[str, Mapping[str, str]]) -> bool:
    subtractions = [i for i, p in enumerate(select.expressions) if isinstance(p.unalias(), exp.Sub)]
    if not subtractions:
        return False
    try:
        typed = qualify(
            select.copy(),
            schema=dict(schema),
            dialect="clickhouse",
            validate_qualify_columns=False,
            quote_identifiers=False,
        )
        annotate_types(typed, schema=dict(schema), dialect="clickhouse")
    except Exception:  # not typed: left as it is
        return False
    changed = False
    for i in subtractions:
        seen = typed.expressions[i].unalias()
        if not all(_is_timestamp(side) for side in (seen.this, seen.expression)):
            continue
        value = select.expressions[i].unalias()
        micros = exp.Anonymous(
            this="dateDiff",
            expressions=[exp.Literal.string("microsecond"), value.expression.copy(),
                         value.this.copy()],
        )  # fmt: skip
        value.replace(exp.Anonymous(this="toIntervalMicrosecond", expressions=[micros]))
        changed = True
    return changed


def _is_timestamp(node: exp.Expr | None) -> bool:
    kind = getattr(node, "type", None)
    return isinstance(kind, exp.DataType) and kind.this in _TIMESTAMPS
