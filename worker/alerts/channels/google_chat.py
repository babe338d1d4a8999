"""Google Chat incoming webhooks: a text message, threaded per incident.

A message is at most 32,000 bytes including text and cards (Google Chat API,
``spaces.messages.create``). The alert's incident key goes in
``thread.threadKey`` and the URL gets
``messageReplyOption=REPLY_MESSAGE_FALLBACK_TO_NEW_THREAD``, so reminders and
the resolved message land in the alert's thread (or start one if it is gone).
``requestId`` is the delivery's idempotency key: Google Chat returns the
message already created with that id instead of posting it twice.

Chat text formats ``<url|label>`` links and ``<users/all>`` mentions, so
untrusted text is ``defang``-ed (a zero-width space after every ``<``).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from worker.alerts.channel import Sender, json_body
from worker.alerts.message import TRUNCATED, Alert, defang, fit

MAX_BYTES = 32_000
TEXT_MAX_BYTES = 30_000
REPLY_OPTION = "REPLY_MESSAGE_FALLBACK_TO_NEW_THREAD"


def _utf8_len(text: str) -> int:
    return len(text.encode("utf-8"))


def with_query(url: str, **params: str) -> str:
    """Return ``url`` with ``params`` set in its query string (other parameters kept)."""
    parts = urlsplit(url)
    query = dict(parse_qsl(parts.query, keep_blank_values=True))
    query.update(params)
    return urlunsplit(parts._replace(query=urlencode(query)))


class GoogleChatSender(Sender):
    """Posts text messages to a Google Chat space webhook, in the incident's thread."""

    type = "google_chat"

    def url(self, alert: Alert) -> str:
        """Return the webhook URL with the reply option and ``requestId`` when threading."""
        params: dict[str, str] = {}
        if alert.thread_key:
            params["messageReplyOption"] = REPLY_OPTION
        request_id = alert.extra.get("idempotency_key")
        if isinstance(request_id, str):
            params["requestId"] = request_id
        return with_query(self.config.url, **params) if params else self.config.url

    def _message(self, text: str, alert: Alert) -> dict[str, Any]:
        message: dict[str, Any] = {"text": text}
        if alert.thread_key:
            message["thread"] = {"threadKey": alert.thread_key}
        return message

    def payload(self, alert: Alert) -> dict[str, Any]:
        """Return bold title, one fact per line, the quoted text and the report link."""
        lines = [f"*{defang(alert.title)}*"]
        lines += [f"{name}: {defang(value)}" for name, value in alert.facts()]
        head = "\n".join(lines)
        tail = f"\n<{alert.link}|Open the report>"
        text = head
        if alert.body:
            budget = TEXT_MAX_BYTES - _utf8_len(head + tail) - 100
            quoted, was_cut = fit(alert.body, budget, escape=defang, measure=_utf8_len)
            text += "\n\n" + quoted
            if was_cut or alert.summary_truncated:
                text += f"\n_… {TRUNCATED}_"
        return self._message(text + tail, alert)

    def fallback_payload(self, alert: Alert) -> dict[str, Any]:
        """Return the one-line text, still in the incident's thread."""
        return self._message(defang(alert.fallback_text()), alert)

    def limit_problems(self, payload: dict[str, Any]) -> list[str]:
        """Return the size limit ``payload`` breaks."""
        size = len(json_body(payload))
        return [f"{size} bytes > {MAX_BYTES}"] if size > MAX_BYTES else []
