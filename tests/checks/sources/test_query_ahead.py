"""Queries run ahead: a source's first query process answers the catalog's before it is asked."""

from pathlib import Path

import duckdb

from checks.settings.limits import Limits
from checks.sources.duckdb_source import CATALOG_AHEAD, DuckDBQuerySource
from checks.sources.query_process import QueryProcesses

# When each query ran, in microseconds: DuckDB's clock, read in the query process.
NOW = "SELECT epoch_us(get_current_timestamp())"


def _database(tmp_path: Path) -> Path:
    path = tmp_path / "shop.duckdb"
    with duckdb.connect(str(path)) as conn:
        conn.execute("CREATE TABLE orders AS SELECT range AS id FROM range(3)")
    return path


def _when(processes: QueryProcesses, sql: str, max_rows: int = 10) -> int:
    result = processes.run(sql, max_rows=max_rows, timeout_s=30.0, measure_cells=False)
    return int(result.rows[0][0])


def test_a_query_run_ahead_is_answered_from_before_it_was_asked(tmp_path: Path) -> None:
    processes = QueryProcesses("shop", _database(tmp_path), Limits(), [(NOW, 10, 30.0, False)])
    try:
        # Asked first, but the process ran the query ahead of it before reading this one.
        asked_first = _when(processes, NOW + " + 0")
        ahead = _when(processes, NOW)
        again = _when(processes, NOW)  # answered once: asked again, it runs again
        other_limits = _when(processes, NOW, max_rows=5)  # other arguments: another query
    finally:
        processes.close()
    assert ahead < asked_first < again < other_limits


def test_a_duckdb_source_reads_the_same_catalog_with_its_queries_run_ahead(
    tmp_path: Path,
) -> None:
    path = _database(tmp_path)
    ahead = DuckDBQuerySource("shop", path, Limits())
    plain = DuckDBQuerySource("shop", path, Limits())
    plain._processes.close()
    plain._processes = QueryProcesses("shop", path, Limits())  # nothing run ahead
    try:
        assert len(CATALOG_AHEAD) == 5  # columns, row figures, functions, types, schemas
        assert ahead.catalog() == plain.catalog()
        assert ahead.facts() == plain.facts()
        [orders] = ahead.catalog()
        facts = ahead.facts()
    finally:
        ahead.close()
        plain.close()
    assert (orders.name, orders.row_count, [c.name for c in orders.columns]) == (
        "orders",
        3,
        ["id"],
    )
    assert orders.row_count_estimated  # DuckDB's storage figure, not a count
    assert facts is not None and "sum" in facts.functions and "main" in facts.schemas
