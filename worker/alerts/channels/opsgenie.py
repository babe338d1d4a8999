"""Opsgenie's Alert API: an alert per incident, its alias the incident, closed when it resolves.

Wire format (https://docs.opsgenie.com/docs/alert-api, "Create Alert" and "Close
Alert"), each request with ``Authorization: GenieKey API_KEY``:

- create: ``POST https://api.opsgenie.com/v2/alerts`` with ``{"message" (required,
  at most 130 characters), "alias" (at most 512), "description" (at most 15,000),
  "priority" ("P1".."P5"), "source", "entity", "tags" (at most 20, 50 characters
  each), "details" (text values), "responders"}``;
- close: ``POST https://api.opsgenie.com/v2/alerts/{alias}/close?identifierType=alias``
  with ``{"source", "note"}``.

Both are answered 202 ``{"result": "Request will be processed", "took": 0.1,
"requestId": "…"}`` (the API is asynchronous); 422 ``{"message": "Request body is
not processable. Please check the errors.", "errors": {…}}`` for a bad body; 401
for a bad key; 429 over the rate. The alias is the incident's thread key
(``lookout-{automation}-{incident_id}``): a reminder of an open alert with the same
alias only raises its count (Opsgenie de-duplicates on alias), and the
resolution closes it. The priority follows the PagerDuty severity
(``worker.alerts.channels.pagerduty.page_severity``): critical P1, error P2,
warning P3, info P5.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from checks.settings.alerts import EventKind, OpsgenieChannel
from worker.alerts.channel import Sender
from worker.alerts.channels.pagerduty import dedup_key, page_severity
from worker.alerts.message import Alert

MAX_MESSAGE = 130
MAX_ALIAS = 512
MAX_DESCRIPTION = 15_000
PRIORITIES = {"critical": "P1", "error": "P2", "warning": "P3", "info": "P5"}


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def alias(alert: Alert) -> str:
    """The incident's alias (its thread key), at most 512 characters."""
    return dedup_key(alert)[:MAX_ALIAS]


class OpsgenieSender(Sender):
    """Creates an alert when an incident opens (and on reminders); closes it after."""

    type = "opsgenie"

    def _config(self) -> OpsgenieChannel:
        config = self.config
        assert isinstance(config, OpsgenieChannel)
        return config

    def url(self, alert: Alert) -> str:
        """The alerts endpoint; for a resolution, the alert's close endpoint by alias."""
        base = self._config().url.rstrip("/")
        if alert.event == EventKind.RESOLVED:
            return f"{base}/{quote(alias(alert), safe='')}/close?identifierType=alias"
        return base

    def headers(self, alert: Alert, body: bytes) -> dict[str, str]:
        """JSON, and the API key as ``GenieKey``."""
        return {
            **super().headers(alert, body),
            "Authorization": f"GenieKey {self._config().api_key}",
        }

    def payload(self, alert: Alert) -> dict[str, Any]:
        """The close request for a resolution, else the create request (module docstring)."""
        if alert.event == EventKind.RESOLVED:
            return {"source": "Lookout", "note": _cut(alert.fallback_text(), 25_000)}
        details = {
            "run_id": str(alert.run_id),
            "status": alert.status,
            "finding": alert.finding or "",
            "urgency": alert.urgency or "",
            "link": alert.link,
        }
        created: dict[str, Any] = {
            "message": _cut(alert.fallback_text(), MAX_MESSAGE),
            "alias": alias(alert),
            "description": _cut(alert.body or alert.fallback_text(), MAX_DESCRIPTION),
            "priority": PRIORITIES[page_severity(alert)],
            "source": "Lookout",
            "entity": _cut(alert.automation, 512),
            "tags": ["lookout", _cut(alert.event, 50)],
            "details": {k: v for k, v in details.items() if v},
        }
        if alert.owner:
            created["tags"].append(_cut(alert.owner, 50))
        responders = self._config().responders
        if responders:
            created["responders"] = list(responders)
        return created

    def fallback_payload(self, alert: Alert) -> dict[str, Any]:
        """The create request with only its message and alias (after a 422)."""
        if alert.event == EventKind.RESOLVED:
            return self.payload(alert)
        return {"message": _cut(alert.fallback_text(), MAX_MESSAGE), "alias": alias(alert)}

    def limit_problems(self, payload: dict[str, Any]) -> list[str]:
        """The API's field limits the request breaks."""
        problems = []
        if len(payload.get("message", "")) > MAX_MESSAGE:
            problems.append(f"message over {MAX_MESSAGE} characters")
        if len(payload.get("alias", "")) > MAX_ALIAS:
            problems.append(f"alias over {MAX_ALIAS} characters")
        if len(payload.get("description", "")) > MAX_DESCRIPTION:
            problems.append(f"description over {MAX_DESCRIPTION} characters")
        return problems
