"""PagerDuty's Events API v2: one alert per incident, triggered and resolved by its dedup key.

Wire format (https://developer.pagerduty.com/docs/events-api-v2/overview, "Send an
Alert Event"): ``POST https://events.pagerduty.com/v2/enqueue`` with JSON::

    {"routing_key": "…32 chars…", "event_action": "trigger", "dedup_key": "lookout-orders-7",
     "payload": {"summary": "…", "source": "lookout", "severity": "error",
                 "component": "orders", "group": "data-platform", "class": "needs_attention",
                 "custom_details": {…}},
     "links": [{"href": "https://review/runs/42", "text": "Lookout report"}],
     "client": "Lookout", "client_url": "https://review/runs/42"}

and ``{"routing_key", "event_action": "resolve", "dedup_key"}`` when the incident
resolves. The answer is 202 ``{"status": "success", "message": "Event processed",
"dedup_key": "…"}``; 400 ``{"status": "invalid event", "message": "Event object is
invalid", "errors": […]}``; 429 when the integration's rate is passed.

The dedup key is the incident's thread key (``lookout-{automation}-{incident_id}``),
so a reminder updates the same PagerDuty alert and the resolution closes it.
``summary`` is at most 1,024 characters, ``dedup_key`` 255 (the API's limits).
"""

from __future__ import annotations

from typing import Any

import httpx

from checks.settings.alerts import EventKind, PagerDutyChannel
from worker.alerts.channel import Sender
from worker.alerts.message import Alert

MAX_SUMMARY = 1024
MAX_DEDUP_KEY = 255
SEVERITIES = ("critical", "error", "warning", "info")
_BY_URGENCY = {
    "act_now": "critical",
    "act_soon": "error",
    "worth_a_look": "warning",
    "nothing_to_do": "info",
}
_BY_SEVERITY = {"high": "critical", "medium": "error", "low": "warning"}


def page_severity(alert: Alert) -> str:
    """PagerDuty's severity of an alert: ``critical``, ``error``, ``warning`` or ``info``.

    A run in error is ``error``; a test message (``lookout notify test``)
    ``info``; else the second opinion's urgency (``act_now`` critical,
    ``act_soon`` error, ``worth_a_look`` warning, ``nothing_to_do`` info) when
    it gave one, else the automation's severity (``high`` critical,
    ``medium`` error, ``low`` warning); ``error`` when neither is known.
    """
    if alert.event == EventKind.RUN_ERROR:
        return "error"
    if alert.event not in tuple(EventKind):  # lookout notify test: a page, but a quiet one
        return "info"
    if alert.urgency in _BY_URGENCY:
        return _BY_URGENCY[alert.urgency]
    return _BY_SEVERITY.get(alert.severity or "", "error")


def dedup_key(alert: Alert) -> str:
    """The incident's key (its thread key), or one of the run's (or the test's) when it has none."""
    run = f"run-{alert.run_id}" if alert.run_id is not None else "test"
    key = alert.thread_key or f"lookout-{alert.automation}-{run}"
    return key[:MAX_DEDUP_KEY]


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


class PagerDutySender(Sender):
    """Triggers an alert when an incident opens (and on its reminders); resolves it after."""

    type = "pagerduty"

    def _key(self) -> str:
        config = self.config
        assert isinstance(config, PagerDutyChannel)
        return config.routing_key

    def payload(self, alert: Alert) -> dict[str, Any]:
        """The event: ``resolve`` for a resolution, else ``trigger`` (module docstring)."""
        if alert.event == EventKind.RESOLVED:
            return {
                "routing_key": self._key(),
                "event_action": "resolve",
                "dedup_key": dedup_key(alert),
            }
        details: dict[str, Any] = {
            "run_id": alert.run_id,
            "status": alert.status,
            "finding": alert.finding,
            "urgency": alert.urgency,
            "summary": alert.body,
            "error": alert.error,
            "not_evaluated": list(alert.not_evaluated),
            "warnings": list(alert.warnings),
            "reminder": alert.reminder,
            "opened_at": alert.opened_at,
        }
        payload: dict[str, Any] = {
            "summary": _cut(alert.fallback_text(), MAX_SUMMARY),
            "source": "lookout",
            "severity": page_severity(alert),
            "component": alert.automation,
            "class": alert.event,
            "custom_details": details,
        }
        if alert.owner:
            payload["group"] = alert.owner
        event: dict[str, Any] = {
            "routing_key": self._key(),
            "event_action": "trigger",
            "dedup_key": dedup_key(alert),
            "payload": payload,
            "client": "Lookout",
        }
        if alert.link.startswith(("http://", "https://")):
            event["client_url"] = alert.link
            event["links"] = [{"href": alert.link, "text": "Lookout report"}]
        return event

    def fallback_payload(self, alert: Alert) -> dict[str, Any]:
        """The event with only the required fields (after a 400)."""
        event = self.payload(alert)
        if event["event_action"] == "trigger":
            payload = event["payload"]
            event = {
                "routing_key": event["routing_key"],
                "event_action": "trigger",
                "dedup_key": event["dedup_key"],
                "payload": {k: payload[k] for k in ("summary", "source", "severity")},
            }
        return event

    def limit_problems(self, payload: dict[str, Any]) -> list[str]:
        """The API's limits the event breaks (summary and dedup key lengths)."""
        problems = []
        summary = (payload.get("payload") or {}).get("summary", "")
        if len(summary) > MAX_SUMMARY:
            problems.append(f"summary over {MAX_SUMMARY} characters")
        if len(payload.get("dedup_key", "")) > MAX_DEDUP_KEY:
            problems.append(f"dedup_key over {MAX_DEDUP_KEY} characters")
        return problems

    def accept(self, response: httpx.Response) -> str | None:
        """A 2xx is a success when its body says ``"status": "success"``."""
        try:
            body = response.json()
        except ValueError:
            return f"HTTP {response.status_code} without the API's JSON answer"
        if not isinstance(body, dict) or body.get("status") != "success":
            return f"HTTP {response.status_code}: not a success: {response.text[:300]}"
        return None
