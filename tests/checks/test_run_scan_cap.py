"""A source's ``max_bytes``: a run whose estimate is over it never starts, one under it runs.

Real PostgreSQL and DuckDB databases; the figures the report gives are the
engines' own (``pg_relation_size``, the table's rows × column widths). The
run is stored and read back through the store and ``lookout show --json``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb
import psycopg
import pytest
import yaml
from pydantic import ValidationError

from checks.automation.model import Automation
from checks.report import Status
from checks.run import SourcePool
from checks.run_lifecycle import run_and_store
from checks.settings.config import Settings
from checks.settings.sources import DuckDBSource, SQLAlchemySource
from checks.sources.scan import scanned_words, size_words
from checks.store.store import Store
from tests.cli_support import run_lookout

ROWS = 20_000

NEGATIVE = "SELECT count(*) FROM orders WHERE amount < 0"
CHECKS = [
    {"name": "no negative", "sql": NEGATIVE, "expect": "== 0"},
    {"name": "ids", "missing": {"table": "orders", "column": "id"}, "expect": "== 0"},
]


def automation(source: str) -> Automation:
    return Automation.model_validate(
        {"name": "orders", "source": source, "checks": CHECKS, "path": "orders.yaml", "line": 1}
    )


def settings(tmp_path: Path, source: DuckDBSource | SQLAlchemySource) -> Settings:
    return Settings(
        store_url=f"sqlite:///{tmp_path}/lookout.db",
        cache_dir=str(tmp_path / "cache"),
        sources={"shop": source},
    )


@pytest.fixture
def warehouse(empty_pg_url: str) -> Iterator[tuple[str, int]]:
    """An ``orders`` table of ``ROWS`` rows; yields the URL and the table's size in bytes."""
    with psycopg.connect(empty_pg_url.replace("+psycopg", ""), autocommit=True) as conn:
        conn.execute(
            "CREATE TABLE orders AS SELECT i AS id, (i %% 100)::numeric AS amount"
            " FROM generate_series(1, %s) i",
            [ROWS],
        )
        conn.execute("ANALYZE orders")
        found = conn.execute("SELECT pg_relation_size('orders')").fetchone()
    assert found is not None
    yield empty_pg_url, int(found[0])


def pg_source(url: str, max_bytes: str | None) -> SQLAlchemySource:
    return SQLAlchemySource.model_validate(
        {"type": "sqlalchemy", "url": url, "schema": "public", "max_bytes": max_bytes}
    )


def run(tmp_path: Path, config: Settings) -> tuple[Any, Store]:
    store = Store(config.store_url)
    with SourcePool(config) as pool:
        report = run_and_store(automation("shop"), config, pool, store)
    return report, store


def test_postgres_over_the_cap_no_query_runs_and_the_error_says_both_figures(
    tmp_path: Path, warehouse: tuple[str, int]
) -> None:
    url, size = warehouse
    config = settings(tmp_path, pg_source(url, "100KB"))
    report, store = run(tmp_path, config)
    said = (
        f"the checks would read about {size_words(2 * size)}, over this source's"
        " max_bytes of 100 KB; no query ran"
    )
    assert report.status == Status.ERROR
    assert report.error == said
    assert report.summary == f"**Error** — {said}"
    assert report.checks == [] and report.evidence == []
    # two statements, each a full scan of orders
    assert report.scanned["bytes"] == 2 * size and report.scanned["rows"] == 2 * ROWS
    assert report.scanned["refused"] is True
    assert scanned_words(report.scanned) == (
        f"would have read about {size_words(2 * size)} (estimate); none ran"
    )
    stored = store.get_run(report.run_id)
    assert stored is not None and stored.status == Status.ERROR and stored.error == said
    assert stored.scanned == report.scanned


def test_postgres_under_the_cap_runs_and_show_json_prints_the_figure(
    tmp_path: Path, warehouse: tuple[str, int]
) -> None:
    url, size = warehouse
    config = settings(tmp_path, pg_source(url, "10MB"))
    report, store = run(tmp_path, config)
    assert report.status == Status.COMPLETED
    assert [c.outcome.value for c in report.checks] == ["passed", "passed"]
    expected = {
        "bytes": 2 * size,
        "rows": 2 * ROWS,
        "estimated": True,
        "statements": 2,
        "unestimated": 0,
        "how": ["EXPLAIN estimate and relation sizes"],
        "max_bytes": 10_000_000,
    }
    assert report.scanned == expected
    stored = store.get_run(report.run_id)
    assert stored is not None and stored.scanned == expected
    path = tmp_path / "lookout.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "store_url": config.store_url,
                "cache_dir": config.cache_dir,
                "sources": {"shop": {"type": "sqlalchemy", "url": url, "max_bytes": "10MB"}},
            }
        ),
        encoding="utf-8",
    )
    shown = run_lookout(["--config", str(path), "show", str(report.run_id), "--json"])
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout)["scanned"] == expected
    text = run_lookout(["--config", str(path), "show", str(report.run_id)], {"COLUMNS": "200"})
    assert f"queries read about {size_words(2 * size)} (estimate)" in text.stdout


def test_duckdb_over_the_cap_says_the_columns_estimate(tmp_path: Path) -> None:
    path = tmp_path / "shop.duckdb"
    with duckdb.connect(str(path)) as conn:
        conn.execute(
            "CREATE TABLE orders AS SELECT i::INTEGER AS id, (i % 100)::DOUBLE AS amount"
            f" FROM range({ROWS}) r(i)"
        )
    source = DuckDBSource.model_validate(
        {"type": "duckdb", "database": str(path), "max_bytes": "200 KiB"}
    )
    report, _ = run(tmp_path, settings(tmp_path, source))
    # amount (DOUBLE, 8 bytes) for the raw check, id (INTEGER, 4) for the typed one
    read = ROWS * 8 + ROWS * 4
    assert report.status == Status.ERROR
    assert report.error == (
        f"the checks would read about {size_words(read)}, over this source's"
        " max_bytes of 204.8 KB; no query ran"
    )
    assert size_words(read) == "240 KB"
    assert report.checks == []


def test_duckdb_without_a_cap_still_reports_its_estimate(tmp_path: Path) -> None:
    path = tmp_path / "shop.duckdb"
    with duckdb.connect(str(path)) as conn:
        conn.execute(
            "CREATE TABLE orders AS SELECT i::INTEGER AS id, 1.0::DOUBLE AS amount"
            " FROM range(10) r(i)"
        )
    source = DuckDBSource.model_validate({"type": "duckdb", "database": str(path)})
    report, _ = run(tmp_path, settings(tmp_path, source))
    assert report.status == Status.COMPLETED
    assert (report.scanned["bytes"], report.scanned["rows"]) == (10 * 8 + 10 * 4, 20)
    assert "max_bytes" not in report.scanned
    assert scanned_words(report.scanned) == "read about 120 bytes (estimate)"


def test_sqlite_cannot_be_estimated_so_the_run_goes_on_and_says_so(tmp_path: Path) -> None:
    import sqlite3

    db = tmp_path / "app.db"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE orders (id INTEGER, amount REAL)")
        conn.execute("INSERT INTO orders VALUES (1, 5.0)")
    source = SQLAlchemySource.model_validate(
        {"type": "sqlalchemy", "url": f"sqlite:///{db}", "max_bytes": 1}
    )
    report, _ = run(tmp_path, settings(tmp_path, source))
    assert report.status == Status.COMPLETED
    assert report.scanned["bytes"] is None and report.scanned["unestimated"] == 2
    assert scanned_words(report.scanned) == (
        "were not estimated: this engine gives no estimate of bytes read"
    )


@pytest.mark.parametrize(
    ("written", "read"),
    [
        ("10GB", 10_000_000_000),
        ("10 gb", 10_000_000_000),
        ("1.5 GiB", 1_610_612_736),
        ("512KiB", 524_288),
        ("500000", 500_000),
        (2048, 2048),
    ],
)
def test_max_bytes_reads_units(written: object, read: int) -> None:
    parsed = DuckDBSource.model_validate({"type": "duckdb", "max_bytes": written})
    assert parsed.max_bytes == read


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("10 GX", "could not interpret byte unit: GX"),
        ("lots", "could not parse value and unit from byte string"),
        (0, "Input should be greater than 0"),
    ],
)
def test_a_wrong_max_bytes_is_refused_at_its_key(written: object, said: str) -> None:
    with pytest.raises(ValidationError) as caught:
        SQLAlchemySource.model_validate(
            {"type": "sqlalchemy", "url": "sqlite://", "max_bytes": written}
        )
    [error] = caught.value.errors()
    assert error["loc"] == ("max_bytes",)
    assert said in error["msg"]


@pytest.mark.slow
def test_the_agents_query_over_what_is_left_is_refused_and_it_is_told_why(
    tmp_path: Path,
) -> None:
    from checks.fakes.llm_server import FakeLLM, one_query_agent
    from checks.settings.llm import LLMSettings

    path = tmp_path / "shop.duckdb"
    with duckdb.connect(str(path)) as conn:
        conn.execute(
            "CREATE TABLE orders AS SELECT i::INTEGER AS id, i::DOUBLE AS amount,"
            " 'n' || i AS note FROM range(1000) r(i)"
        )
    source = DuckDBSource.model_validate(
        {"type": "duckdb", "database": str(path), "max_bytes": "10KB"}
    )
    config = settings(tmp_path, source)
    watched = Automation.model_validate(
        {
            "name": "orders",
            "source": "shop",
            "goal": "No order has a negative amount.",
            "checks": [{"name": "ids", "sql": "SELECT count(*) FROM orders WHERE id < 0",
                        "expect": "== 0"}],
            "path": "orders.yaml",
            "line": 1,
        }
    )  # fmt: skip
    with FakeLLM(default=one_query_agent({"orders": "SELECT * FROM orders"})) as llm:
        config.llm = LLMSettings(base_url=llm.base_url, model="fake", max_retries=0)
        with SourcePool(config) as pool:
            report = run_and_store(watched, config, pool, Store(config.store_url))
        told = json.dumps(llm.chat_requests)
    # the check reads id (4 bytes × 1000 rows); the agent's * would read 28 bytes a row
    assert "this query would read about 28 KB, more than the 6 KB left" in told
    assert "of this source's max_bytes of 10 KB; it did not run" in told
    assert [e.id for e in report.evidence] == ["C1"]
    assert (report.scanned["bytes"], report.scanned["statements"]) == (4000, 1)
