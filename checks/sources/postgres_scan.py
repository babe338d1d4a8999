"""PostgreSQL's estimate of what a statement reads: its plan and its relations' sizes.

``estimate_postgres`` asks the planner (``EXPLAIN (VERBOSE, FORMAT JSON)``,
which plans and runs nothing) and walks the plan's scan nodes:

- a sequential scan (parallel or not) reads its whole relation: its size on
  disk (``pg_relation_size``, the main fork: the pages it would read, as
  ``relpages × block_size`` counts them, but exact even before ``ANALYZE``)
  and its rows (``reltuples``; the plan's rows before the table was analyzed);
- any other scan of a relation (index, index-only, bitmap heap) reads the
  rows the plan gives it (per loop), each counted at the relation's size per
  row (``pg_relation_size / reltuples``), at most the whole relation.

Values moved out of line (TOAST) are not counted. What a statement actually
read (pages hit and read) is known only from ``EXPLAIN (ANALYZE, BUFFERS)``,
which runs it: out of reach before a run, and not asked after it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from checks.sources.scan import ScanEstimate
from checks.sources.watchdog import after

HOW = "EXPLAIN estimate and relation sizes"
"""``ScanEstimate.how`` of a PostgreSQL estimate."""

_SIZES = (
    "SELECT n.nspname, c.relname, pg_relation_size(c.oid), c.reltuples"
    " FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
    " WHERE (n.nspname, c.relname) IN"
    " (SELECT * FROM unnest(CAST(%s AS text[]), CAST(%s AS text[])))"
)


def estimate_postgres(conn: Any, sql: str, timeout_s: float, *, schema: str | None) -> ScanEstimate:
    """Estimate what checked ``sql`` reads, on a psycopg connection, in a READ ONLY transaction.

    The search path is ``schema`` (default ``public``), as when the query runs;
    the planning is cancelled at ``timeout_s``.

    Raises:
        psycopg.Error: the server could not plan the statement or read the sizes.

    """
    conn.rollback()
    conn.read_only = True
    try:
        with after(timeout_s, conn.cancel_safe):
            conn.execute(
                "SELECT set_config('statement_timeout', %s, true),"
                " set_config('search_path', %s, true)",
                [str(max(1, int(timeout_s * 1000))), _quoted(schema or "public")],
            )
            found = conn.execute(f"EXPLAIN (VERBOSE, FORMAT JSON) {sql}").fetchone()
            plan = found[0]
            nodes = list(_scans(plan[0]["Plan"]))
            relations = {(n["Schema"], n["Relation Name"]) for n in nodes}
            sizes: dict[tuple[str, str], tuple[int, float]] = {}
            if relations:
                schemas, names = zip(*sorted(relations), strict=True)
                for nsp, rel, size, tuples in conn.execute(_SIZES, [list(schemas), list(names)]):
                    sizes[(nsp, rel)] = (int(size), float(tuples))
    finally:
        conn.rollback()
    read_bytes = rows = 0
    for node in nodes:
        size, tuples = sizes.get((node["Schema"], node["Relation Name"]), (0, -1.0))
        planned = int(node["Plan Rows"])
        if node["Node Type"] == "Seq Scan":
            read_bytes += size
            rows += int(tuples) if tuples >= 0 else planned
        else:  # the planned rows' share of the relation's pages
            rows += planned
            per_row = size / tuples if tuples > 0 else 0.0
            read_bytes += min(size, round(planned * per_row))
    return ScanEstimate(bytes=read_bytes, rows=rows, how=HOW)


def _scans(node: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """The plan's nodes that read a relation (they name one), in plan order."""
    if "Relation Name" in node and "Schema" in node:
        yield node
    for child in node.get("Plans", []):
        yield from _scans(child)


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'
