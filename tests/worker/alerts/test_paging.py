"""PagerDuty and Opsgenie: a page per incident, opened, reminded and closed, over real HTTP.

The fakes (``worker.alerts.fake_paging``) refuse what the services document;
the PagerDuty fake is also driven by the real ``pagerduty`` client library,
which must accept its answers, and the Opsgenie fake by the real ``opsgenie-sdk``,
whose models must also take what Lookout sends.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from pathlib import Path

import httpx
import httpx2
import opsgenie_sdk
import pagerduty
import pytest

from checks.errors import ConfigError
from checks.report import Status
from checks.settings.config import load_settings
from checks.store.store import Store
from tests.worker.alerts.test_incident import CLEAR, HOUR, NA, T0, Runs, settings_for
from worker.alerts.channels.pagerduty import page_severity
from worker.alerts.delivery import deliver_for_run
from worker.alerts.fake_chat import FakeChat
from worker.alerts.message import Alert

KEY = "R0UT1NGKEY0123456789abcdef012345"  # 32 characters, as PagerDuty's integration keys


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    opened = Store(f"sqlite:///{tmp_path / 'lookout.db'}")
    yield opened
    opened.close()


def test_pagerduty_triggers_per_incident_reminds_on_the_same_key_and_resolves(
    store: Store,
) -> None:
    with FakeChat("pagerduty") as fake:
        settings = settings_for({"pd": fake.channel(routing_key=KEY)})
        runs = Runs(store, notify=["pd"], severity="high", owner="data-team")
        first = runs.add(T0, NA)
        assert [(r.event, r.status) for r in deliver_for_run(store, settings, first, now=T0)] == [
            ("needs_attention", "sent")
        ]
        trigger = fake.requests[0]
        key = trigger.json["dedup_key"]
        assert key.startswith("lookout-orders-")
        assert trigger.json == {
            "routing_key": KEY,
            "event_action": "trigger",
            "dedup_key": key,
            "payload": {
                "summary": f"orders needs attention: https://review.example/runs/{first.run_id}",
                "source": "lookout",
                "severity": "critical",  # severity: high, no urgency
                "component": "orders",
                "class": "needs_attention",
                "custom_details": {
                    "run_id": first.run_id,
                    "status": "completed",
                    "finding": "needs_attention",
                    "urgency": None,
                    "summary": "run at 09:00",
                    "error": None,
                    "not_evaluated": [],
                    "warnings": [],
                    "reminder": False,
                    "opened_at": trigger.json["payload"]["custom_details"]["opened_at"],
                },
                "group": "data-team",
            },
            "client": "Lookout",
            "client_url": f"https://review.example/runs/{first.run_id}",
            "links": [
                {"href": f"https://review.example/runs/{first.run_id}", "text": "Lookout report"}
            ],
        }
        again = runs.add(T0 + 24 * HOUR, NA)  # the reminder: the same alert, not a new one
        deliver_for_run(store, settings, again, now=T0 + 24 * HOUR)
        clear = runs.add(T0 + 25 * HOUR, CLEAR)
        deliver_for_run(store, settings, clear, now=T0 + 25 * HOUR)
        sent = [(r.json["event_action"], r.json["dedup_key"]) for r in fake.requests]
        assert sent == [("trigger", key), ("trigger", key), ("resolve", key)]
        assert fake.requests[2].json == {
            "routing_key": KEY,
            "event_action": "resolve",
            "dedup_key": key,
        }
        assert fake.paged.states == {key: "resolved"}


def test_an_error_then_needs_attention_closes_one_page_and_opens_the_other(store: Store) -> None:
    with FakeChat("pagerduty") as pd, FakeChat("webhook") as chat:
        settings = settings_for({"pd": pd.channel(routing_key=KEY), "chat": chat.channel()})
        runs = Runs(store, notify=["pd", "chat"])
        failed = runs.add(T0, None, status=Status.ERROR, error="source down")
        deliver_for_run(store, settings, failed, now=T0)
        attention = runs.add(T0 + HOUR, NA)
        records = deliver_for_run(store, settings, attention, now=T0 + HOUR)
        assert sorted((r.channel, r.event) for r in records) == [
            ("chat", "needs_attention"),  # one message per chat channel and run
            ("pd", "needs_attention"),
            ("pd", "resolved"),
        ]
        error_key = pd.requests[0].json["dedup_key"]
        assert pd.requests[0].json["payload"]["severity"] == "error"
        assert pd.requests[0].json["payload"]["custom_details"]["summary"] == "source down"
        states = dict(pd.paged.states)
        attention_key = next(k for k in states if k != error_key)
        assert states == {error_key: "resolved", attention_key: "triggered"}
        assert [r.json["event"] for r in chat.requests] == ["run_error", "needs_attention"]


def test_opsgenie_creates_with_the_incident_as_alias_and_closes_it(store: Store) -> None:
    with FakeChat("opsgenie") as fake:
        channel = fake.channel(api_key="og-key-123", responders=[{"type": "team", "name": "dp"}])
        settings = settings_for({"og": channel})
        runs = Runs(store, notify=["og"], severity="medium")
        first = runs.add(T0, NA)
        deliver_for_run(store, settings, first, now=T0)
        created = fake.requests[0]
        alias = created.json["alias"]
        assert (created.path, created.headers["authorization"]) == (
            "/v2/alerts",
            "GenieKey og-key-123",
        )
        assert created.json == {
            "message": f"orders needs attention: https://review.example/runs/{first.run_id}",
            "alias": alias,
            "description": "run at 09:00",
            "priority": "P2",  # severity: medium
            "source": "Lookout",
            "entity": "orders",
            "tags": ["lookout", "needs_attention", "data-team"],
            "details": {
                "run_id": str(first.run_id),
                "status": "completed",
                "finding": "needs_attention",
                "link": f"https://review.example/runs/{first.run_id}",
            },
            "responders": [{"type": "team", "name": "dp"}],
        }
        clear = runs.add(T0 + HOUR, CLEAR)
        records = deliver_for_run(store, settings, clear, now=T0 + HOUR)
        assert [(r.event, r.status) for r in records] == [("resolved", "sent")]
        closed = fake.requests[1]
        assert (closed.path, closed.query) == (
            f"/v2/alerts/{alias}/close",
            {"identifierType": "alias"},
        )
        assert closed.json == {
            "source": "Lookout",
            "note": f"orders is resolved: https://review.example/runs/{clear.run_id}",
        }
        assert fake.paged.states == {alias: "closed"}


def test_the_fakes_refuse_what_the_services_refuse() -> None:
    with FakeChat("pagerduty") as pd, FakeChat("opsgenie") as og:
        bad = httpx.post(
            pd.url(),
            json={"routing_key": "short", "event_action": "trigger", "payload": {"severity": "x"}},
        )
        assert (bad.status_code, bad.json()) == (
            400,
            {
                "status": "invalid event",
                "message": "Event object is invalid",
                "errors": [
                    "Length of 'routing_key' is incorrect (should be 32 characters)",
                    "'payload.summary' is missing or blank",
                    "'payload.source' is missing or blank",
                    "'payload.severity' is invalid (must be one of the following: "
                    "'critical', 'warning', 'error' or 'info')",
                ],
            },
        )
        resolve = httpx.post(pd.url(), json={"routing_key": KEY, "event_action": "resolve"})
        assert resolve.json()["errors"] == ["'dedup_key' is missing or blank"]
        anonymous = httpx.post(og.url(), json={"message": "x"})
        assert (anonymous.status_code, anonymous.json()["message"]) == (
            401,
            "Could not authenticate",
        )
        long = httpx.post(
            og.url(),
            json={"message": "m" * 131, "priority": "P9"},
            headers={"Authorization": "GenieKey k"},
        )
        assert long.status_code == 422
        assert long.json()["errors"] == {
            "message": "Message can not be longer than 130 characters.",
            "priority": "Priority should be one of [P1, P2, P3, P4, P5].",
        }


def test_a_refused_page_is_a_failed_delivery_with_the_services_reason(store: Store) -> None:
    with FakeChat("pagerduty") as fake:
        settings = settings_for({"pd": fake.channel(routing_key=KEY)})
        # a key the service refuses (the load refuses one not of 32 letters and digits)
        refused = settings.channels["pd"].model_copy(update={"routing_key": "not-32-characters"})
        settings.channels["pd"] = refused
        report = Runs(store, notify=["pd"]).add(T0, NA)
        (record,) = deliver_for_run(store, settings, report, now=T0)
        assert record.status == "failed"
        assert "Length of 'routing_key' is incorrect (should be 32 characters)" in (
            record.error or ""
        )
        assert len(fake.requests) == 2  # the event, then its fallback: both refused


class _ToFake(httpx2.BaseTransport):
    """Sends each request of the real client to the fake on 127.0.0.1, over plain HTTP."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.inner = httpx2.HTTPTransport()

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        request.url = request.url.copy_with(scheme="http", host="127.0.0.1", port=self.port)
        return self.inner.handle_request(request)

    def close(self) -> None:
        self.inner.close()


def test_the_real_pagerduty_client_is_answered_as_by_pagerduty() -> None:
    with FakeChat("pagerduty") as fake:
        # the client takes only https:// base URLs: its requests are carried to the fake
        client = pagerduty.EventsApiV2Client(KEY, transport=_ToFake(fake.port))
        try:
            key = client.trigger("orders needs attention", "lookout", severity="error")
            assert len(key) == 32  # the fake made one, as PagerDuty does without a key
            assert client.resolve(key) == key
        finally:
            client.close()
        assert fake.paged.states == {key: "resolved"}
        trigger = fake.requests[0].json
        assert (trigger["routing_key"], trigger["event_action"]) == (KEY, "trigger")
        assert trigger["payload"] == {
            "summary": "orders needs attention",
            "source": "lookout",
            "severity": "error",
        }


def test_the_real_opsgenie_client_is_answered_as_by_opsgenie_and_takes_our_alert(
    store: Store,
) -> None:
    with FakeChat("opsgenie") as fake:
        conf = opsgenie_sdk.configuration.Configuration()
        conf.api_key["Authorization"] = "og-key"
        conf.host = f"http://127.0.0.1:{fake.port}"
        client = opsgenie_sdk.api_client.ApiClient(configuration=conf)
        api = opsgenie_sdk.AlertApi(api_client=client)
        created = api.create_alert(
            create_alert_payload=opsgenie_sdk.CreateAlertPayload(
                message="orders needs attention", alias="lookout-orders-1", priority="P2"
            )
        )
        assert (type(created).__name__, created.result) == (
            "SuccessResponse",
            "Request will be processed",
        )
        closed = api.close_alert(
            identifier="lookout-orders-1",
            identifier_type="alias",
            close_alert_payload=opsgenie_sdk.CloseAlertPayload(source="Lookout"),
        )
        assert closed.result == "Request will be processed"
        assert fake.paged.states == {"lookout-orders-1": "closed"}
        assert fake.requests[0].headers["authorization"] == "GenieKey og-key"
        # what Lookout sends is a payload the SDK's own models take, field for field
        settings = settings_for({"og": fake.channel(api_key="k")})
        report = Runs(store, notify=["og"]).add(T0, NA)
        deliver_for_run(store, settings, report, now=T0)
        ours = fake.requests[-1].json
        model = opsgenie_sdk.CreateAlertPayload(**ours)
        assert client.sanitize_for_serialization(model) == ours


def test_severity_follows_the_urgency_then_the_automations_severity() -> None:
    def alert(**fields: object) -> Alert:
        return Alert(event="needs_attention", automation="a", run_id=1, link="x", **fields)  # type: ignore[arg-type]

    assert [
        page_severity(alert(urgency=u))
        for u in ("act_now", "act_soon", "worth_a_look", "nothing_to_do")
    ] == ["critical", "error", "warning", "info"]
    assert [page_severity(alert(severity=s)) for s in ("high", "medium", "low", None)] == [
        "critical",
        "error",
        "warning",
        "error",
    ]
    assert (
        page_severity(
            Alert(event="run_error", automation="a", run_id=1, link="x", urgency="act_now")
        )
        == "error"
    )


def test_notify_test_sends_a_quiet_page(store: Store) -> None:
    from worker.alerts.delivery import send_test

    with FakeChat("pagerduty") as fake:
        settings = settings_for({"pd": fake.channel(routing_key=KEY)})
        record = send_test(store, settings, "pd")
        assert record.status == "sent"
        event = fake.requests[0].json
        assert (event["event_action"], event["dedup_key"], event["payload"]["severity"]) == (
            "trigger",
            "lookout-lookout-test-test",
            "info",
        )


def test_a_pager_takes_only_the_events_of_an_incident(tmp_path: Path) -> None:
    path = tmp_path / "lookout.yaml"
    path.write_text(
        f"channels:\n  pd:\n    type: pagerduty\n    routing_key: {KEY}\n    events: [warned]\n"
    )
    with pytest.raises(ConfigError) as caught:
        load_settings(path, env={})
    assert caught.value.location_message() == (
        f"{path}:5:13: channels.pd.events: a pager takes only needs_attention, run_error, resolved:"
        " warned opens no incident, so nothing would close its page"
    )


@pytest.mark.parametrize(
    ("key", "env", "message"),
    [
        (
            "abc",
            {},
            "4:18: channels.pd.routing_key: routing_key is 3 characters long: a PagerDuty routing"
            " key (an Events API v2 integration key) is 32 letters and digits",
        ),
        (
            "${PD_KEY}",
            {"PD_KEY": KEY[:16] + " " + KEY[17:]},
            "4:18: channels.pd.routing_key: routing_key holds a character other than a letter or"
            " digit (a space or a quote?): a PagerDuty routing key is 32 letters and digits",
        ),
    ],
)
def test_a_routing_key_not_of_32_letters_and_digits_is_refused_at_load(
    tmp_path: Path, key: str, env: dict[str, str], message: str
) -> None:
    path = tmp_path / "lookout.yaml"
    path.write_text(f"channels:\n  pd:\n    type: pagerduty\n    routing_key: {key}\n")
    with pytest.raises(ConfigError) as caught:
        load_settings(path, env=env)
    assert caught.value.location_message() == f"{path}:{message}"
    assert KEY[:16] not in str(caught.value)  # the key is a secret, even in an error


def test_a_misspelt_channel_type_is_named_with_the_closest(tmp_path: Path) -> None:
    path = tmp_path / "lookout.yaml"
    path.write_text(f"channels:\n  pd:\n    type: pagerduti\n    routing_key: {KEY}\n")
    with pytest.raises(ConfigError) as caught:
        load_settings(path, env={})
    assert caught.value.location_message() == (
        f"{path}:3:11: channels.pd.type: unknown channel type 'pagerduti' (did you mean"
        " 'pagerduty'?): the types are slack, teams, google_chat, discord, webhook, apprise,"
        " pagerduty, opsgenie (docs/alerts.md)"
    )


def test_the_eu_service_region_is_its_url(tmp_path: Path) -> None:
    path = tmp_path / "lookout.yaml"
    eu = "https://events.eu.pagerduty.com/v2/enqueue"
    path.write_text(f"channels:\n  pd: {{type: pagerduty, routing_key: {KEY}, url: '{eu}'}}\n")
    assert load_settings(path, env={}).channels["pd"].url == eu


def test_paging_secrets_are_redacted() -> None:
    settings = settings_for(
        {
            "pd": {"type": "pagerduty", "routing_key": KEY},
            "og": {"type": "opsgenie", "api_key": "og-secret-key-1"},
        }
    )
    assert settings.channels["pd"].url == "https://events.pagerduty.com/v2/enqueue"
    assert settings.channels["og"].url == "https://api.opsgenie.com/v2/alerts"
    assert KEY in settings.secrets() and "og-secret-key-1" in settings.secrets()


def test_pages_go_out_at_their_time(store: Store) -> None:
    """A page is never held by quiet hours when the run's urgency is act_now (shared rule)."""
    with FakeChat("pagerduty") as fake:
        channel = fake.channel(
            routing_key=KEY, quiet_hours={"start": "08:00", "end": "10:00", "timezone": "UTC"}
        )
        settings = settings_for({"pd": channel})
        report = Runs(store, notify=["pd"]).add(T0, NA)  # 09:00 UTC: inside the window
        (record,) = deliver_for_run(store, settings, report, now=T0)
        assert record.status == "deferred" and fake.requests == []
        assert record.not_before == dt.datetime(2026, 12, 1, 10, 0, tzinfo=dt.UTC)
