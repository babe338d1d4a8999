"""Incidents, reminders, resolution, routing and quiet hours, with an injected clock."""

from __future__ import annotations

import datetime as dt
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from sqlalchemy.orm import Session

from checks.report import Finding, RunReport, Status
from checks.settings.alerts import EventKind, QuietHours
from checks.settings.config import Settings
from checks.store.alert_tables import DeliveryRow
from checks.store.incidents import decide_run_events, load_run_events, open_incidents
from checks.store.store import Store
from tests.stored_reports import store_report
from worker.alerts.delivery import deliver_due, deliver_for_run
from worker.alerts.delivery_log import list_deliveries
from worker.alerts.fake_chat import FakeChat

T0 = dt.datetime(2026, 12, 1, 9, 0, tzinfo=dt.UTC)
HOUR = dt.timedelta(hours=1)
NA, CLEAR = Finding.NEEDS_ATTENTION, Finding.CLEAR


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    opened = Store(f"sqlite:///{tmp_path / 'lookout.db'}")
    yield opened
    opened.close()


def settings_for(channels: dict[str, dict[str, Any]], **alerts: Any) -> Settings:
    return Settings.model_validate(
        {
            "review_base_url": "https://review.example",
            "channels": {n: {"rate_per_s": 50, **c} for n, c in channels.items()},
            "alerts": {"rate_limiter": "memory", "backoff_base_s": 0.01, **alerts},
        }
    )


class Runs:
    """Stores runs of one automation at given times, as the scheduler would."""

    def __init__(self, store: Store, automation: str = "orders", **definition: Any) -> None:
        self.store = store
        self.automation = automation
        self.definition = {"notify": ["c"], "owner": "data-team", **definition}

    def add(
        self,
        at: dt.datetime,
        finding: Finding | None = NA,
        *,
        status: Status = Status.COMPLETED,
        opinion: dict[str, Any] | None = None,
        error: str | None = None,
    ) -> RunReport:
        report = RunReport(
            automation=self.automation,
            scheduled_for=at,
            status=status,
            finding=finding,
            summary=f"run at {at:%H:%M}",
            second_opinion=opinion,
            error=error,
            definition=self.definition,
        )
        store_report(self.store, report)
        return report


@dataclass(frozen=True)
class Step:
    offset_h: float
    finding: Finding | None
    expected: tuple[str, ...]  # events sent, "+" marks a reminder
    status: Status = Status.COMPLETED


def sent_events(store: Store, report: RunReport) -> tuple[str, ...]:
    records = reversed(list_deliveries(store.engine, run_id=report.run_id))
    return tuple(r.event + ("+" if r.reminder else "") for r in records)


def test_reminders_come_only_every_repeat_interval_and_resolved_closes(store: Store) -> None:
    steps = [
        Step(0, NA, ("needs_attention",)),
        Step(1, NA, ()),
        Step(23.9, NA, ()),
        Step(24, NA, ("needs_attention+",)),
        Step(30, NA, ()),
        Step(48, NA, ("needs_attention+",)),
        Step(49, CLEAR, ("resolved",)),
        Step(50, CLEAR, ()),
        Step(51, NA, ("needs_attention",)),  # a new incident
    ]
    with FakeChat("webhook") as fake:
        settings = settings_for({"c": fake.channel()})
        runs = Runs(store)
        for step in steps:
            at = T0 + step.offset_h * HOUR
            report = runs.add(at, step.finding)
            deliver_for_run(store, settings, report, now=at)
            assert sent_events(store, report) == step.expected, step
        bodies = [r.json for r in fake.requests]
    assert len(bodies) == 5
    assert [b["reminder"] for b in bodies] == [False, True, True, False, False]
    first, *_, resolved, reopened = bodies
    assert resolved["incident"]["thread_key"] == first["incident"]["thread_key"]
    assert reopened["incident"]["thread_key"] != first["incident"]["thread_key"]
    assert resolved["incident"]["opened_at"] == T0.isoformat()


def test_repeat_interval_comes_from_the_automation(store: Store) -> None:
    with FakeChat("webhook") as fake:
        settings = settings_for({"c": fake.channel()})
        runs = Runs(store, repeat_interval=3600.0)
        for offset in (0, 0.5, 1, 1.5, 2):
            at = T0 + offset * HOUR
            deliver_for_run(store, settings, runs.add(at), now=at)
        assert [r.json["reminder"] for r in fake.requests] == [False, True, True]


def test_the_resolved_message_lands_in_the_alert_thread(store: Store) -> None:
    with FakeChat("google_chat") as fake:
        settings = settings_for({"c": fake.channel()})
        runs = Runs(store)
        deliver_for_run(store, settings, runs.add(T0), now=T0)
        deliver_for_run(store, settings, runs.add(T0 + HOUR, CLEAR), now=T0 + HOUR)
        alert, resolved = fake.requests
    [incident_key] = {alert.json["thread"]["threadKey"], resolved.json["thread"]["threadKey"]}
    assert incident_key == "lookout-orders-1"
    for request in (alert, resolved):
        assert request.query["messageReplyOption"] == "REPLY_MESSAGE_FALLBACK_TO_NEW_THREAD"
    assert resolved.json["text"].startswith("*Resolved: orders is Clear again*")
    assert "Open since: 2026-12-01 09:00 UTC" in resolved.json["text"]


def test_quiet_hours_hold_a_worth_a_look_but_not_an_act_now(store: Store) -> None:
    quiet = {"start": "22:00", "end": "07:00", "timezone": "Europe/Paris"}
    night = dt.datetime(2026, 12, 1, 21, 30, tzinfo=dt.UTC)  # 22:30 in Paris
    morning = dt.datetime(2026, 12, 2, 6, 0, tzinfo=dt.UTC)  # 07:00 in Paris
    with FakeChat("slack") as fake:
        settings = settings_for({"c": fake.channel(quiet_hours=quiet)})
        calm = Runs(store, "calm").add(night, opinion={"urgency": "worth_a_look"})
        fire = Runs(store, "fire").add(night, opinion={"urgency": "act_now"})
        [held] = deliver_for_run(store, settings, calm, now=night)
        [sent] = deliver_for_run(store, settings, fire, now=night)
        assert (held.status, held.not_before) == ("deferred", morning)
        assert sent.status == "sent"
        assert len(fake.requests) == 1  # only the act-now alert went out at night
        assert deliver_due(store, settings, now=morning - dt.timedelta(minutes=1)) == []
        [later] = deliver_due(store, settings, now=morning)
        assert deliver_due(store, settings, now=morning) == []
        assert len(fake.requests) == 2
        assert fake.requests[1].json["text"] == "Needs attention: calm"
    assert (later.id, later.status) == (held.id, "sent")


@pytest.mark.parametrize(
    ("local", "end"),
    [
        ("2026-12-01T21:59", None),
        ("2026-12-01T22:00", "2026-12-02T07:00"),
        ("2026-12-02T03:00", "2026-12-02T07:00"),
        ("2026-12-02T07:00", None),
        ("2026-03-29T01:30", "2026-03-29T07:00"),  # the night clocks go forward
    ],
)
def test_quiet_hours_window_spans_midnight_in_local_time(local: str, end: str | None) -> None:
    window = QuietHours(start="22:00", end="07:00", timezone="Europe/Paris")
    paris = ZoneInfo("Europe/Paris")
    now = dt.datetime.fromisoformat(local).replace(tzinfo=paris)
    expected = dt.datetime.fromisoformat(end).replace(tzinfo=paris) if end else None
    assert window.window_end(now) == expected


def test_run_errors_open_their_own_incident_and_remind_on_the_interval(store: Store) -> None:
    steps = [
        Step(0, None, ("run_error",), Status.ERROR),
        Step(1, None, (), Status.ERROR),
        Step(24, None, ("run_error+",), Status.ERROR),
        Step(25, CLEAR, ("resolved",)),
        Step(26, CLEAR, ()),
    ]
    with FakeChat("webhook") as fake:
        settings = settings_for({"c": fake.channel()})
        runs = Runs(store)
        for step in steps:
            at = T0 + step.offset_h * HOUR
            report = runs.add(at, step.finding, status=step.status, error="source unreachable")
            deliver_for_run(store, settings, report, now=at)
            assert sent_events(store, report) == step.expected, step
        assert fake.requests[0].json["summary"] == "source unreachable"
    assert open_incidents(store.engine) == []


def test_flags_are_their_own_events_but_one_message_per_channel_and_run(store: Store) -> None:
    changed = {"flags": ["changed_since_last_run"], "urgency": "act_soon"}
    disagrees = {"flags": {"double_check_disagrees": True}}
    with FakeChat("webhook") as fake:
        settings = settings_for({"c": fake.channel()})
        runs = Runs(store)
        first = runs.add(T0, opinion=changed)
        deliver_for_run(store, settings, first, now=T0)
        clear = runs.add(T0 + HOUR, CLEAR, opinion=disagrees)
        deliver_for_run(store, settings, clear, now=T0 + HOUR)
        quiet = runs.add(T0 + 2 * HOUR, CLEAR, opinion=disagrees)
        deliver_for_run(store, settings, quiet, now=T0 + 2 * HOUR)
    assert sent_events(store, first) == ("needs_attention",)  # the flag rides along
    assert fake.requests[0].json["flags"] == ["changed_since_last_run"]
    assert sent_events(store, clear) == ("resolved",)
    assert sent_events(store, quiet) == ("double_check_disagrees",)
    plan = load_run_events(store.engine, first.run_id or 0)
    assert plan is not None
    assert [e.kind for e in plan.events] == ["needs_attention", "changed_since_last_run"]


def test_routing_defaults_routes_channel_filters_and_enabled_events(store: Store) -> None:
    names = ("team", "pager", "digest")
    fakes = {n: FakeChat("webhook").start() for n in names}
    try:
        settings = settings_for(
            {
                "team": fakes["team"].channel(),
                "pager": fakes["pager"].channel(),
                "digest": fakes["digest"].channel(events=["resolved"]),
            },
            default_channels=["team", "digest"],
            routes={"run_error": ["pager"]},
            events=["needs_attention", "run_error", "resolved"],
        )
        runs = Runs(store, notify=[])
        plan = [
            (runs.add(T0, opinion={"flags": ["changed_since_last_run"]}), {"team"}),
            (runs.add(T0 + HOUR, None, status=Status.ERROR), {"team", "pager"}),
            (runs.add(T0 + 2 * HOUR, CLEAR), {"team", "digest"}),
        ]
        for report, expected in plan:
            records = deliver_for_run(store, settings, report, now=report.scheduled_for)
            assert {r.channel for r in records} == expected
    finally:
        for fake in fakes.values():
            fake.stop()
    assert [r.json["event"] for r in fakes["digest"].requests] == ["resolved"]


def test_a_run_older_than_one_already_announced_sends_nothing(store: Store) -> None:
    with FakeChat("webhook") as fake:
        settings = settings_for({"c": fake.channel()})
        runs = Runs(store)
        late = runs.add(T0)
        newer = runs.add(T0 + HOUR)
        deliver_for_run(store, settings, newer, now=T0 + HOUR)
        assert deliver_for_run(store, settings, late, now=T0 + 2 * HOUR) == []
        assert len(fake.requests) == 1
    plan = load_run_events(store.engine, late.run_id or 0)
    assert plan is not None and plan.events == [] and "newer run" in (plan.note or "")


def test_concurrent_planners_decide_a_run_once(store: Store) -> None:
    report = Runs(store).add(T0)
    barrier = threading.Barrier(4)
    plans = []

    def planner() -> None:
        barrier.wait()
        plans.append(decide_run_events(store.engine, report, now=T0))

    threads = [threading.Thread(target=planner) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(p.new for p in plans) == [False, False, False, True]
    assert {tuple(p.events) for p in plans} == {tuple(plans[0].events)}
    assert [e.kind for e in plans[0].events] == [EventKind.NEEDS_ATTENTION]
    assert len(open_incidents(store.engine, "orders")) == 1


def test_a_delivery_left_sending_by_a_dead_worker_is_closed_not_resent(store: Store) -> None:
    report = Runs(store).add(T0)
    with Session(store.engine) as session, session.begin():
        session.add(
            DeliveryRow(
                run_id=report.run_id,
                event="needs_attention",
                channel="c",
                channel_type="slack",
                reminder=False,
                status="sending",
                alert={},
                attempts=0,
                created_at=T0,
                claimed_at=T0,
            )
        )
    settings = settings_for({}, stale_sending_s=600)
    assert deliver_due(store, settings, now=T0 + dt.timedelta(minutes=5)) == []
    [closed] = deliver_due(store, settings, now=T0 + dt.timedelta(minutes=11))
    assert closed.status == "failed"
    assert closed.error is not None and "outcome unknown, not resent" in closed.error
