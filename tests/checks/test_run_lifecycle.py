"""The one run lifecycle (``checks.run_lifecycle``): row, run, finish fenced, incidents.

``lookout run`` starts its own row; the service hands over the row it claimed;
``lookout eval`` keeps nothing. What the three share is tested here; the
worker's side with real processes is ``tests/worker/service/test_same_report.py``.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pytest

import checks.run
from checks.automation.model import CHECKS_GOAL, Automation
from checks.errors import StoreError
from checks.eval.runner import run_case_once
from checks.report import RunReport, Status
from checks.run import SourcePool
from checks.run_lifecycle import Claim, run_and_store
from checks.settings.config import Settings
from checks.store.incidents import RunEvents, load_run_events
from checks.store.opinion_reads import opinion_inputs
from checks.store.store import Store

SLOT = dt.datetime(2026, 12, 1, 9, 0, tzinfo=dt.UTC)


def automation(**fields: Any) -> Automation:
    data = {
        "name": "flights-exist",
        "source": "flights",
        "checks": [{"name": "flights", "sql": "SELECT count(*) FROM flights", "expect": "> 0"}],
        "path": "flights-exist.yaml",
        "line": 1,
        **fields,
    }
    return Automation.model_validate(data)


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return Store(f"sqlite:///{tmp_path / 'lookout.db'}")


def test_a_started_run_is_stored_with_its_incidents_moved(
    flights_settings: Settings, store: Store
) -> None:
    delivered: list[tuple[RunReport, RunEvents | None]] = []
    with SourcePool(flights_settings) as pool:
        report = run_and_store(
            automation(),
            flights_settings,
            pool,
            store,
            scheduled_for=SLOT,
            deliver=lambda r, p: delivered.append((r, p)),
        )
        with pytest.raises(StoreError, match="already has a run for 2026-12-01T09:00:00"):
            run_and_store(automation(), flights_settings, pool, store, scheduled_for=SLOT)
    assert (report.status, report.finding, report.attempt) == (Status.COMPLETED, "clear", 1)
    stored = store.get_run(report.run_id or 0)
    assert stored is not None and stored.status == Status.COMPLETED
    assert load_run_events(store.engine, report.run_id or 0) is not None  # its incidents moved
    assert [(r.run_id, p is not None) for r, p in delivered] == [(report.run_id, True)]


def test_the_second_opinion_is_told_the_run_it_is_for(
    flights_settings: Settings, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked: list[int | None] = []
    real = opinion_inputs

    def spy(*args: Any, **kwargs: Any) -> Any:
        asked.append(kwargs["before_run"])
        return real(*args, **kwargs)

    monkeypatch.setattr(checks.run, "opinion_inputs", spy)
    with SourcePool(flights_settings) as pool:
        first = run_and_store(automation(), flights_settings, pool, store, scheduled_for=SLOT)
        second = run_and_store(
            automation(), flights_settings, pool, store, scheduled_for=SLOT + dt.timedelta(hours=1)
        )
    assert asked == [first.run_id, second.run_id] and None not in asked
    assert second.second_opinion is not None


def test_a_claimed_row_is_finished_fenced_on_its_attempt(
    flights_settings: Settings, store: Store
) -> None:
    run_id = store.create_run("flights-exist", SLOT, definition=automation().definition())
    assert run_id is not None and store.claim_run(run_id, lease_s=-1) == 1  # its lease ran out
    assert store.claim_run(run_id, lease_s=60) == 2  # the reaper's next attempt took it
    with SourcePool(flights_settings) as pool:
        late = run_and_store(
            automation(), flights_settings, pool, store, claim=Claim(run_id, 1), scheduled_for=SLOT
        )
        current = run_and_store(
            automation(), flights_settings, pool, store, claim=Claim(run_id, 2), scheduled_for=SLOT
        )
    assert late.status == Status.COMPLETED  # ran, but its result was refused
    assert load_run_events(store.engine, run_id) is not None
    stored = store.get_run(run_id)
    assert stored is not None and (stored.status, stored.attempt) == (Status.COMPLETED, 2)
    assert current.attempt == 2


def test_a_known_failure_ends_the_run_with_its_reason_and_a_bug_propagates(
    flights_settings: Settings, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    class TimeUp(Exception):
        pass

    def stops(*_: object, **__: object) -> RunReport:
        raise TimeUp

    monkeypatch.setattr("checks.run_lifecycle.run_automation", stops)
    delivered: list[int | None] = []
    with SourcePool(flights_settings) as pool:
        report = run_and_store(
            automation(),
            flights_settings,
            pool,
            store,
            scheduled_for=SLOT,
            deliver=lambda r, _p: delivered.append(r.run_id),
            known_failure=lambda exc: "time is up" if isinstance(exc, TimeUp) else None,
        )
        with pytest.raises(TimeUp):
            run_and_store(
                automation(), flights_settings, pool, store, scheduled_for=SLOT + dt.timedelta(1)
            )
    assert (report.status, report.error) == (Status.ERROR, "time is up")
    assert delivered == [report.run_id]
    [bug] = [r for r in store.list_runs(limit=10) if r.run_id != report.run_id]
    assert (bug.status, bug.error) == (Status.ERROR, "internal error: TimeUp: ")


def test_eval_runs_through_the_lifecycle_and_keeps_nothing(
    flights_settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[object] = []
    real = run_and_store

    def spy(*args: Any, **kwargs: Any) -> RunReport:
        seen.append(args[3])
        return real(*args, **kwargs)

    monkeypatch.setattr("checks.run_lifecycle.run_and_store", spy)
    outcome = run_case_once(automation(), flights_settings, 1, SLOT)
    assert (outcome.status, outcome.finding) == ("completed", "clear")
    assert seen == [None]  # no store


def test_goal_is_optional_when_the_automation_declares_checks() -> None:
    checks_only = automation()
    assert checks_only.goal is None and checks_only.task_goal == CHECKS_GOAL
    assert automation(goal="Flights exist.").task_goal == "Flights exist."
    with pytest.raises(ValueError, match="required field is missing"):
        automation(checks=[])
