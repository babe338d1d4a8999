"""``NOT EXISTS`` in a DuckDB query's ``WHERE``, run as DuckDB's ``ANTI JOIN``.

DuckDB plans a correlated ``NOT EXISTS (SELECT 1 FROM parent p WHERE p.k = c.k)``
as a join that first collects the outer query's distinct keys: on 50M flights,
``tailnum`` against ``planes`` took 12.9 s and went over the 1 GiB default memory
limit (bench/README.md, Scan targets). ``FROM child c ANTI JOIN parent p ON p.k = c.k``
is the same filter by definition (DuckDB's anti join keeps the left rows no
right row matches, as ``NOT EXISTS`` keeps those for which the subquery finds
no row) and builds its hash table on the parent: 1.45 s, within the limit.

``anti_joined`` rewrites only what it can prove: one ``SELECT`` from one table
(no join, ``WITH`` or set operation) whose ``WHERE`` is a conjunction, each
``NOT EXISTS`` conjunct's subquery one ``SELECT`` from one other table with a
``WHERE`` and nothing else (no aggregate, which would make it always one row,
no ``GROUP BY``, ``LIMIT``, join or nested subquery), every column of that
``WHERE`` qualified by the parent's or the outer table's name. The projections
are left as written, so the columns keep their names. Anything else runs as
written.
"""

from __future__ import annotations

import functools

import sqlglot
from sqlglot import exp

_SUBQUERY_ARGS = frozenset({"expressions", "from", "from_", "where"})


@functools.lru_cache(maxsize=1024)
def anti_joined(sql: str) -> str:
    """``sql`` with each provable top-level ``NOT EXISTS`` conjunct as an ``ANTI JOIN``.

    ``sql`` is DuckDB SQL as the guard regenerated it; the text comes back
    unchanged when nothing is rewritten (or it does not parse). Pure, hence
    cached per process.
    """
    if "EXISTS" not in sql.upper():  # most statements: no parse
        return sql
    try:
        tree = sqlglot.parse_one(sql, read="duckdb")
    except Exception:  # sqlglot's errors: run it as written
        return sql
    outer = _single_table(tree)
    where = tree.args.get("where") if isinstance(tree, exp.Select) else None
    if outer is None or not isinstance(where, exp.Where):
        return sql
    kept: list[exp.Expr] = []
    joins: list[exp.Join] = []
    taken = {outer.alias_or_name}
    for conjunct in where.this.flatten() if isinstance(where.this, exp.And) else [where.this]:
        join = _anti_join(conjunct, outer, taken)
        if join is None:
            kept.append(conjunct)
        else:
            joins.append(join)
    if not joins:
        return sql
    tree.set("joins", joins)
    tree.set("where", exp.Where(this=exp.and_(*kept)) if kept else None)
    return tree.sql(dialect="duckdb")


def _single_table(tree: exp.Expr) -> exp.Table | None:
    """The one table a plain ``SELECT`` reads, or None."""
    if not isinstance(tree, exp.Select) or tree.args.get("joins") or tree.args.get("with"):
        return None
    source = tree.args.get("from") or tree.args.get("from_")
    table = source.this if isinstance(source, exp.From) else None
    if not isinstance(table, exp.Table) or not isinstance(table.this, exp.Identifier):
        return None
    return table


def _anti_join(conjunct: exp.Expr, outer: exp.Table, taken: set[str]) -> exp.Join | None:
    """``conjunct`` as an anti join when it is a provable ``NOT EXISTS``, else None."""
    while isinstance(conjunct, exp.Paren):
        conjunct = conjunct.this
    if not isinstance(conjunct, exp.Not) or not isinstance(conjunct.this, exp.Exists):
        return None
    sub = conjunct.this.this
    if not isinstance(sub, exp.Select) or any(
        value for name, value in sub.args.items() if name not in _SUBQUERY_ARGS
    ):
        return None
    parent = _single_table(sub)
    condition = sub.args.get("where")
    if parent is None or not isinstance(condition, exp.Where):
        return None
    if any(p.find(exp.AggFunc) for p in sub.expressions):
        return None  # an aggregate makes the subquery one row: NOT EXISTS is always false
    name = parent.alias_or_name
    if name in taken or name == outer.name:
        return None
    nested = (exp.Subquery, exp.Exists, exp.Select, exp.Window)
    if any(True for node in condition.this.find_all(*nested)):
        return None
    allowed = {name, outer.alias_or_name}
    for column in condition.this.find_all(exp.Column):
        if column.args.get("db") or column.args.get("catalog"):
            return None
        if column.table not in allowed:
            return None  # unqualified or another name: which table it means is not proven
    taken.add(name)
    return exp.Join(this=parent.copy(), kind="ANTI", on=condition.this.copy())
