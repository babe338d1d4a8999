"""Senders against local fake services (real HTTP): payload shapes, limits, escaping, config."""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import httpx
import pytest
from inline_snapshot import snapshot

from checks.errors import ConfigError
from checks.settings.alerts import AppriseChannel, url_secrets
from checks.settings.config import Settings, load_settings, redact
from tests.paths import ROOT
from worker.alerts.channel import Sender, json_body, retry_after_s
from worker.alerts.channels import sender_for
from worker.alerts.channels.apprise import AppriseRefused, apprise_url, check_url
from worker.alerts.channels.discord import embed_chars
from worker.alerts.channels.slack import block_texts
from worker.alerts.channels.webhook import SIGNATURE_HEADER, TIMESTAMP_HEADER
from worker.alerts.fake_chat import FakeChat, Reply
from worker.alerts.message import Alert, cut, defang, escape_slack, fit

ALERT = Alert(
    event="needs_attention",
    automation="orders-positive",
    run_id=42,
    link="https://review.example/runs/42",
    finding="needs_attention",
    urgency="act_soon",
    flags=("changed_since_last_run",),
    summary="3 orders have a negative amount [Q1].",
    owner="data-team",
    severity="high",
    thread_key="lookout-orders-positive-7",
    opened_at="2026-12-01T09:00:00+00:00",
)
INJECTION = "<!here> <!channel> @everyone <https://evil|click>"
SERVICES = ("slack", "teams", "google_chat", "discord", "webhook")


@pytest.fixture
def client() -> Iterator[httpx.Client]:
    with httpx.Client() as http:
        yield http


def sender(fake: FakeChat, client: httpx.Client, **fields: object) -> Sender:
    settings = Settings.model_validate({"channels": {"c": fake.channel(**fields)}})
    return sender_for("c", settings.channels["c"], client)


def deliver(fake: FakeChat, client: httpx.Client, alert: Alert = ALERT) -> dict[str, object]:
    s = sender(fake, client)
    outcome = s.send(alert, s.payload(alert))
    assert outcome.ok, outcome
    doc = fake.requests[-1].json
    assert isinstance(doc, dict)
    return doc


# -- payload shape per service ------------------------------------------------


def test_slack_payload_is_block_kit_and_slack_says_ok(client: httpx.Client) -> None:
    with FakeChat("slack") as fake:
        doc = deliver(fake, client)
    assert doc == snapshot(
        {
            "text": "Needs attention: orders-positive",
            "blocks": [
                {
                    "type": "header",
                    "text": {
                        "type": "plain_text",
                        "text": "Needs attention: orders-positive",
                        "emoji": False,
                    },
                },
                {
                    "type": "section",
                    "fields": [
                        {"type": "mrkdwn", "text": "*Finding*\nNeeds attention", "verbatim": True},
                        {"type": "mrkdwn", "text": "*Urgency*\nAct soon", "verbatim": True},
                        {
                            "type": "mrkdwn",
                            "text": "*Flags*\nchanged since last run",
                            "verbatim": True,
                        },
                        {"type": "mrkdwn", "text": "*Owner*\ndata-team", "verbatim": True},
                        {"type": "mrkdwn", "text": "*Severity*\nhigh", "verbatim": True},
                        {"type": "mrkdwn", "text": "*Run*\n#42", "verbatim": True},
                    ],
                },
                {
                    "type": "section",
                    "text": {
                        "type": "mrkdwn",
                        "text": "3 orders have a negative amount [Q1].",
                        "verbatim": True,
                    },
                },
                {
                    "type": "context",
                    "elements": [
                        {
                            "type": "mrkdwn",
                            "text": "<https://review.example/runs/42|Open the report> · Lookout",
                            "verbatim": True,
                        }
                    ],
                },
            ],
        }
    )
    blocks = doc["blocks"]
    assert isinstance(blocks, list)
    assert all(t["verbatim"] for b in blocks for t in b.get("fields", []))


def test_teams_payload_is_an_adaptive_card_1_4_and_202_empty_is_success(
    client: httpx.Client,
) -> None:
    with FakeChat("teams") as fake:
        s = sender(fake, client)
        outcome = s.send(ALERT, s.payload(ALERT))
        doc = fake.requests[-1].json
    assert outcome.ok and outcome.http_status == 202
    assert doc == snapshot(
        {
            "type": "message",
            "attachments": [
                {
                    "contentType": "application/vnd.microsoft.card.adaptive",
                    "contentUrl": None,
                    "content": {
                        "$schema": "http://adaptivecards.io/schemas/adaptive-card.json",
                        "type": "AdaptiveCard",
                        "version": "1.4",
                        "body": [
                            {
                                "type": "TextBlock",
                                "text": "Needs attention: orders-positive",
                                "weight": "Bolder",
                                "size": "Medium",
                                "wrap": True,
                                "color": "Attention",
                            },
                            {
                                "type": "FactSet",
                                "facts": [
                                    {"title": "Finding", "value": "Needs attention"},
                                    {"title": "Urgency", "value": "Act soon"},
                                    {"title": "Flags", "value": "changed since last run"},
                                    {"title": "Owner", "value": "data-team"},
                                    {"title": "Severity", "value": "high"},
                                    {"title": "Run", "value": "#42"},
                                ],
                            },
                            {
                                "type": "TextBlock",
                                "text": "3 orders have a negative amount [Q1].",
                                "wrap": True,
                            },
                        ],
                        "actions": [
                            {
                                "type": "Action.OpenUrl",
                                "title": "Open the report",
                                "url": "https://review.example/runs/42",
                            }
                        ],
                        "msteams": {"width": "Full"},
                    },
                }
            ],
        }
    )
    assert "contentUrl" in doc["attachments"][0]


def test_google_chat_payload_threads_by_incident(client: httpx.Client) -> None:
    with FakeChat("google_chat") as fake:
        doc = deliver(fake, client)
        request = fake.requests[-1]
    assert doc == snapshot(
        {
            "text": """\
*Needs attention: orders-positive*
Finding: Needs attention
Urgency: Act soon
Flags: changed since last run
Owner: data-team
Severity: high
Run: #42

3 orders have a negative amount [Q1].
<https://review.example/runs/42|Open the report>\
""",
            "thread": {"threadKey": "lookout-orders-positive-7"},
        }
    )
    assert request.query["messageReplyOption"] == "REPLY_MESSAGE_FALLBACK_TO_NEW_THREAD"
    assert request.query["key"] == "FakeGoogleKey0123"  # the webhook's own parameters kept


def test_discord_payload_never_allows_mentions(client: httpx.Client) -> None:
    with FakeChat("discord") as fake:
        doc = deliver(fake, client)
        assert fake.requests[-1].query["wait"] == "true"
        s = sender(fake, client)
        fallback = s.fallback_payload(ALERT)
    assert doc == snapshot(
        {
            "content": "**Needs attention: orders-positive** — https://review.example/runs/42",
            "embeds": [
                {
                    "title": "Needs attention: orders-positive",
                    "url": "https://review.example/runs/42",
                    "color": 15105570,
                    "fields": [
                        {"name": "Finding", "value": "Needs attention", "inline": True},
                        {"name": "Urgency", "value": "Act soon", "inline": True},
                        {"name": "Flags", "value": "changed since last run", "inline": True},
                        {"name": "Owner", "value": "data-team", "inline": True},
                        {"name": "Severity", "value": "high", "inline": True},
                        {"name": "Run", "value": "#42", "inline": True},
                    ],
                    "footer": {"text": "Lookout"},
                    "description": "3 orders have a negative amount [Q1].",
                }
            ],
            "allowed_mentions": {"parse": []},
        }
    )
    assert fallback["allowed_mentions"] == {"parse": []}


def test_webhook_payload_is_signed_over_timestamp_and_body(client: httpx.Client) -> None:
    with FakeChat("webhook") as fake:
        s = sender(fake, client, secret="hook-secret-123")
        alert = replace(ALERT, extra={"idempotency_key": "lookout-42-needs_attention-c"})
        assert s.send(alert, s.payload(alert)).ok
        request = fake.requests[-1]
    timestamp = request.headers[TIMESTAMP_HEADER.lower()]
    expected = hmac.new(
        b"hook-secret-123", timestamp.encode() + b"." + request.body, hashlib.sha256
    )
    assert request.headers[SIGNATURE_HEADER.lower()] == f"sha256={expected.hexdigest()}"
    assert abs(int(timestamp) - time.time()) < 60
    assert request.headers["idempotency-key"] == "lookout-42-needs_attention-c"
    assert request.headers["x-lookout-event"] == "needs_attention"
    assert request.json == snapshot(
        {
            "version": 1,
            "event": "needs_attention",
            "reminder": False,
            "automation": "orders-positive",
            "run_id": 42,
            "status": "completed",
            "finding": "needs_attention",
            "urgency": "act_soon",
            "flags": ["changed_since_last_run"],
            "summary": "3 orders have a negative amount [Q1].",
            "summary_truncated": False,
            "owner": "data-team",
            "severity": "high",
            "error": None,
            "since_last_run": [],
            "anomalies": [],
            "warnings": [],
            "link": "https://review.example/runs/42",
            "incident": {
                "thread_key": "lookout-orders-positive-7",
                "opened_at": "2026-12-01T09:00:00+00:00",
            },
            "idempotency_key": "lookout-42-needs_attention-c",
        }
    )


def test_apprise_sends_plain_text_and_splits_on_overflow(client: httpx.Client) -> None:
    assert apprise_url("json://h/p") == "json://h/p?overflow=split&format=text"
    assert apprise_url("json://h/p?overflow=truncate") == "json://h/p?overflow=truncate&format=text"
    with FakeChat("webhook") as fake:
        config = AppriseChannel(
            type="apprise", url=f"json://127.0.0.1:{fake.port}/apprise", allow_private_address=True
        )
        s = sender_for("a", config, client)
        assert s.send(ALERT, s.payload(ALERT)).ok
        request = fake.requests[-1]
    assert request.path == "/apprise"
    assert request.json["title"] == "Needs attention: orders-positive"
    assert request.json["message"].endswith("Open the report: https://review.example/runs/42")


# -- limits -----------------------------------------------------------------

LONG = (
    "Rows that break the rule [Q1]:\n\n```\n"
    + "\n".join(f"order {i:05d} amount -{i}.00 <tag> & <https://x|y>" for i in range(400))
    + "\n```\n\n"
    + "See [the runbook](https://runbook.example) and <!here> " * 80
)


@pytest.mark.parametrize("service", SERVICES)
def test_a_10000_character_report_stays_within_every_limit(
    service: str, client: httpx.Client
) -> None:
    text = LONG[:10_000]
    assert len(text) == 10_000
    alert = replace(ALERT, summary=text)
    with FakeChat(service) as fake:  # the fakes refuse what the services would refuse
        s = sender(fake, client)
        payload = s.payload(alert)
        assert s.limit_problems(payload) == []
        outcome = s.send(alert, payload)
    assert outcome.ok, outcome
    size = len(json_body(payload))
    if service == "slack":
        assert all(len(t) <= 3_000 for t in block_texts(payload))
        assert sum(len(t) for t in block_texts(payload)) < 12_000
        assert "truncated — see the report" in payload["blocks"][2]["text"]["text"]
    elif service == "discord":
        assert len(payload["content"]) <= 2_000
        assert embed_chars(payload) <= 6_000
        assert "truncated — see the report" in payload["embeds"][0]["description"]
    elif service == "google_chat":
        assert size <= 32_000
    elif service == "teams":
        assert size <= 28_000


@dataclass(frozen=True)
class CutCase:
    text: str
    limit: int
    expected: str


@pytest.mark.parametrize(
    "case",
    [
        CutCase("plain words that go on and on", 12, "plain words"),
        CutCase("before ```\ncode block that is long\n```", 25, "before"),
        CutCase("see <https://example.com|the link> now", 20, "see"),
        CutCase("see [the runbook](https://runbook.example) now", 30, "see"),
        CutCase("use `inline code here` ok", 15, "use"),
        CutCase("fish &amp; chips &amp; more", 21, "fish &amp; chips"),
    ],
)
def test_cut_never_ends_inside_a_fence_link_tag_or_entity(case: CutCase) -> None:
    assert cut(case.text, case.limit) == (case.expected, True)


# -- escaping of mention and link injection ----------------------------------


def test_injection_is_inert_in_every_service(client: httpx.Client) -> None:
    alert = replace(ALERT, summary=f"value: {INJECTION}", owner=f"model says {INJECTION}")
    zw = "\u200b"
    slack_text = "&lt;!here&gt; &lt;!channel&gt; @\u200beveryone &lt;https://evil|click&gt;"
    other_text = f"<{zw}!here> <{zw}!channel> @{zw}everyone <{zw}https://evil|click>"
    assert escape_slack(INJECTION) == slack_text
    assert defang(INJECTION) == other_text
    assert defang("[click](https://evil)") == f"[click]{zw}(https://evil)"
    seen: dict[str, str] = {}
    for service in SERVICES:
        with FakeChat(service) as fake:
            deliver(fake, client, alert)
            seen[service] = fake.requests[-1].body.decode("utf-8")
    slack = json.loads(seen["slack"])
    assert slack["blocks"][2]["text"]["text"] == f"value: {slack_text}"
    assert slack["blocks"][1]["fields"][3]["text"] == f"*Owner*\nmodel says {slack_text}"
    assert "<!here>" not in seen["slack"] and "<https://evil" not in seen["slack"]
    card = json.loads(seen["teams"])["attachments"][0]["content"]
    assert card["body"][2]["text"] == f"value: {other_text}"
    assert card["body"][1]["facts"][3]["value"] == f"model says {other_text}"
    assert json.loads(seen["google_chat"])["text"].count(f"value: {other_text}") == 1
    discord = json.loads(seen["discord"])
    assert discord["embeds"][0]["description"] == f"value: {other_text}"
    assert discord["allowed_mentions"] == {"parse": []}
    for service in ("teams", "google_chat", "discord"):
        body = json.loads(seen[service])
        flat = json.dumps(body, ensure_ascii=False)
        assert "@everyone" not in flat and "<!here>" not in flat and "<https://evil" not in flat
    assert json.loads(seen["webhook"])["summary"] == f"value: {INJECTION}"  # raw JSON, documented


def test_an_anomaly_is_one_line_in_every_service(client: httpx.Client) -> None:
    line = "daily orders: value 260, expected 12.36–174.07, baseline 14 days, score 6.19"
    alert = replace(ALERT, anomalies=(line,))
    assert alert.facts()[1] == ("Anomaly", line)
    assert Alert.from_json(alert.to_json()) == alert
    for service in SERVICES:
        with FakeChat(service) as fake:
            deliver(fake, client, alert)
            doc = json.loads(fake.requests[-1].body.decode("utf-8"))
        if service == "webhook":
            assert doc["anomalies"] == [line]
        else:
            assert json.dumps(doc, ensure_ascii=False).count(line) == 1, service


# -- config -----------------------------------------------------------------


def write_config(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "lookout.yaml"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    "url",
    [
        "https://outlook.office.com/webhook/abc@def/IncomingWebhook/123/456",
        "https://contoso.webhook.office.com/webhookb2/abc/IncomingWebhook/123/456",
    ],
)
def test_teams_office_365_connector_urls_are_refused_at_load(tmp_path: Path, url: str) -> None:
    path = write_config(tmp_path, f"channels:\n  ops:\n    type: teams\n    url: {url}\n")
    with pytest.raises(ConfigError) as caught:
        load_settings(path, env={})
    assert caught.value.field == "channels.ops.url"  # the union's tag (teams) is not a key
    assert (caught.value.line, caught.value.column) == (4, 10)
    assert "Office 365 connector" in caught.value.message
    assert "Workflows" in caught.value.message


@pytest.mark.parametrize(
    "url",
    ["slack://T1/B1/C1", "https://hooks.slack.com/services/T1/B1/x", "discord://1/abc"],
)
def test_slack_and_discord_are_refused_through_apprise(tmp_path: Path, url: str) -> None:
    path = write_config(tmp_path, f"channels:\n  a:\n    type: apprise\n    url: '{url}'\n")
    with pytest.raises(ConfigError, match="use a channel of type"):
        load_settings(path, env={})
    with pytest.raises(AppriseRefused):
        check_url(url)


@pytest.mark.parametrize(
    ("text", "env"),
    [
        ("channels:\n  ops:\n    type: slack\n    url: ''\n", {}),
        ("channels:\n  ops:\n    type: slack\n    url: '${SLACK_URL}'\n", {"SLACK_URL": ""}),
        ("channels:\n  ops:\n    type: slack\n    url: '  '\n", {}),
    ],
)
def test_an_empty_channel_url_names_the_channel_the_field_and_the_line(
    tmp_path: Path, text: str, env: dict[str, str]
) -> None:
    path = write_config(tmp_path, text)
    with pytest.raises(ConfigError) as caught:
        load_settings(path, env=env)
    assert caught.value.location_message() == (
        f"{path}:4:10: channels.ops.url: the channel's URL is empty: give its webhook URL "
        "(or set the environment variable it names to one)"
    )


def test_other_config_errors_point_at_their_line(tmp_path: Path) -> None:
    unset = write_config(tmp_path, "channels:\n  ops: {type: slack, url: '${NOPE}'}\n")
    with pytest.raises(ConfigError) as caught:
        load_settings(unset, env={})
    assert caught.value.location_message() == (
        f"{unset}:2:27: channels.ops.url: environment variable NOPE is not set"
    )
    missing = write_config(tmp_path, "channels:\n  ops: {type: slack}\n")
    with pytest.raises(ConfigError) as caught:
        load_settings(missing, env={})
    assert caught.value.location_message() == f"{missing}:2:8: channels.ops.url: Field required"
    table = write_config(tmp_path, "sources:\n  s: {type: duckdb, tables: {a: 1}}\n")
    with pytest.raises(ConfigError) as caught:
        load_settings(table, env={})
    assert caught.value.location_message() == (
        f"{table}:2:33: sources.s.tables.a: Input should be a valid string"
    )


def test_routes_name_configured_channels_and_quiet_hours_are_checked(tmp_path: Path) -> None:
    path = write_config(tmp_path, "alerts:\n  routes:\n    run_error: [pager]\n")
    with pytest.raises(ConfigError, match="unknown channel 'pager'"):
        load_settings(path, env={})
    bad_time = (
        "channels:\n  s:\n    type: slack\n    url: https://hooks.slack.com/services/x\n"
        "    quiet_hours: {start: '22h', end: '07:00'}\n"
    )
    with pytest.raises(ConfigError, match="HH:MM"):
        load_settings(write_config(tmp_path, bad_time), env={})


def test_webhook_urls_and_tokens_are_secrets(tmp_path: Path) -> None:
    slack = "https://hooks.slack.com/services/T0AAA/B0BBB/abcdefghijklmnopqrstuvwx"
    teams = "https://prod.westeurope.logic.azure.com/workflows/1/invoke?sig=SIGSECRET0123456789"
    text = (
        "channels:\n"
        "  s: {type: slack, url: '${SLACK_URL}'}\n"
        f"  t: {{type: teams, url: '{teams}'}}\n"
        "  w: {type: webhook, url: 'https://h.example/x', secret: 'hmac-secret-1'}\n"
    )
    settings = load_settings(write_config(tmp_path, text), env={"SLACK_URL": slack})
    secrets = settings.secrets()
    assert {slack, teams, "hmac-secret-1", "abcdefghijklmnopqrstuvwx"} <= set(secrets)
    shown = redact(f"posting to {slack} and {teams}; token abcdefghijklmnopqrstuvwx", secrets)
    assert "abcdefghijklmnopqrstuvwx" not in shown and "SIGSECRET" not in shown
    assert "SIGSECRET0123456789" in url_secrets(teams)


# -- the fake from another process ---------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_fake_service_runs_in_another_process_and_is_scripted_over_http() -> None:
    port = free_port()
    command = [
        sys.executable,
        "-m",
        "worker.alerts.fake_chat",
        "--service",
        "slack",
        "--port",
        str(port),
    ]
    with subprocess.Popen(command, stdout=subprocess.PIPE, text=True) as proc:
        try:
            assert proc.stdout is not None
            assert "listening" in proc.stdout.readline()
            with httpx.Client(base_url=f"http://127.0.0.1:{port}") as http:
                http.post("/_fake/script", json=[{"status": 400, "body": "invalid_blocks"}])
                first = http.post("/services/T/B/x", json={"text": "hi"})
                second = http.post("/services/T/B/x", json={"text": "hi"})
                recorded = http.get("/_fake/requests").json()
        finally:
            proc.terminate()
            proc.wait(timeout=10)
    assert (first.status_code, first.text) == (400, "invalid_blocks")
    assert (second.status_code, second.text) == (200, "ok")
    assert [r["json"] for r in recorded] == [{"text": "hi"}, {"text": "hi"}]


def test_scripted_reply_wins_over_the_default() -> None:
    with FakeChat("teams") as fake, httpx.Client() as http:
        fake.script(Reply(500, "boom"))
        assert http.post(fake.url(), json={}).status_code == 500
        assert http.post(fake.url(), json={}).status_code == 400  # not a card: refused


def test_the_readme_channel_example_loads(tmp_path: Path) -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("## Alerts to chat") :]
    block = section[section.index("```yaml\n") + 8 : section.index("```\n", 8)]
    env = {
        name: "https://hooks.example/" + name.lower()
        for name in ("SLACK_WEBHOOK_URL", "TEAMS_WORKFLOW_URL", "GCHAT_WEBHOOK_URL")
    }
    env |= {"DISCORD_WEBHOOK_URL": "https://x/y", "HOOK_SECRET": "s", "MAIL_PASSWORD": "p"}
    settings = load_settings(write_config(tmp_path, block), env=env)
    assert sorted(settings.channels) == [
        "community",
        "data-chat",
        "email-ops",
        "ops-slack",
        "ops-teams",
        "pager",
    ]
    assert settings.alerts.routes == {"run_error": ["pager"]}


def test_slack_turns_markdown_bold_into_mrkdwn_bold(client: httpx.Client) -> None:
    alert = dataclasses.replace(ALERT, summary="**Needs attention** — 1 of 2 checks failed [C1].")
    with FakeChat("slack") as fake:
        doc: Any = deliver(fake, client, alert)
    quoted = doc["blocks"][2]["text"]["text"]
    assert quoted == "*Needs attention* — 1 of 2 checks failed [C1]."


@pytest.mark.parametrize("limit", [3000, 1000, 37])
def test_fit_keeps_text_full_of_ampersands_and_never_splits_an_entity(limit: int) -> None:
    text = ("AT&T " * 700)[:2500]
    slack, was_cut = fit(text, limit, escape=escape_slack)
    assert was_cut and limit - 12 <= len(slack) <= limit  # before: "AT"
    assert not slack.endswith(("&", "&a", "&am", "&amp"))
    assert slack.replace("&amp;", "&") == text[: len(slack.replace("&amp;", "&"))]
    plain, _ = fit(text, limit)
    assert min(limit, len(text)) - 6 <= len(plain) <= limit
    in_bytes, _ = fit("é&é " * 400, 101, escape=escape_slack, measure=lambda s: len(s.encode()))
    assert 90 <= len(in_bytes.encode()) <= 101 and not in_bytes.endswith("&amp")


@pytest.mark.parametrize(
    ("headers", "body", "expected"),
    [
        ({"Retry-After": "2"}, '{"retry_after": 0.3}', 2.0),  # the header wins
        ({"Retry-After": "Thu, 01 Jan 1970 00:00:00 GMT"}, '{"retry_after": 0.3}', 0.0),
        ({}, '{"message": "You are being rate limited.", "retry_after": 0.3}', 0.3),
        ({"Retry-After": "1.5"}, '{"retry_after": 0.3}', 0.3),  # not delta-seconds: the body
        ({"Retry-After": "-3"}, '{"retry_after": 0.3}', 0.3),
        ({"Retry-After": "soon"}, '{"retry_after": 2}', 2.0),
        ({"Retry-After": "-3"}, "rate_limited", None),  # not JSON
        ({}, '{"retry_after": -1}', None),
        ({}, '{"retry_after": true}', None),
        ({}, '{"retry_after": "5"}', None),
        ({}, '{"retry_after": NaN}', None),
        ({}, "[0.3]", None),
        ({}, "", None),
    ],
)
def test_retry_after_header_then_discords_json_body(
    headers: dict[str, str], body: str, expected: float | None
) -> None:
    response = httpx.Response(429, headers=headers, content=body.encode())
    assert retry_after_s(response) == expected


def test_bidirectional_controls_never_reach_chat_or_the_terminal() -> None:
    from worker.cli.safe_text import clean

    name = "invoice\u202etxt.exe \u2066x\u2069 \u200fy"
    assert escape_slack(name) == "invoice\ufffdtxt.exe \ufffdx\ufffd \ufffdy"
    assert defang(name) == "invoice\ufffdtxt.exe \ufffdx\ufffd \ufffdy"
    assert clean(name) == "invoice\ufffdtxt.exe \ufffdx\ufffd \ufffdy"
