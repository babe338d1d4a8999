"""Listing a source's tables counts none of them: row counts are the engine's statistics."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb
import psycopg
import sqlalchemy as sa

from checks.settings.limits import Limits
from checks.settings.sources import SQLAlchemySource
from checks.sources import DuckDBQuerySource, SQLQuerySource


def test_postgres_lists_planner_estimates_and_counts_nothing(empty_pg_url: str) -> None:
    with psycopg.connect(empty_pg_url.replace("+psycopg", ""), autocommit=True) as conn:
        conn.execute("CREATE TABLE analysed AS SELECT g AS id FROM generate_series(1, 1000) g")
        conn.execute("ANALYZE analysed")
        conn.execute("CREATE TABLE never_analysed (id INTEGER)")
        conn.execute("CREATE VIEW seen AS SELECT id FROM analysed")
    source = SQLQuerySource("pg", SQLAlchemySource(type="sqlalchemy", url=empty_pg_url), Limits())
    sent: list[str] = []

    def record(*args: Any) -> None:
        sent.append(str(args[2]))

    sa.event.listen(source._engine, "before_cursor_execute", record)
    try:
        found = {d.name: (d.row_count, d.row_count_estimated) for d in source.catalog()}
    finally:
        source.close()
    # ANALYZE's figure; a table never analysed has the statistics' live rows (0 here);
    # a view has none.
    assert found == {"analysed": (1000, True), "never_analysed": (0, True), "seen": (None, False)}
    assert sent and not [s for s in sent if "count(" in s.lower()]


def test_duckdb_lists_its_storage_figure_without_counting(tmp_path: Path) -> None:
    path = tmp_path / "shop.duckdb"
    with duckdb.connect(str(path)) as conn:
        conn.execute("CREATE TABLE orders AS SELECT range AS id FROM range(1234)")
        conn.execute("CREATE VIEW recent AS SELECT id FROM orders WHERE id > 1000")
    with DuckDBQuerySource("shop", path, Limits()) as source:
        run = source._processes.run
        sent: list[str] = []

        def recorded(sql: str, **kwargs: Any) -> Any:
            sent.append(sql)
            return run(sql, **kwargs)

        source._processes.run = recorded  # type: ignore[method-assign]
        found = {d.name: (d.row_count, d.row_count_estimated) for d in source.catalog()}
    assert found == {"orders": (1234, True), "recent": (None, False)}
    assert not [s for s in sent if "count(" in s.lower()]
