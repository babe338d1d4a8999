"""Slack incoming webhooks: Block Kit messages.

Limits (Slack's Block Kit reference; docs/design.md, Delivering alerts): a section's text is at
most 3,000 characters, a header's 150, a section has at most 10 fields of
2,000 characters, a message at most 50 blocks; Slack also rejects messages
whose block text adds up to somewhat over 12,000 characters (undocumented:
``msg_blocks_too_long``), so all block text is kept under ``TOTAL_TEXT_MAX``.
Success is HTTP 200 with the body ``ok``; errors are 4xx with a short body such
as ``invalid_blocks`` or ``invalid_payload``; 429 carries ``Retry-After``.
Untrusted text is escaped with ``escape_slack`` and sent ``verbatim``.
"""

from __future__ import annotations

import re
from typing import Any

import httpx

from worker.alerts.channel import Sender
from worker.alerts.message import TRUNCATED, Alert, escape_slack, fit

SECTION_TEXT_MAX = 3_000
HEADER_TEXT_MAX = 150
FIELD_TEXT_MAX = 2_000
MAX_FIELDS = 10
MAX_BLOCKS = 50
TOTAL_TEXT_MAX = 11_000  # under the ~12k undocumented total, with room to spare


_BOLD = re.compile(r"\*\*([^*\n]+)\*\*")


def _mrkdwn(text: str) -> dict[str, Any]:
    return {"type": "mrkdwn", "text": text, "verbatim": True}


def _link(url: str, label: str) -> str:
    return f"<{url.replace('&', '&amp;')}|{label}>"


def block_texts(payload: dict[str, Any]) -> list[str]:
    """Return every text inside the blocks of ``payload`` (headers, sections, fields, context)."""
    texts: list[str] = []
    for block in payload.get("blocks", []):
        if "text" in block:
            texts.append(block["text"]["text"])
        texts += [f["text"] for f in block.get("fields", [])]
        texts += [e["text"] for e in block.get("elements", []) if "text" in e]
    return texts


class SlackSender(Sender):
    """Posts Block Kit messages to a Slack incoming webhook."""

    type = "slack"

    def payload(self, alert: Alert) -> dict[str, Any]:
        """Return header, facts, the quoted text and the report link as Block Kit blocks."""
        title, _ = fit(alert.title, HEADER_TEXT_MAX, escape=escape_slack)
        fields = [
            _mrkdwn(f"*{name}*\n{fit(value, FIELD_TEXT_MAX - 40, escape=escape_slack)[0]}")
            for name, value in alert.facts()[:MAX_FIELDS]
        ]
        blocks: list[dict[str, Any]] = [
            {"type": "header", "text": {"type": "plain_text", "text": title, "emoji": False}},
            {"type": "section", "fields": fields},
        ]
        link = _link(alert.link, "Open the report")
        if alert.body:
            suffix = f"\n_… {TRUNCATED}:_ {link}"
            body = _BOLD.sub(r"*\1*", alert.body)  # Markdown **bold** is *bold* in mrkdwn
            text, was_cut = fit(body, SECTION_TEXT_MAX - len(suffix), escape=escape_slack)
            if was_cut or alert.summary_truncated:
                text += suffix
            blocks.append({"type": "section", "text": _mrkdwn(text)})
        blocks.append({"type": "context", "elements": [_mrkdwn(f"{link} · Lookout")]})
        return {"text": title, "blocks": blocks}

    def fallback_payload(self, alert: Alert) -> dict[str, Any]:
        """Return plain text only: no blocks to be refused."""
        return {"text": escape_slack(alert.fallback_text())}

    def limit_problems(self, payload: dict[str, Any]) -> list[str]:
        """Return the Block Kit limits ``payload`` breaks."""
        problems = []
        blocks = payload.get("blocks", [])
        if len(blocks) > MAX_BLOCKS:
            problems.append(f"{len(blocks)} blocks > {MAX_BLOCKS}")
        for block in blocks:
            limit = HEADER_TEXT_MAX if block["type"] == "header" else SECTION_TEXT_MAX
            if "text" in block and len(block["text"]["text"]) > limit:
                problems.append(f"{block['type']} text {len(block['text']['text'])} > {limit}")
            fields = block.get("fields", [])
            if len(fields) > MAX_FIELDS or any(len(f["text"]) > FIELD_TEXT_MAX for f in fields):
                problems.append("section fields over the limit")
        total = sum(len(t) for t in block_texts(payload))
        if total > TOTAL_TEXT_MAX:
            problems.append(f"block text {total} > {TOTAL_TEXT_MAX}")
        return problems

    def accept(self, response: httpx.Response) -> str | None:
        """Slack answers exactly ``ok`` when it took the message."""
        body = response.text.strip()
        return None if body == "ok" else f"HTTP {response.status_code} without 'ok': {body[:300]}"
