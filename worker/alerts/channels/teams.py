"""Microsoft Teams Workflows webhooks: an Adaptive Card 1.4 in a message envelope.

The body is ``{"type": "message", "attachments": [{"contentType":
"application/vnd.microsoft.card.adaptive", "contentUrl": null, "content": CARD}]}``;
``contentUrl`` must be present (docs/design.md, Delivering alerts). A Workflows webhook answers
**202 with an empty body** on success. Teams refuses messages over about
28 KB ("Create Incoming Webhooks" and the Teams connector's known limits on
learn.microsoft.com), so the payload is kept under ``MAX_BYTES``.

TextBlocks render a Markdown subset, so untrusted text is ``defang``-ed: no
``[label](url)`` link and no mention survives. The URL's ``sig=`` is a secret:
``checks.settings.config.redact`` hides it.
"""

from __future__ import annotations

from typing import Any

from worker.alerts.channel import Sender, json_body
from worker.alerts.message import TRUNCATED, Alert, defang, fit

CARD_VERSION = "1.4"
MAX_BYTES = 27_000  # Teams' documented ~28 KB, with room for the envelope
TEXT_MAX_BYTES = 20_000
CONTENT_TYPE = "application/vnd.microsoft.card.adaptive"
_COLOR = {"needs_attention": "Attention", "run_error": "Attention", "resolved": "Good"}


def _utf8_len(text: str) -> int:
    return len(text.encode("utf-8"))


class TeamsSender(Sender):
    """Posts Adaptive Cards to a Teams Workflows webhook."""

    type = "teams"

    def _envelope(self, body: list[dict[str, Any]], link: str) -> dict[str, Any]:
        card = {
            "$schema": "http://adaptivecards.io/schemas/adaptive-card.json",
            "type": "AdaptiveCard",
            "version": CARD_VERSION,
            "body": body,
            "actions": [{"type": "Action.OpenUrl", "title": "Open the report", "url": link}],
            "msteams": {"width": "Full"},
        }
        attachment = {"contentType": CONTENT_TYPE, "contentUrl": None, "content": card}
        return {"type": "message", "attachments": [attachment]}

    def payload(self, alert: Alert) -> dict[str, Any]:
        """Return the card: title, a FactSet, the quoted text, and an "Open the report" button."""
        body: list[dict[str, Any]] = [
            {
                "type": "TextBlock",
                "text": defang(alert.title),
                "weight": "Bolder",
                "size": "Medium",
                "wrap": True,
                "color": _COLOR.get(alert.event, "Default"),
            },
            {
                "type": "FactSet",
                "facts": [{"title": k, "value": defang(v)} for k, v in alert.facts()],
            },
        ]
        if alert.body:
            text, was_cut = fit(alert.body, TEXT_MAX_BYTES, escape=defang, measure=_utf8_len)
            if was_cut or alert.summary_truncated:
                text += f"\n\n_… {TRUNCATED}:_ [Open the report]({alert.link})"
            body.append({"type": "TextBlock", "text": text, "wrap": True})
        return self._envelope(body, alert.link)

    def fallback_payload(self, alert: Alert) -> dict[str, Any]:
        """Return a card with one TextBlock: "X needs attention: link"."""
        text = {"type": "TextBlock", "text": defang(alert.fallback_text()), "wrap": True}
        return self._envelope([text], alert.link)

    def limit_problems(self, payload: dict[str, Any]) -> list[str]:
        """Return the size and envelope rules ``payload`` breaks."""
        problems = []
        size = len(json_body(payload))
        if size > MAX_BYTES:
            problems.append(f"{size} bytes > {MAX_BYTES}")
        attachment = payload["attachments"][0]
        if "contentUrl" not in attachment or attachment["content"]["version"] != CARD_VERSION:
            problems.append("not an Adaptive Card 1.4 envelope")
        return problems
