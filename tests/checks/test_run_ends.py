"""Every run claimed in-process ends: completed, or error with the reason, never left running."""

from __future__ import annotations

import datetime as dt
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from checks.automation.model import Automation
from checks.clock import utcnow
from checks.report import Status
from checks.run import SourcePool
from checks.run_lifecycle import run_and_store
from checks.settings.config import Settings
from checks.settings.limits import Limits
from checks.settings.sources import SQLAlchemySource
from checks.store.store import Store
from worker.service.run_queue import RunQueue


def automation(source: str = "warehouse", timeout_s: float = 30) -> Automation:
    return Automation.model_validate(
        {
            "name": "orders-positive",
            "source": source,
            "goal": "No order has a negative amount.",
            "checks": [
                {"name": "negative", "sql": "SELECT count(*) FROM orders WHERE amount < 0",
                 "expect": "== 0"}
            ],
            "timeout_s": timeout_s,
            "path": "inline.yaml",
            "line": 1,
        }
    )  # fmt: skip


@pytest.fixture
def warehouse(empty_pg_url: str) -> Iterator[str]:
    with psycopg.connect(empty_pg_url.replace("+psycopg", ""), autocommit=True) as conn:
        conn.execute("CREATE TABLE orders (id INTEGER, amount NUMERIC)")
        conn.execute("INSERT INTO orders VALUES (1, 10), (2, 5)")
    yield empty_pg_url


def settings_for(tmp_path: Path, url: str, **limits: Any) -> Settings:
    # With a schema named, the source does not connect when it opens: the catalog is
    # the first thing read from the database.
    config = SQLAlchemySource.model_validate({"type": "sqlalchemy", "url": url, "schema": "public"})
    return Settings(
        store_url=f"sqlite:///{tmp_path}/lookout.db",
        cache_dir=str(tmp_path / "cache"),
        sources={"warehouse": config},
        limits=Limits(**limits),
    )


def stored(settings: Settings, run_id: int | None) -> tuple[str, str | None]:
    store = Store(settings.store_url)
    try:
        report = store.get_run(run_id or 0)
        assert report is not None
        return str(report.status), report.error
    finally:
        store.close()


def test_a_source_whose_database_is_missing_ends_the_run_in_error(
    tmp_path: Path, warehouse: str
) -> None:
    settings = settings_for(tmp_path, warehouse.rsplit("/", 1)[0] + "/no_such_database")
    store = Store(settings.store_url)
    with SourcePool(settings) as sources:
        report = run_and_store(automation(), settings, sources, store)
    store.close()
    status, error = stored(settings, report.run_id)
    assert status == "error" and error is not None and "no_such_database" in error


@pytest.mark.slow
def test_a_table_locked_by_another_session_ends_the_run_in_error(
    tmp_path: Path, warehouse: str
) -> None:
    # The catalog reads only PostgreSQL's own tables (row counts from pg_class): it
    # never waits on the lock; the check's query does, until its time limit.
    settings = settings_for(tmp_path, warehouse, query_timeout_s=1)
    store = Store(settings.store_url)
    with psycopg.connect(warehouse.replace("+psycopg", "")) as locker:
        locker.execute("LOCK TABLE orders IN ACCESS EXCLUSIVE MODE")
        with SourcePool(settings) as sources:
            report = run_and_store(automation(), settings, sources, store)
        locker.rollback()
    store.close()
    status, error = stored(settings, report.run_id)
    assert status == "error"
    assert error == "check 'negative': the query ran past its time limit of 1 s"


def test_an_internal_error_after_the_claim_is_stored_as_the_runs_error(
    tmp_path: Path, warehouse: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = settings_for(tmp_path, warehouse)

    def broken(*_: object, **__: object) -> object:
        raise RuntimeError("a bug in the checks")

    monkeypatch.setattr("checks.run.run_checks", broken)
    store = Store(settings.store_url)
    with SourcePool(settings) as sources, pytest.raises(RuntimeError, match="a bug"):
        run_and_store(automation(), settings, sources, store)
    [run] = store.list_runs()
    store.close()
    assert (run.status, run.error) == (
        Status.ERROR,
        "internal error: RuntimeError: a bug in the checks",
    )


@pytest.mark.slow
def test_the_store_locked_mid_run_is_waited_for(
    tmp_path: Path, warehouse: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sqlite3

    from checks.store import engine

    monkeypatch.setattr(engine, "SQLITE_BUSY_TIMEOUT_MS", 100)  # the lock outlasts it
    settings = settings_for(tmp_path, warehouse)
    store = Store(settings.store_url)
    path = settings.store_url.removeprefix("sqlite:///")
    other = sqlite3.connect(path, isolation_level=None, check_same_thread=False)

    def lock_for_a_while(line: str) -> None:
        if "running" in line:  # mid-run: another writer holds the file for 1.5 s
            other.execute("BEGIN EXCLUSIVE")
            threading.Timer(1.5, lambda: other.execute("COMMIT")).start()

    with SourcePool(settings) as sources:
        report = run_and_store(automation(), settings, sources, store, progress=lock_for_a_while)
    store.close()
    assert stored(settings, report.run_id) == ("completed", None)
    other.close()


def test_the_reaper_ends_an_in_process_run_instead_of_queueing_it(tmp_path: Path) -> None:
    store = Store(f"sqlite:///{tmp_path}/lookout.db")
    run_id = store.create_run("orders-positive", utcnow(), trigger="manual")
    assert run_id is not None and store.claim_run(run_id, lease_s=0.01) == 1
    reaped = RunQueue(store).reap(utcnow() + dt.timedelta(seconds=1), max_attempts=3)
    report = store.get_run(run_id)
    store.close()
    assert reaped.requeued == [] and reaped.gave_up == [run_id]
    assert report is not None and report.status == Status.ERROR
    assert report.error is not None and "never queued" in report.error
