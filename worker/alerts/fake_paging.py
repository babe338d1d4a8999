"""What the fake PagerDuty and Opsgenie refuse and answer (``worker.alerts.fake_chat`` serves them).

- PagerDuty Events API v2 (https://developer.pagerduty.com/docs/events-api-v2/overview):
  ``POST /v2/enqueue``; 400 ``{"status": "invalid event", "message": "Event object is
  invalid", "errors": [...]}`` for a routing key not of 32 characters, an
  ``event_action`` not ``trigger``, ``acknowledge`` or ``resolve``, a missing
  ``dedup_key`` on ``acknowledge``/``resolve`` (or one over 255 characters), a
  trigger without ``payload.summary`` (at most 1,024 characters),
  ``payload.source``, or ``payload.severity`` one of ``critical``, ``error``,
  ``warning``, ``info``, and ``links`` without ``href``; else 202 ``{"status":
  "success", "message": "Event processed", "dedup_key": …}`` (a trigger without a
  key gets one).
- Opsgenie Alert API (https://docs.opsgenie.com/docs/alert-api): every request
  needs ``Authorization: GenieKey KEY`` (else 401 ``{"message": "Could not
  authenticate", …}``); ``POST /v2/alerts`` creates (422 ``{"message": "Request body
  is not processable. Please check the errors.", "errors": {field: why}}`` for a
  missing or over-long ``message``, an ``alias`` over 512 characters, a
  ``priority`` not ``P1``–``P5``, over 20 ``tags`` or one over 50 characters, a
  ``description`` over 15,000, ``details`` values that are not text);
  ``POST /v2/alerts/{id}/close?identifierType=alias`` closes (422 for an
  ``identifierType`` not ``id``, ``alias`` or ``tiny``); each 202 ``{"result":
  "Request will be processed", "took": …, "requestId": …}``.

``Paged`` keeps what the fake holds open: each PagerDuty dedup key and Opsgenie
alias, ``triggered``/``open`` until resolved or closed.
"""

from __future__ import annotations

import json
import re
import threading
import uuid
from typing import Any
from urllib.parse import unquote

from worker.alerts.fake_rules import Reply

_JSON = {"Content-Type": "application/json"}
PD_SEVERITIES = ("critical", "error", "warning", "info")
PD_ACTIONS = ("trigger", "acknowledge", "resolve")
_CLOSE = re.compile(r"/v2/alerts/([^/]+)/close")


class Paged:
    """The alerts a fake pager holds, by key: ``triggered``/``open``, ``resolved``/``closed``."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.states: dict[str, str] = {}

    def set(self, key: str, state: str) -> None:
        """Record ``key``'s state."""
        with self._lock:
            self.states[key] = state

    def reset(self) -> None:
        """Forget every alert."""
        with self._lock:
            self.states.clear()


def _pd_invalid(errors: list[str]) -> Reply:
    body = {"status": "invalid event", "message": "Event object is invalid", "errors": errors}
    return Reply(400, json.dumps(body), _JSON)


def _pd_problems(doc: dict[str, Any]) -> list[str]:
    errors = []
    key = doc.get("routing_key")
    if not isinstance(key, str) or len(key) != 32:
        errors.append("Length of 'routing_key' is incorrect (should be 32 characters)")
    action = doc.get("event_action")
    if action not in PD_ACTIONS:
        errors.append(
            "'event_action' is invalid (must be one of the following: "
            "'trigger', 'acknowledge' or 'resolve')"
        )
    dedup = doc.get("dedup_key")
    if action in ("acknowledge", "resolve") and not (isinstance(dedup, str) and dedup.strip()):
        errors.append("'dedup_key' is missing or blank")
    if isinstance(dedup, str) and len(dedup) > 255:
        errors.append("'dedup_key' is too long (maximum is 255 characters)")
    if action == "trigger":
        errors += _pd_payload_problems(doc.get("payload"))
        for link in doc.get("links") or []:
            if not isinstance(link, dict) or not isinstance(link.get("href"), str):
                errors.append("'links' entries need an 'href'")
    return errors


def _pd_payload_problems(payload: Any) -> list[str]:
    if not isinstance(payload, dict):
        return ["'payload' is missing or blank"]
    errors = []
    for name in ("summary", "source"):
        value = payload.get(name)
        if not isinstance(value, str) or not value.strip():
            errors.append(f"'payload.{name}' is missing or blank")
    summary = payload.get("summary")
    if isinstance(summary, str) and len(summary) > 1024:
        errors.append("'payload.summary' is too long (maximum is 1024 characters)")
    if payload.get("severity") not in PD_SEVERITIES:
        errors.append(
            "'payload.severity' is invalid (must be one of the following: "
            "'critical', 'warning', 'error' or 'info')"
        )
    return errors


def pagerduty(method: str, path: str, doc: Any, paged: Paged) -> Reply:
    """PagerDuty's answer to one request (the module docstring)."""
    if method != "POST" or path != "/v2/enqueue":
        return Reply(404, json.dumps({"status": "not found"}), _JSON)
    if not isinstance(doc, dict):
        return _pd_invalid(["Event object is not valid JSON"])
    errors = _pd_problems(doc)
    if errors:
        return _pd_invalid(errors)
    key = doc.get("dedup_key") or uuid.uuid4().hex
    paged.set(
        key,
        {"trigger": "triggered", "acknowledge": "acknowledged"}.get(
            doc["event_action"], "resolved"
        ),
    )
    body = {"status": "success", "message": "Event processed", "dedup_key": key}
    return Reply(202, json.dumps(body), _JSON)


def _og(status: int, body: dict[str, Any]) -> Reply:
    return Reply(status, json.dumps({**body, "took": 0.01, "requestId": str(uuid.uuid4())}), _JSON)


def _og_unprocessable(errors: dict[str, str]) -> Reply:
    message = "Request body is not processable. Please check the errors."
    return _og(422, {"message": message, "errors": errors})


def _og_create_problems(doc: dict[str, Any]) -> dict[str, str]:
    errors = {}
    message = doc.get("message")
    if not isinstance(message, str) or not message.strip():
        errors["message"] = "Message can not be empty."
    elif len(message) > 130:
        errors["message"] = "Message can not be longer than 130 characters."
    if len(str(doc.get("alias", ""))) > 512:
        errors["alias"] = "Alias can not be longer than 512 characters."
    if "priority" in doc and doc["priority"] not in ("P1", "P2", "P3", "P4", "P5"):
        errors["priority"] = "Priority should be one of [P1, P2, P3, P4, P5]."
    tags = doc.get("tags") or []
    if not isinstance(tags, list) or len(tags) > 20:
        errors["tags"] = "Tags can have at most 20 items."
    elif any(not isinstance(t, str) or len(t) > 50 for t in tags):
        errors["tags"] = "Tags can not be longer than 50 characters."
    if len(str(doc.get("description", ""))) > 15_000:
        errors["description"] = "Description can not be longer than 15000 characters."
    details = doc.get("details") or {}
    if not isinstance(details, dict) or any(not isinstance(v, str) for v in details.values()):
        errors["details"] = "Details values should be strings."
    return errors


def opsgenie(
    method: str, path: str, query: dict[str, str], headers: dict[str, str], doc: Any, paged: Paged
) -> Reply:
    """Opsgenie's answer to one request (the module docstring)."""
    auth = headers.get("authorization", "")
    if not auth.startswith("GenieKey ") or not auth.removeprefix("GenieKey ").strip():
        return _og(401, {"message": "Could not authenticate"})
    if method != "POST":
        return _og(404, {"message": "No handler found"})
    accepted = {"result": "Request will be processed"}
    if path == "/v2/alerts":
        if not isinstance(doc, dict):
            return _og_unprocessable({"message": "Message can not be empty."})
        errors = _og_create_problems(doc)
        if errors:
            return _og_unprocessable(errors)
        paged.set(str(doc.get("alias") or doc["message"]), "open")
        return _og(202, accepted)
    found = _CLOSE.fullmatch(path)
    if found is None:
        return _og(404, {"message": "No handler found"})
    kind = query.get("identifierType", "id")
    if kind not in ("id", "alias", "tiny"):
        return _og_unprocessable({"identifierType": "should be one of [id, alias, tiny]"})
    if doc is not None and not isinstance(doc, dict):
        return _og_unprocessable({"body": "should be a JSON object"})
    paged.set(unquote(found.group(1)), "closed")
    return _og(202, accepted)
