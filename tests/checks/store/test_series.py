"""Every check's value and metrics kept per run as a time series, on SQLite and PostgreSQL."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from decimal import Decimal
from importlib.resources import files
from pathlib import Path

import pytest
from alembic import command
from alembic.config import Config
from sqlalchemy import create_engine, select, text

from checks.report import CheckOutcome, CheckResult, Finding, FindingSource, RunReport, Status
from checks.store.run_tables import RunRow, SeriesRow
from checks.store.series import expectation_band, run_series
from checks.store.store import Store
from tests.conftest import scratch_pg_database
from tests.stored_reports import store_report

SLOT = dt.datetime(2026, 3, 2, 6, 0, tzinfo=dt.UTC)


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path}/lookout.db"
        return
    with scratch_pg_database() as url:
        yield url


def report(day: int, *, rows: int, missing: int, status: Status = Status.COMPLETED) -> RunReport:
    """A run of 'orders' on 2 March + ``day`` days: a typed missing check and a raw one."""
    slot = SLOT + dt.timedelta(days=day)
    percent = 100 * missing / rows
    return RunReport(
        automation="orders",
        scheduled_for=slot,
        status=status,
        finding=Finding.NEEDS_ATTENTION if missing else Finding.CLEAR,
        finding_source=FindingSource.CHECKS,
        checks=[
            CheckResult(
                "emails",
                "SELECT …",
                "<= 1%",
                percent,
                CheckOutcome.PASSED if percent <= 1 else CheckOutcome.FAILED,
                None,
                "C1",
                kind="missing",
                metrics={
                    "rows_in_scope": rows,
                    "missing": missing,
                    "missing_percent": percent,
                    "compared": "missing",
                },
            ),
            CheckResult("paid", "SELECT true", "is true", True, CheckOutcome.PASSED, None, "C2"),
            CheckResult(
                "sum",
                "SELECT 1.5",
                "between 1 and 2",
                Decimal("1.5"),
                CheckOutcome.PASSED,
                None,
                "C3",
            ),
        ],
        started_at=slot,
        finished_at=slot + dt.timedelta(seconds=1),
    )


def test_each_run_writes_its_values_bands_and_metrics(store_url: str) -> None:
    store = Store(store_url)
    ids = [store_report(store, report(day, rows=100 + day, missing=day % 3)) for day in range(5)]
    with store.session() as session:
        stored = session.scalars(
            select(SeriesRow).where(SeriesRow.run_id == ids[2]).order_by(SeriesRow.id)
        ).all()
        got = [(r.check_name, r.metric, r.value, r.low, r.high, r.outcome) for r in stored]
        assert [r.scheduled_for for r in stored] == [SLOT + dt.timedelta(days=2)] * len(stored)
    assert got == [
        ("emails", "value", pytest.approx(100 * 2 / 102), None, 1.0, "failed"),
        ("emails", "rows_in_scope", 102.0, None, None, "failed"),
        ("emails", "missing", 2.0, None, None, "failed"),
        ("emails", "missing_percent", pytest.approx(100 * 2 / 102), None, None, "failed"),
        ("paid", "value", 1.0, 1.0, 1.0, "passed"),
        ("sum", "value", 1.5, 1.0, 2.0, "passed"),
    ]
    series = store.series("orders", "emails", "missing")
    assert [(p.run_id, p.value) for p in series] == list(
        zip(ids, [0.0, 1.0, 2.0, 0.0, 1.0], strict=True)
    )
    before = store.series("orders", "emails", "rows_in_scope", before=SLOT + dt.timedelta(days=3))
    assert [p.value for p in before] == [100.0, 101.0, 102.0]
    newest = store.series("orders", "emails", limit=2, exclude_run=ids[4])
    assert [p.run_id for p in newest] == [ids[2], ids[3]]
    assert store.series("orders", "nope") == []
    store.close()


def test_a_baseline_reads_completed_runs_and_a_chart_finished_ones(store_url: str) -> None:
    store = Store(store_url)
    done = store_report(store, report(0, rows=10, missing=0))
    failed = store_report(store, report(1, rows=10, missing=1, status=Status.ERROR))
    assert [p.run_id for p in store.series("orders", "emails")] == [done]
    assert [p.run_id for p in store.series("orders", "emails", completed_only=False)] == [
        done,
        failed,
    ]
    store.close()


def test_a_runs_chart_holds_the_runs_up_to_it_and_itself(store_url: str) -> None:
    store = Store(store_url)
    ids = [store_report(store, report(day, rows=10, missing=day % 2)) for day in range(6)]
    with store.session() as session:
        third = session.get(RunRow, ids[3])
        assert third is not None
        charts = run_series(session, third, ["emails", "paid", "gone"], limit=3)
    assert [p.run_id for p in charts["emails"]] == ids[1:4]
    assert [p.value for p in charts["emails"]] == [10.0, 0.0, 10.0]
    assert [p.outcome for p in charts["emails"]] == ["failed", "passed", "failed"]
    assert [p.run_id for p in charts["paid"]] == ids[1:4]
    assert charts["gone"] == []
    store.close()


def test_points_go_with_their_run(store_url: str) -> None:
    store = Store(store_url)
    run = store_report(store, report(0, rows=10, missing=0))
    with store.engine.begin() as conn:
        conn.execute(text("DELETE FROM runs WHERE id = :id"), {"id": run})
        left = conn.execute(text("SELECT count(*) FROM check_series")).scalar_one()
    assert left == 0
    store.close()


@pytest.mark.parametrize(
    ("expect", "band"),
    [
        ("== 0", (0.0, 0.0)),
        ("!= 3", (None, None)),
        ("< 0.03", (None, 0.03)),
        ("<= 1%", (None, 1.0)),
        ("> 0", (0.0, None)),
        (">= 10", (10.0, None)),
        ("between 1h and 2d", (3600.0, 172800.0)),
        ("empty", (0.0, 0.0)),
        ("not empty", (1.0, None)),
        ("is true", (1.0, 1.0)),
        ("is false", (0.0, 0.0)),
        ("not an expectation", (None, None)),
    ],
)
def test_the_band_of_each_expectation(expect: str, band: tuple[float | None, float | None]) -> None:
    assert expectation_band(expect) == band


def _alembic(url: str, revision: str) -> None:
    cfg = Config()
    cfg.set_main_option("script_location", str(files("checks.store") / "migrations"))
    engine = create_engine(url)
    with engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, revision)
    engine.dispose()


def test_upgrading_a_store_fills_the_series_from_the_runs_it_holds(store_url: str) -> None:
    url = store_url
    _alembic(url, "0011")
    engine = create_engine(url)
    with engine.begin() as conn:
        for run_id, (day, status) in enumerate(
            [(0, "completed"), (1, "error"), (2, "running")], start=1
        ):
            conn.execute(
                text(
                    "INSERT INTO runs (id, automation, scheduled_for, trigger, status, summary,"
                    " created_at, definition, attempt, flags)"
                    " VALUES (:id, 'orders', :slot, 'manual', :status, '', :slot, '{}', 1, '')"
                ),
                {
                    "id": run_id,
                    "slot": (SLOT + dt.timedelta(days=day)).replace(tzinfo=None),
                    "status": status,
                },
            )
            conn.execute(
                text(
                    "INSERT INTO check_results (run_id, position, name, sql, expect, value,"
                    " passed, error, kind, outcome, metrics)"
                    " VALUES (:id, 0, 'emails', 'SELECT …', '<= 1%', :value, :passed, NULL,"
                    " 'missing', :outcome, :metrics)"
                ),
                {
                    "id": run_id,
                    "value": "2.5",
                    "passed": False,
                    "outcome": None if run_id == 1 else "failed",
                    "metrics": '{"rows_in_scope": 40, "missing": 1, "compared": "missing",'
                    ' "latest": "2026-03-01T00:00:00+00:00", "flag": true}',
                },
            )
    engine.dispose()
    store = Store(url)
    with store.session() as session:
        rows = session.scalars(select(SeriesRow).order_by(SeriesRow.id)).all()
        got = [(r.run_id, r.metric, r.value, r.low, r.high, r.outcome) for r in rows]
    assert got == [
        (1, "value", 2.5, None, 1.0, "failed"),
        (1, "rows_in_scope", 40.0, None, None, "failed"),
        (1, "missing", 1.0, None, None, "failed"),
        (2, "value", 2.5, None, 1.0, "failed"),
        (2, "rows_in_scope", 40.0, None, None, "failed"),
        (2, "missing", 1.0, None, None, "failed"),
    ]
    assert [p.scheduled_for for p in store.series("orders", "emails", completed_only=False)] == [
        SLOT,
        SLOT + dt.timedelta(days=1),
    ]
    store.close()


def test_the_migrations_are_one_line() -> None:
    from alembic.script import ScriptDirectory

    cfg = Config()
    cfg.set_main_option("script_location", str(files("checks.store") / "migrations"))
    assert len(ScriptDirectory.from_config(cfg).get_heads()) == 1
