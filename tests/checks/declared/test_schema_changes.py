"""``schema: {changes: forbid|warn}``: a table's columns against the last run's, for real.

A real DuckDB file, PostgreSQL database and MariaDB server (SQLite apart) are altered between runs;
each run goes through the real run path into a real store (SQLite), which
keeps the schema each run saw for the next.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import sqlite3
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import duckdb
import psycopg
import pytest

from checks.automation.loader import load_file
from checks.automation.model import Automation
from checks.report import RunReport
from checks.run import SourcePool, run_automation
from checks.run_lifecycle import run_and_store
from checks.settings.config import Settings
from checks.settings.sources import DuckDBSource, SQLAlchemySource
from checks.store.store import Store
from tests.conftest import scratch_pg_database

START = dt.datetime(2026, 11, 2, 6, 0, tzinfo=dt.UTC)


def automation(spec: dict[str, Any], **check: Any) -> Automation:
    return Automation.model_validate(
        {
            "name": "orders-schema",
            "source": "shop",
            "checks": [{"name": "orders schema", "schema": spec, **check}],
            "path": "inline.yaml",
            "line": 1,
        }
    )


class Engine:
    """One engine's ``orders`` table, altered between runs, and the runs stored."""

    def __init__(
        self, name: str, settings: Settings, execute: Callable[[str], None], store: Store
    ) -> None:
        self.name = name
        self.settings = settings
        self.execute = execute
        self.store = store
        self.day = 0

    def retype(self, column: str, type_name: str) -> None:
        """Change a column's type, in the engine's own words."""
        if self.name == "mariadb":
            self.execute(f"ALTER TABLE orders MODIFY COLUMN {column} {type_name}")
        else:
            self.execute(f"ALTER TABLE orders ALTER COLUMN {column} TYPE {type_name}")

    def run(self, auto: Automation) -> RunReport:
        slot = START + dt.timedelta(days=self.day)
        self.day += 1
        with SourcePool(self.settings) as pool:
            return run_and_store(auto, self.settings, pool, self.store, scheduled_for=slot)


@pytest.fixture(params=["duckdb", "postgresql", "mariadb"])
def engine(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Engine]:
    store = Store(f"sqlite:///{tmp_path}/lookout.db")
    create = "CREATE TABLE orders (id INTEGER, amount INTEGER, name VARCHAR(20))"
    if request.param == "duckdb":
        path = tmp_path / "shop.duckdb"

        def on_duckdb(sql: str) -> None:
            with duckdb.connect(str(path)) as conn:
                conn.execute(sql)

        on_duckdb(create)
        on_duckdb("INSERT INTO orders VALUES (1, 10, 'a')")
        settings = Settings(
            store_url="sqlite://",
            cache_dir=str(tmp_path / "cache"),
            sources={"shop": DuckDBSource(type="duckdb", database=str(path))},
        )
        yield Engine("duckdb", settings, on_duckdb, store)
        store.close()
        return
    if request.param == "mariadb":
        server = request.getfixturevalue("mariadb_server")
        database = f"schema_{uuid.uuid4().hex[:10]}"
        admin = server.connect()
        with contextlib.closing(admin), admin.cursor() as cur:
            cur.execute(f"CREATE DATABASE {database}")

        def on_mariadb(sql: str) -> None:
            conn = server.connect("root", database)
            with contextlib.closing(conn), conn.cursor() as cur:
                cur.execute(sql)

        on_mariadb(create)
        on_mariadb("INSERT INTO orders VALUES (1, 10, 'a')")
        url = server.url("root", database)
        settings = Settings(
            store_url="sqlite://",
            cache_dir=str(tmp_path / "cache"),
            sources={"shop": SQLAlchemySource(type="sqlalchemy", url=url)},
        )
        yield Engine("mariadb", settings, on_mariadb, store)
        store.close()
        return
    with scratch_pg_database() as url:
        plain = url.replace("postgresql+psycopg://", "postgresql://", 1)

        def on_postgres(sql: str) -> None:
            with psycopg.connect(plain, autocommit=True) as conn:
                conn.execute(sql.encode())

        on_postgres(create)
        on_postgres("INSERT INTO orders VALUES (1, 10, 'a')")
        settings = Settings(
            store_url="sqlite://",
            cache_dir=str(tmp_path / "cache"),
            sources={"shop": SQLAlchemySource(type="sqlalchemy", url=url)},
        )
        yield Engine("postgresql", settings, on_postgres, store)
        store.close()


def test_each_change_is_named_and_forbid_fails(engine: Engine) -> None:
    auto = automation({"table": "orders", "changes": "forbid"})
    first = engine.run(auto)
    (check,) = first.checks
    assert (check.outcome, check.reason, check.value) == (
        "not_evaluated",
        "first run: schema recorded",
        None,
    )
    assert check.recorded_schema is not None
    assert [name for name, _ in check.recorded_schema["columns"]] == ["id", "amount", "name"]

    same = engine.run(auto)
    (check,) = same.checks
    assert (check.outcome, check.reason, check.value) == ("passed", None, 0)
    assert check.metrics["changes"] == 0 and check.metrics["columns"] == 3
    assert same.finding == "clear"

    engine.execute("ALTER TABLE orders ADD COLUMN surprise INTEGER")
    engine.execute("ALTER TABLE orders DROP COLUMN name")
    to_text = "VARCHAR" if engine.name == "duckdb" else "TEXT"
    engine.retype("amount", to_text)
    changed = engine.run(auto)
    (check,) = changed.checks
    before, after = "INTEGER", to_text  # as each engine's catalog names them
    assert check.outcome == "failed"
    assert check.reason == (
        f"column surprise added; column name removed; amount: {before} → {after}"
    )
    assert check.value == 3
    assert {k: check.metrics[k] for k in ("columns_added", "columns_removed", "types_changed")} == {
        "columns_added": 1,
        "columns_removed": 1,
        "types_changed": 1,
    }
    assert changed.finding == "needs_attention"
    assert "column surprise added" in changed.summary

    again = engine.run(auto)  # compared with the changed schema now: nothing new
    assert [(c.outcome, c.reason) for c in again.checks] == [("passed", None)]


def test_a_rename_is_one_removed_and_one_added_and_warn_warns(engine: Engine) -> None:
    auto = automation({"table": "orders", "changes": "warn"})
    engine.run(auto)
    engine.execute("ALTER TABLE orders RENAME COLUMN name TO customer")
    report = engine.run(auto)
    (check,) = report.checks
    assert (check.outcome, check.reason) == (
        "warned",
        "column customer added; column name removed",
    )
    assert report.finding == "clear"  # a warning keeps the run Clear
    assert "1 warning" in report.summary


def test_a_synonym_is_no_change_but_a_wider_integer_is(engine: Engine) -> None:
    auto = automation({"table": "orders", "changes": "forbid"})
    engine.run(auto)
    # the same type under another of its names: int4 (PostgreSQL), INT4 (DuckDB)
    engine.retype("id", "int4")
    assert [c.outcome for c in engine.run(auto).checks] == ["passed"]
    engine.retype("id", "bigint")
    (check,) = engine.run(auto).checks
    assert (check.outcome, check.reason) == ("failed", "id: INTEGER → BIGINT")


def test_columns_and_changes_together(engine: Engine) -> None:
    auto = automation({"table": "orders", "columns": {"id": "integer"}, "changes": "warn"})
    (first,) = engine.run(auto).checks
    # the columns were checked; the changes could not be: not evaluated, never passed
    assert (first.outcome, first.reason) == ("not_evaluated", "first run: schema recorded")
    engine.execute("ALTER TABLE orders ADD COLUMN note VARCHAR(5)")
    (warned,) = engine.run(auto).checks
    assert (warned.outcome, warned.reason, warned.value) == ("warned", "column note added", 0)
    assert warned.metrics["problems"] == 0 and warned.metrics["changes"] == 1
    engine.execute("ALTER TABLE orders DROP COLUMN id")
    (failed,) = engine.run(auto).checks  # the columns' problem fails it, the change is named
    assert (failed.outcome, failed.reason) == (
        "failed",
        "missing column: id; column id removed",
    )


def test_a_check_moved_to_another_table_starts_again(engine: Engine) -> None:
    engine.execute("CREATE TABLE refunds (id INTEGER)")
    engine.execute("INSERT INTO refunds VALUES (1)")
    engine.run(automation({"table": "orders", "changes": "forbid"}))
    (check,) = engine.run(automation({"table": "refunds", "changes": "forbid"})).checks
    assert (check.outcome, check.reason) == (
        "not_evaluated",
        "first run on table refunds: schema recorded",
    )


def test_an_empty_table_still_has_its_schema_compared(engine: Engine) -> None:
    auto = automation({"table": "orders", "changes": "forbid"})
    engine.execute("DELETE FROM orders")
    engine.run(auto)
    assert [(c.outcome, c.reason) for c in engine.run(auto).checks] == [("passed", None)]


def test_without_a_store_nothing_is_compared(tmp_path: Path) -> None:
    path = tmp_path / "shop.duckdb"
    with duckdb.connect(str(path)) as conn:
        conn.execute("CREATE TABLE orders AS SELECT 1 AS id")
    settings = Settings(
        store_url="sqlite://",
        cache_dir=str(tmp_path / "cache"),
        sources={"shop": DuckDBSource(type="duckdb", database=str(path))},
    )
    with SourcePool(settings) as pool:
        report = run_automation(
            automation({"table": "orders", "changes": "forbid"}), settings, pool
        )
    assert [(c.outcome, c.reason) for c in report.checks] == [
        ("not_evaluated", "no store to read the last run's schema from: nothing compared")
    ]


@pytest.mark.parametrize(
    ("check", "where", "message"),
    [
        (
            "{name: s, schema: {table: orders}}",
            "5:23: checks.0.schema",
            "schema needs columns (the columns and types the table must have), changes"
            " (forbid or warn: compared with the last run), or both",
        ),
        (
            "{name: s, schema: {table: orders, changes: maybe}}",
            "5:48: checks.0.schema.changes",
            "input should be 'forbid' or 'warn' (got 'maybe')",
        ),
        (
            "{name: s, schema: {table: orders, changes: warn}, expect: '== 0'}",
            "5:63: checks.0.expect",
            "schema with changes alone is judged by changes (forbid: failed, warn: warned);"
            " leave expect out, or give columns for expect to compare",
        ),
    ],
)
def test_bad_changes_are_errors_at_their_place(
    tmp_path: Path, check: str, where: str, message: str
) -> None:
    file = tmp_path / "a.yaml"
    file.write_text(f"name: a\nsource: shop\nchecks:\n  # the check\n  - {check}\n")
    (error,) = load_file(file).errors
    assert str(error).startswith(f"{file}:{where}")
    assert message in str(error)


def test_on_sqlite_a_declared_synonym_is_no_change_and_a_rebuilt_type_is(tmp_path: Path) -> None:
    path = tmp_path / "shop.db"

    def rebuild(columns: str) -> None:  # SQLite alters no column's type: the table is rebuilt
        with sqlite3.connect(path) as conn:
            conn.executescript(
                f"DROP TABLE IF EXISTS orders; CREATE TABLE orders ({columns});"
                " INSERT INTO orders (id) VALUES (1);"
            )
        conn.close()

    rebuild("id INT, amount INTEGER")
    settings = Settings(
        store_url="sqlite://",
        cache_dir=str(tmp_path / "cache"),
        sources={"shop": SQLAlchemySource(type="sqlalchemy", url=f"sqlite:///{path}")},
    )
    engine = Engine(
        "sqlite", settings, lambda _sql: None, Store(f"sqlite:///{tmp_path}/lookout.db")
    )
    auto = automation({"table": "orders", "changes": "forbid"})
    engine.run(auto)
    rebuild("id INTEGER, amount INT")  # each the same type under its other name
    assert [(c.outcome, c.reason) for c in engine.run(auto).checks] == [("passed", None)]
    rebuild("id INTEGER, amount TEXT")
    (check,) = engine.run(auto).checks
    # the catalog (SQLAlchemy's reflection) names a declared INT as INTEGER
    assert (check.outcome, check.reason) == ("failed", "amount: INTEGER → TEXT")
    engine.store.close()


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A real store on each database a store runs on."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path}/lookout.db"
        return
    with scratch_pg_database() as url:
        yield url


def test_a_run_in_error_between_two_is_passed_over(tmp_path: Path, store_url: str) -> None:
    """The errored run recorded no schema (SQL NULL): the next compares with the one before."""
    path = tmp_path / "shop.duckdb"

    def execute(sql: str) -> None:
        with duckdb.connect(str(path)) as conn:
            conn.execute(sql)

    execute("CREATE TABLE sch (id INTEGER)")
    settings = Settings(
        store_url="sqlite://",
        cache_dir=str(tmp_path / "cache"),
        sources={"shop": DuckDBSource(type="duckdb", database=str(path))},
    )
    store = Store(store_url)
    engine = Engine("duckdb", settings, execute, store)
    auto = automation({"table": "sch", "changes": "forbid"})
    assert [c.reason for c in engine.run(auto).checks] == ["first run: schema recorded"]
    execute("DROP TABLE sch")
    (errored,) = engine.run(auto).checks
    assert errored.outcome == "error" and errored.recorded_schema is None
    execute("CREATE TABLE sch (id BIGINT, extra INT)")
    (check,) = engine.run(auto).checks
    assert (check.outcome, check.reason) == ("failed", "column extra added; id: INTEGER → BIGINT")
    store.close()
