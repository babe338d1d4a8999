"""Discord channel webhooks: a short ``content`` line and one embed.

Limits (Discord's "Execute Webhook" and "Embed Limits"): ``content`` at most
2,000 characters; an embed's description at most 4,096, title 256, field
name 256 and value 1,024, at most 25 fields; all embed text of a message
together at most 6,000 characters. ``allowed_mentions: {"parse": []}`` is
always sent, so nothing in a message can ping anyone whatever its text. A 429
carries ``retry_after`` (seconds) in its JSON body; Discord bans senders that
keep hitting 4xx/429, so ``worker.alerts.delivery`` never retries a 4xx.
``?wait=true`` makes Discord answer 200 with the message once it is posted
(204 without it); both are success.
"""

from __future__ import annotations

from typing import Any

from worker.alerts.channel import Sender
from worker.alerts.channels.google_chat import with_query
from worker.alerts.message import TRUNCATED, Alert, defang, fit

CONTENT_MAX = 2_000
DESCRIPTION_MAX = 4_096
TITLE_MAX = 256
FIELD_NAME_MAX = 256
FIELD_VALUE_MAX = 1_024
MAX_FIELDS = 25
EMBED_TOTAL_MAX = 6_000
NO_MENTIONS: dict[str, list[str]] = {"parse": []}
_COLOR = {"needs_attention": 0xE67E22, "run_error": 0xE74C3C, "resolved": 0x2ECC71}


def embed_chars(payload: dict[str, Any]) -> int:
    """Return the characters Discord counts toward the 6,000 embed total."""
    total = 0
    for embed in payload.get("embeds", []):
        total += len(embed.get("title", "")) + len(embed.get("description", ""))
        total += len(embed.get("footer", {}).get("text", ""))
        total += len(embed.get("author", {}).get("name", ""))
        total += sum(len(f["name"]) + len(f["value"]) for f in embed.get("fields", []))
    return total


class DiscordSender(Sender):
    """Posts to a Discord webhook with every mention disabled."""

    type = "discord"

    def url(self, alert: Alert) -> str:
        """Return the webhook URL with ``wait=true`` (a 200 with the message, or an error)."""
        return with_query(self.config.url, wait="true")

    def payload(self, alert: Alert) -> dict[str, Any]:
        """Return a one-line ``content``, an embed with the facts and text, no mentions."""
        fields = [
            {"name": name, "value": fit(value, FIELD_VALUE_MAX, escape=defang)[0], "inline": True}
            for name, value in alert.facts()[:MAX_FIELDS]
        ]
        embed: dict[str, Any] = {
            "title": fit(alert.title, TITLE_MAX, escape=defang)[0],
            "url": alert.link,
            "color": _COLOR.get(alert.event, 0x3498DB),
            "fields": fields,
            "footer": {"text": "Lookout"},
        }
        if alert.body:
            used = embed_chars({"embeds": [embed]})
            budget = min(DESCRIPTION_MAX, EMBED_TOTAL_MAX - used) - 120
            text, was_cut = fit(alert.body, budget, escape=defang)
            if was_cut or alert.summary_truncated:
                text += f"\n*… {TRUNCATED}:* [Open the report]({alert.link})"
            embed["description"] = text
        content = fit(f"**{alert.title}** — {alert.link}", CONTENT_MAX, escape=defang)[0]
        return {"content": content, "embeds": [embed], "allowed_mentions": NO_MENTIONS}

    def fallback_payload(self, alert: Alert) -> dict[str, Any]:
        """Return ``content`` only, mentions still disabled."""
        content = fit(alert.fallback_text(), CONTENT_MAX, escape=defang)[0]
        return {"content": content, "allowed_mentions": NO_MENTIONS}

    def limit_problems(self, payload: dict[str, Any]) -> list[str]:
        """Return the Discord limits ``payload`` breaks, and a missing ``allowed_mentions``."""
        problems = []
        if payload.get("allowed_mentions") != NO_MENTIONS:
            problems.append("allowed_mentions must be {'parse': []}")
        if len(payload.get("content", "")) > CONTENT_MAX:
            problems.append(f"content > {CONTENT_MAX}")
        if embed_chars(payload) > EMBED_TOTAL_MAX:
            problems.append(f"embeds {embed_chars(payload)} > {EMBED_TOTAL_MAX}")
        for embed in payload.get("embeds", []):
            if len(embed.get("description", "")) > DESCRIPTION_MAX:
                problems.append(f"description > {DESCRIPTION_MAX}")
            if len(embed.get("title", "")) > TITLE_MAX:
                problems.append(f"title > {TITLE_MAX}")
        return problems
