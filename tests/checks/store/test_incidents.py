"""Incidents move on every stored run, alerts or not; announcing is decided apart from them."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from checks.automation.loader import load_automations
from checks.report import Finding, RunReport, Status
from checks.run import SourcePool
from checks.run_lifecycle import run_and_store
from checks.settings.config import Settings
from checks.store.incidents import NOT_ANNOUNCED, decide_run_events, load_run_events, open_incidents
from checks.store.store import Store
from tests.stored_reports import store_report

T0 = dt.datetime(2026, 12, 1, 9, 0, tzinfo=dt.UTC)
HOUR = dt.timedelta(hours=1)
NA, CLEAR = Finding.NEEDS_ATTENTION, Finding.CLEAR


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    opened = Store(f"sqlite:///{tmp_path / 'lookout.db'}")
    yield opened
    opened.close()


def stored(
    store: Store, hours: float, finding: Finding | None, status: Status = Status.COMPLETED
) -> RunReport:
    report = RunReport(
        automation="orders",
        scheduled_for=T0 + hours * HOUR,
        status=status,
        finding=finding,
        definition={"repeat_interval": 86_400},
    )
    store_report(store, report)
    return report


def plan(store: Store, report: RunReport, hours: float, *, announce: bool) -> list[str]:
    events = decide_run_events(
        store.engine, report, now=T0 + hours * HOUR, announce=announce
    ).events
    return [str(e.kind) + ("+" if e.reminder else "") for e in events]


def test_runs_that_announce_nothing_still_open_continue_and_resolve_the_incident(
    store: Store,
) -> None:
    first = stored(store, 0, NA)
    assert plan(store, first, 0, announce=False) == []
    [incident] = open_incidents(store.engine, "orders")
    assert (incident.kind, incident.opened_run_id, incident.last_notified_at) == (
        "attention",
        first.run_id,
        None,
    )
    stored_plan = load_run_events(store.engine, first.run_id or 0)
    assert stored_plan is not None and stored_plan.note == NOT_ANNOUNCED
    second = stored(store, 1, NA)
    assert plan(store, second, 1, announce=False) == []
    assert [i.id for i in open_incidents(store.engine, "orders")] == [incident.id]  # continued
    clear = stored(store, 2, CLEAR)
    assert plan(store, clear, 2, announce=False) == []  # never announced: no "resolved" either
    assert open_incidents(store.engine) == []


def test_an_incident_nobody_was_told_of_is_announced_by_the_first_run_that_announces(
    store: Store,
) -> None:
    plan(store, stored(store, 0, NA), 0, announce=False)
    assert plan(store, stored(store, 5, NA), 5, announce=True) == ["needs_attention"]  # no "+"
    assert plan(store, stored(store, 6, NA), 6, announce=True) == []
    assert plan(store, stored(store, 29, NA), 29, announce=True) == ["needs_attention+"]
    assert plan(store, stored(store, 30, CLEAR), 30, announce=True) == ["resolved"]


def test_an_error_incident_opens_without_alerts_and_a_completed_run_closes_it(
    store: Store,
) -> None:
    plan(store, stored(store, 0, None, Status.ERROR), 0, announce=False)
    assert [i.kind for i in open_incidents(store.engine)] == ["error"]
    plan(store, stored(store, 1, NA), 1, announce=False)
    assert [i.kind for i in open_incidents(store.engine)] == ["attention"]


def test_lookout_run_without_notify_moves_incidents_through_run_and_store(
    tmp_path: Path, flights_settings: Settings
) -> None:
    folder = tmp_path / "automations"
    folder.mkdir()
    (folder / "wind.yaml").write_text(
        yaml.safe_dump(
            {
                "name": "wind",
                "source": "flights",
                "goal": "No wind reading is above 100 mph.",
                "checks": [
                    {"name": "strongest wind", "sql": "SELECT max(wind_speed) FROM weather",
                     "expect": "<= 100"},
                ],
            }
        ),
        encoding="utf-8",
    )  # fmt: skip
    [automation] = load_automations(folder, known_sources={"flights"}).automations
    store = Store(f"sqlite:///{tmp_path / 'l.db'}")
    try:
        with SourcePool(flights_settings) as pool:
            first = run_and_store(automation, flights_settings, pool, store)
            second = run_and_store(automation, flights_settings, pool, store)
        assert first.finding == second.finding == "needs_attention"
        [incident] = open_incidents(store.engine, "wind")
        assert incident.opened_run_id == first.run_id
        plans = [load_run_events(store.engine, r.run_id or 0) for r in (first, second)]
        assert [(p.events, p.note) for p in plans if p] == [([], NOT_ANNOUNCED)] * 2
    finally:
        store.close()
