"""A Clear run with warned checks alerts only the channels ``alerts.on_warning`` names."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from checks.errors import ConfigError
from checks.report import CheckOutcome, CheckResult, Finding, RunReport, Status
from checks.settings.config import load_settings
from checks.store.incidents import load_run_events, open_incidents
from checks.store.store import Store
from tests.stored_reports import store_report
from tests.worker.alerts.test_incident import settings_for
from worker.alerts.delivery import build_alert, deliver_for_run
from worker.alerts.fake_chat import FakeChat

T0 = dt.datetime(2026, 12, 1, 9, 0, tzinfo=dt.UTC)
HOUR = dt.timedelta(hours=1)
LINE = "emails: 3 of 100 rows missing (3.00 %); beyond the warning level <= 1% (expected <= 5%)"


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    opened = Store(f"sqlite:///{tmp_path / 'lookout.db'}")
    yield opened
    opened.close()


def emails(outcome: CheckOutcome = CheckOutcome.WARNED) -> CheckResult:
    check = CheckResult(
        "emails",
        "SELECT …",
        "<= 5%",
        3.0,
        outcome,
        kind="missing",
        reason="beyond the warning level <= 1%" if outcome is CheckOutcome.WARNED else None,
        warn="<= 1%",
    )
    check.metrics = {"rows_in_scope": 100, "missing": 3, "compared": "missing"}
    return check


def stored(
    store: Store, at: dt.datetime, finding: Finding, *checks: CheckResult, **definition: Any
) -> RunReport:
    report = RunReport(
        automation="customers",
        scheduled_for=at,
        status=Status.COMPLETED,
        finding=finding,
        summary="**Clear** — the check passed; 1 warning (on **emails**).",
        definition={"notify": ["team"], **definition},
        checks=list(checks),
    )
    store_report(store, report)
    return report


def test_a_warned_run_alerts_no_one_unless_a_channel_asks(store: Store) -> None:
    with FakeChat("webhook") as team:
        settings = settings_for({"team": team.channel()})
        report = stored(store, T0, Finding.CLEAR, emails())
        assert deliver_for_run(store, settings, report, now=T0) == []
        assert team.requests == []
    events = load_run_events(store.engine, report.run_id or 0)
    assert events is not None and [e.kind for e in events.events] == ["warned"]
    assert open_incidents(store.engine) == []  # a warning opens no incident


def test_on_warning_true_sends_to_the_automations_own_channels(store: Store) -> None:
    with FakeChat("webhook") as team, FakeChat("webhook") as other:
        settings = settings_for({"team": team.channel(), "other": other.channel()}, on_warning=True)
        report = stored(store, T0, Finding.CLEAR, emails())
        records = deliver_for_run(store, settings, report, now=T0)
        assert [(r.channel, r.event, r.status) for r in records] == [("team", "warned", "sent")]
        assert other.requests == []
        doc = team.requests[0].json
    assert (doc["event"], doc["finding"], doc["warnings"]) == ("warned", "clear", [LINE])
    alert = build_alert(
        report, load_run_events(store.engine, report.run_id or 0).events[0], settings
    )  # type: ignore[union-attr]
    assert alert.title == "Warning: customers is Clear with 1 warning"
    assert ("Warning", LINE) in alert.facts()
    assert alert.fallback_text() == (
        f"customers is Clear with 1 warning: https://review.example/runs/{report.run_id}"
    )
    assert open_incidents(store.engine) == []


def test_on_warning_as_a_list_sends_only_to_those_channels(store: Store) -> None:
    with FakeChat("webhook") as team, FakeChat("webhook") as digest:
        settings = settings_for(
            {"team": team.channel(), "digest": digest.channel()}, on_warning=["digest"]
        )
        warned = stored(store, T0, Finding.CLEAR, emails())
        assert [r.channel for r in deliver_for_run(store, settings, warned, now=T0)] == ["digest"]
        passed = stored(store, T0 + HOUR, Finding.CLEAR, emails(CheckOutcome.PASSED))
        assert deliver_for_run(store, settings, passed, now=T0 + HOUR) == []
        rows = CheckResult("rows", "SELECT count(*) FROM customers", "> 0", 0, CheckOutcome.FAILED)
        failing = stored(store, T0 + 2 * HOUR, Finding.NEEDS_ATTENTION, emails(), rows)
        records = deliver_for_run(store, settings, failing, now=T0 + 2 * HOUR)
        assert [(r.channel, r.event) for r in records] == [("team", "needs_attention")]
        assert team.requests[0].json["warnings"] == [LINE]  # beside the failure, no own event
        assert len(digest.requests) == 1


def test_on_warning_names_configured_channels(tmp_path: Path) -> None:
    path = tmp_path / "lookout.yaml"
    path.write_text("alerts:\n  on_warning: [digest]\n", encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_settings(path, env={})
    assert caught.value.location_message() == (
        f"{path}:2:16: alerts.on_warning.0: unknown channel 'digest'; known: none are configured"
    )
