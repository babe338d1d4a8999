"""The report store on SQLite and on the PostgreSQL server of this machine."""

from __future__ import annotations

import datetime as dt
import os
import uuid
from collections.abc import Iterator
from decimal import Decimal

import psycopg
import pytest

from checks.errors import StoreError
from checks.report import (
    CheckOutcome,
    CheckResult,
    Evidence,
    Finding,
    FindingSource,
    RunReport,
    Status,
)
from checks.sources.row_set import RowSet
from checks.store.store import Store
from tests.stored_reports import store_report

PG_ADMIN = os.environ.get("LOOKOUT_TEST_PG", "postgresql://postgres@127.0.0.1:5432/postgres")


@pytest.fixture(scope="module")
def pg_url() -> Iterator[str]:
    name = f"lookout_store_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    base = PG_ADMIN.rsplit("/", 1)[0].replace("postgresql://", "postgresql+psycopg://")
    yield f"{base}/{name}"
    with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE "{name}" WITH (FORCE)')


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request: pytest.FixtureRequest, tmp_path: os.PathLike[str]) -> Iterator[Store]:
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path}/sub/dir/lookout.db"
    else:
        url = request.getfixturevalue("pg_url")
    s = Store(url)
    yield s
    if request.param == "postgresql":
        with s.engine.begin() as conn:
            conn.exec_driver_sql("TRUNCATE runs, check_results, evidence RESTART IDENTITY CASCADE")
    s.close()


SLOT = dt.datetime(2026, 11, 30, 6, 15, tzinfo=dt.UTC)


def make_report(name: str = "a", finding: Finding = Finding.NEEDS_ATTENTION) -> RunReport:
    return RunReport(
        automation=name,
        scheduled_for=SLOT,
        status=Status.COMPLETED,
        finding=finding,
        finding_source=FindingSource.CHECKS,
        summary="**Needs attention** [C1]",
        checks=[
            CheckResult(
                "rate",
                "SELECT 0.0245",
                "< 0.03",
                Decimal("0.0245"),
                CheckOutcome.PASSED,
                None,
                "C1",
            )
        ],
        evidence=[Evidence("C1", "SELECT 0.0245", ["r"], [[0.0245]], 1, False, "ab" * 32)],
        started_at=SLOT,
        finished_at=SLOT + dt.timedelta(seconds=2),
        definition={"name": name, "goal": "g"},
    )


def test_save_and_read_back(store: Store) -> None:
    run_id = store_report(store, make_report())
    got = store.get_run(run_id)
    assert got is not None
    assert got.run_id == run_id
    assert got.scheduled_for == SLOT
    assert got.status == Status.COMPLETED
    assert got.finding == Finding.NEEDS_ATTENTION
    assert got.checks == [
        CheckResult("rate", "SELECT 0.0245", "< 0.03", 0.0245, CheckOutcome.PASSED, None, "C1")
    ]
    assert got.evidence[0].rows == [[0.0245]]
    assert got.evidence[0].fingerprint == "ab" * 32
    assert got.definition == {"name": "a", "goal": "g"}
    assert got.attempt == 1


def test_one_run_per_slot(store: Store) -> None:
    first = store.create_run("a", SLOT, trigger="schedule")
    assert first is not None
    assert store.create_run("a", SLOT, trigger="schedule") is None
    assert store.create_run("b", SLOT, trigger="schedule") is not None
    with pytest.raises(StoreError, match="already has a run"):
        store_report(store, make_report("a"))


def test_claim_is_fenced_on_attempt(store: Store) -> None:
    run_id = store.create_run("a", SLOT)
    assert run_id is not None
    first = store.claim_run(run_id, lease_s=0.0)  # lease already expired
    assert first == 1
    second = store.claim_run(run_id, lease_s=60)  # a reaper or redelivery takes it over
    assert second == 2
    assert store.claim_run(run_id, lease_s=60) is None  # live lease: a duplicate does nothing
    assert store.finish_run(run_id, first, make_report()) is False  # stale attempt cannot write
    assert store.finish_run(run_id, second, make_report()) is True
    assert store.claim_run(run_id, lease_s=60) is None  # finished runs are never claimed again
    got = store.get_run(run_id)
    assert got is not None and got.status == Status.COMPLETED and got.attempt == 2


def test_a_result_written_while_the_run_still_runs_is_replaced_by_the_next(store: Store) -> None:
    run_id = store.create_run("a", SLOT)
    assert run_id is not None and store.claim_run(run_id, lease_s=60) == 1
    early = make_report()
    early.status = Status.RUNNING  # the run stays running: a later write replaces its results
    early.evidence[0].query_key, early.evidence[0].row_set = "k" * 64, RowSet(b"\x01" * 8, b"")
    assert store.finish_run(run_id, 1, early) is True
    late = make_report()
    late.checks = [CheckResult("other", "SELECT 2", "== 2", 2, CheckOutcome.PASSED, None, "C9")]
    late.evidence = [Evidence("C9", "SELECT 2", ["n"], [[2]], 1, False, "cd" * 32)]
    assert store.finish_run(run_id, 1, late) is True
    got = store.get_run(run_id)
    assert got is not None and got.status == Status.COMPLETED
    assert [c.name for c in got.checks] == ["other"]
    assert [e.id for e in got.evidence] == ["C9"]
    assert [p.run_id for p in store.series("a", "rate", before=SLOT + dt.timedelta(days=1))] == []
    assert [p.value for p in store.series("a", "other", before=SLOT + dt.timedelta(days=1))] == [2]
    assert store.previous_rows("a", ["k" * 64]) == {}  # the early entry's row set went with it


def test_list_and_last_completed(store: Store) -> None:
    for i, finding in enumerate([Finding.CLEAR, Finding.NEEDS_ATTENTION, Finding.CLEAR]):
        report = make_report("a", finding)
        report.scheduled_for = SLOT + dt.timedelta(hours=i)
        store_report(store, report)
    runs = store.list_runs(automation="a")
    assert [r.finding for r in runs] == [Finding.CLEAR, Finding.NEEDS_ATTENTION, Finding.CLEAR]
    assert [r.scheduled_for.hour for r in runs] == [8, 7, 6]
    assert len(store.list_runs(finding="needs_attention")) == 1
    last = store.last_completed("a", before_run=runs[0].run_id)
    assert last is not None and last.run_id == runs[1].run_id
    assert store.last_completed("nobody") is None


def test_naive_datetime_is_refused(store: Store) -> None:
    with pytest.raises(Exception, match="naive datetime"):
        store.create_run("a", dt.datetime(2026, 1, 1))


def test_bad_url_says_which_store_without_password() -> None:
    with pytest.raises(StoreError) as info:
        Store("postgresql+psycopg://u:hunter2@127.0.0.1:1/nope")
    assert "hunter2" not in str(info.value)
    assert "cannot open the store at postgresql+psycopg://u:***@127.0.0.1:1/nope" in str(info.value)


@pytest.mark.slow
def test_two_processes_opening_a_fresh_postgres_store_at_once_both_succeed() -> None:
    import subprocess
    import sys

    name = f"lookout_fresh_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    base = PG_ADMIN.rsplit("/", 1)[0].replace("postgresql://", "postgresql+psycopg://")
    opener = "import sys; from checks.store.store import Store; Store(sys.argv[1]).close()"
    try:
        for _ in range(2):  # each round on a fresh database: the race is on the first migration
            with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
                conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
                conn.execute(f'CREATE DATABASE "{name}"')
            procs = [
                subprocess.Popen(
                    [sys.executable, "-c", opener, f"{base}/{name}"],
                    stderr=subprocess.PIPE,
                    text=True,
                )
                for _ in range(2)
            ]
            errors = [p.communicate(timeout=120)[1] for p in procs]
            assert [p.returncode for p in procs] == [0, 0], errors
    finally:
        with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def test_a_store_restarted_mid_run_is_written_after_it_comes_back(pg_url: str) -> None:
    store = Store(pg_url)
    try:
        run_id = store.create_run("restarted", SLOT + dt.timedelta(days=3))
        assert run_id is not None
        attempt = store.claim_run(run_id, lease_s=60)
        assert attempt == 1
        database = pg_url.rsplit("/", 1)[1]
        with psycopg.connect(PG_ADMIN, autocommit=True) as admin:  # what a restart does to them
            admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                " WHERE datname = %s AND pid <> pg_backend_pid()",
                [database],
            )
        report = make_report("restarted")
        assert store.finish_run(run_id, attempt, report) is True
        stored = store.get_run(run_id)
        assert stored is not None and stored.status == Status.COMPLETED
    finally:
        store.close()


@pytest.mark.slow
def test_a_sqlite_store_locked_by_another_writer_is_retried(
    tmp_path: os.PathLike[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import sqlite3
    import threading

    from checks.store import engine

    monkeypatch.setattr(engine, "SQLITE_BUSY_TIMEOUT_MS", 100)  # the lock outlasts it
    path = f"{tmp_path}/locked.db"
    store = Store(f"sqlite:///{path}")
    try:
        run_id = store.create_run("locked", SLOT)
        assert run_id is not None and store.claim_run(run_id, lease_s=60) == 1
        other = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        other.execute("BEGIN EXCLUSIVE")
        release = threading.Timer(1.5, lambda: other.execute("COMMIT"))
        release.start()
        assert store.finish_run(run_id, 1, make_report("locked")) is True
        release.join()
        other.close()
        stored = store.get_run(run_id)
        assert stored is not None and stored.status == Status.COMPLETED
    finally:
        store.close()


def test_store_errors_hide_passwords_in_the_url() -> None:
    with pytest.raises(StoreError) as caught:
        Store("postgresql+psycopg://reader@127.0.0.1:1/x?password=hunter22secret")
    assert "hunter22secret" not in str(caught.value) and "password=***" in str(caught.value)
    with pytest.raises(StoreError) as caught:
        Store("nope://reader:hunter22secret@host/x")
    assert "hunter22secret" not in str(caught.value)


def test_outcomes_metrics_and_samples_are_kept(store: Store) -> None:
    report = make_report()
    report.checks = [
        CheckResult(
            "emails",
            "SELECT COUNT(*) AS rows_in_scope …",
            "<= 1%",
            2.5,
            CheckOutcome.FAILED,
            None,
            "C1",
            kind="missing",
            metrics={"rows_in_scope": 40, "missing": 1, "missing_percent": 2.5},
            warnings=["filter: status NOT IN (…) is never true where status is NULL, …"],
            sample_id="S1",
        ),
        CheckResult(
            "diana",
            "SELECT COUNT(*) AS rows_in_scope …",
            "== 0",
            None,
            CheckOutcome.NOT_EVALUATED,
            None,
            "C2",
            kind="missing",
            reason="0 rows in scope: orders where name = 'Diana'",
            metrics={"rows_in_scope": 0, "missing": 0, "missing_percent": None},
        ),
    ]
    run_id = store_report(store, report)
    again = store.get_run(run_id)
    assert again is not None
    assert [c.to_dict() for c in again.checks] == [c.to_dict() for c in report.checks]
    assert [str(c.outcome) for c in again.checks] == ["failed", "not_evaluated"]


def test_a_check_stored_before_outcomes_existed_derives_one(store: Store) -> None:
    run_id = store_report(store, make_report())
    with store.engine.begin() as conn:
        conn.exec_driver_sql("UPDATE check_results SET outcome = NULL, metrics = NULL")
    again = store.get_run(run_id)
    assert again is not None
    (check,) = again.checks
    assert (str(check.outcome), check.kind, check.metrics, check.warnings) == (
        "passed",
        "sql",
        {},
        [],
    )
