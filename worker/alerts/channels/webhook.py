"""Generic JSON webhooks, optionally signed with HMAC-SHA256.

The body (``payload``) is Lookout's alert document, version 1::

    {"version": 1, "event": "needs_attention", "reminder": false,
     "automation": "…", "run_id": 42, "status": "completed",
     "finding": "needs_attention", "urgency": "act_soon",
     "flags": ["changed_since_last_run"], "summary": "…",
     "summary_truncated": false, "owner": "…", "severity": "high",
     "error": null, "since_last_run": ["C1: 3 new rows since the last run (…)"],
     "link": "https://review/runs/42",
     "incident": {"thread_key": "…", "opened_at": "…"}, "idempotency_key": "…"}

Text values are raw (not escaped): the receiver must treat ``summary``,
``error``, ``owner``, ``automation`` and ``since_last_run`` (one line per query
whose rows changed since its last completed run, naming rows) as untrusted. Headers sent:

- ``X-Lookout-Event``: the event; ``Idempotency-Key``: the delivery key
  (the same for every attempt of one delivery).
- With ``secret`` set: ``X-Lookout-Timestamp`` (Unix seconds, per attempt) and
  ``X-Lookout-Signature: sha256=<hex>``, the HMAC-SHA256 with the secret as key
  over ``timestamp + "." + body`` (the exact body bytes). A receiver recomputes
  it, compares in constant time, and rejects timestamps older than a few minutes.
"""

from __future__ import annotations

import hashlib
import hmac
import time
from typing import Any

from checks.settings.alerts import WebhookChannel
from worker.alerts.channel import Sender
from worker.alerts.message import Alert

SIGNATURE_HEADER = "X-Lookout-Signature"
TIMESTAMP_HEADER = "X-Lookout-Timestamp"
EVENT_HEADER = "X-Lookout-Event"
IDEMPOTENCY_HEADER = "Idempotency-Key"
MAX_BYTES = 256_000  # Lookout's own cap; summaries are cut long before


def sign(secret: str, timestamp: str, body: bytes) -> str:
    """Return ``sha256=`` + hex HMAC-SHA256(secret, timestamp + "." + body)."""
    mac = hmac.new(secret.encode("utf-8"), timestamp.encode("ascii") + b"." + body, hashlib.sha256)
    return f"sha256={mac.hexdigest()}"


class WebhookSender(Sender):
    """Posts the alert document as JSON; signs it when the channel has a ``secret``."""

    type = "webhook"

    def payload(self, alert: Alert) -> dict[str, Any]:
        """Return the version-1 alert document (see the module docstring)."""
        return {
            "version": 1,
            "event": alert.event,
            "reminder": alert.reminder,
            "automation": alert.automation,
            "run_id": alert.run_id,
            "status": alert.status,
            "finding": alert.finding,
            "urgency": alert.urgency,
            "flags": list(alert.flags),
            "summary": alert.body,
            "summary_truncated": alert.summary_truncated,
            "owner": alert.owner,
            "severity": alert.severity,
            "error": alert.error,
            "since_last_run": list(alert.since_last_run),
            "anomalies": list(alert.anomalies),
            "warnings": list(alert.warnings),
            "link": alert.link,
            "incident": {"thread_key": alert.thread_key, "opened_at": alert.opened_at},
            "idempotency_key": alert.extra.get("idempotency_key"),
        }

    def fallback_payload(self, alert: Alert) -> dict[str, Any]:
        """Return the minimal document: event, automation, link and the one-line text."""
        return {
            "version": 1,
            "event": alert.event,
            "automation": alert.automation,
            "run_id": alert.run_id,
            "link": alert.link,
            "text": alert.fallback_text(),
            "fallback": True,
            "idempotency_key": alert.extra.get("idempotency_key"),
        }

    def headers(self, alert: Alert, body: bytes) -> dict[str, str]:
        """Return JSON, event and idempotency headers, and the signature when configured."""
        config = self.config
        assert isinstance(config, WebhookChannel)
        headers = {**super().headers(alert, body), **config.headers}
        headers[EVENT_HEADER] = alert.event
        key = alert.extra.get("idempotency_key")
        if isinstance(key, str):
            headers[IDEMPOTENCY_HEADER] = key
        if config.secret:
            timestamp = str(int(time.time()))
            headers[TIMESTAMP_HEADER] = timestamp
            headers[SIGNATURE_HEADER] = sign(config.secret, timestamp, body)
        return headers
