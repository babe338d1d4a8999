"""One small interface per chat service: render an ``Alert``, send it, classify the answer.

``Sender`` is the base of the project's own httpx senders (``worker.alerts.channels``:
Slack, Teams, Google Chat, Discord, generic webhook) and of the Apprise one.
A sender makes one HTTP attempt per ``send`` call and says what happened in an
``SendResult``; retries, backoff, rate limits, fallback and the record of every
attempt are ``worker.alerts.delivery``'s job.

How an answer is classified (``classify``):

- 2xx and the service's own success check (``accept``; e.g. Slack's body
  ``ok``, Teams' 202 with an empty body) → sent;
- 429 → rate limited, with the wait asked for (``Retry-After`` seconds or
  HTTP date; Discord's JSON ``retry_after``);
- 408, 5xx, timeouts and connection errors → transient: retried with backoff;
- any other 4xx (e.g. Slack ``invalid_blocks``) → permanent: never retried.
- a host resolving to this machine or a metadata service (``worker.alerts.guard``)
  → permanent.

Errors carry at most 300 characters of the response body; ``worker.alerts.delivery``
redacts them (webhook URLs and tokens) before they are stored or shown.
"""

from __future__ import annotations

import json
import math
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

import httpx

from checks.http.retry_after import parse_retry_after
from checks.settings.alerts import ChannelConfig
from worker.alerts.guard import ALLOW_EXTENSION, RefusedAddress
from worker.alerts.message import Alert

Kind = Literal["sent", "rate_limited", "transient", "permanent"]


@dataclass(frozen=True)
class SendResult:
    """The result of one attempt.

    Attributes:
        kind: ``sent``, ``rate_limited`` (429), ``transient`` (retry with
            backoff) or ``permanent`` (do not retry).
        http_status: the response's status code; None when no response came.
        error: why it was not sent (not yet redacted); None when sent.
        retry_after_s: the wait a 429 asked for, in seconds, when it said.
        duration_ms: time the attempt took, in milliseconds.
    """

    kind: Kind
    http_status: int | None = None
    error: str | None = None
    retry_after_s: float | None = None
    duration_ms: int | None = None

    @property
    def ok(self) -> bool:
        """Whether the message was accepted."""
        return self.kind == "sent"


def json_body(payload: dict[str, Any]) -> bytes:
    """Return the exact bytes sent (and signed): compact JSON, UTF-8, non-ASCII kept."""
    return json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def retry_after_s(response: httpx.Response) -> float | None:
    """Return the wait a 429 asks for, in seconds: ``Retry-After``, else a JSON ``retry_after``.

    ``Retry-After`` is read by ``checks.http.retry_after`` (RFC 9110 §10.2.3:
    integer seconds or an HTTP-date). When it says nothing usable, Discord's
    JSON body ``retry_after`` (seconds, a float; Discord's "Rate Limits" docs)
    is used if it is a number >= 0 (NaN is not; an integer too large for a
    float is ``inf``, which the caller's ceiling refuses). None when neither says.
    """
    header = parse_retry_after(response.headers.get("retry-after"))
    if header is not None:
        return header
    try:
        body = response.json()
    except ValueError:
        return None
    value = body.get("retry_after") if isinstance(body, dict) else None
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        seconds = float(value)
    except OverflowError:  # an integer past float's range
        seconds = math.inf
    return seconds if seconds >= 0 else None  # NaN compares false: not said


def _snippet(response: httpx.Response) -> str:
    text = response.text.strip().replace("\n", " ")
    return text[:300] if text else "(empty body)"


class Sender(ABC):
    """Renders alerts for one configured channel and makes one HTTP attempt per ``send``.

    Args:
        name: the channel's name in config.
        config: its typed config.
        client: the shared ``httpx.Client`` (its transport can be a fake in tests).
    """

    type: ClassVar[str]

    def __init__(self, name: str, config: ChannelConfig, client: httpx.Client) -> None:
        self.name = name
        self.config = config
        self.client = client

    @abstractmethod
    def payload(self, alert: Alert) -> dict[str, Any]:
        """Return the JSON document for ``alert``, within the service's documented limits."""

    @abstractmethod
    def fallback_payload(self, alert: Alert) -> dict[str, Any]:
        """Return the minimal message ("X needs attention: link") tried after a permanent 4xx."""

    def limit_problems(self, payload: dict[str, Any]) -> list[str]:
        """Return the service limits ``payload`` breaks (empty when within them)."""
        return []

    def url(self, alert: Alert) -> str:
        """Return the URL to POST to (some services add query parameters)."""
        return self.config.url

    def headers(self, alert: Alert, body: bytes) -> dict[str, str]:
        """Return the request headers for ``body`` (the exact bytes sent)."""
        return {"Content-Type": "application/json; charset=utf-8"}

    def accept(self, response: httpx.Response) -> str | None:
        """Return why a 2xx response is not a success, or None when it is."""
        return None

    def send(self, alert: Alert, payload: dict[str, Any]) -> SendResult:
        """POST ``payload`` once and classify the answer (see the module docstring)."""
        body = json_body(payload)
        started = time.monotonic()
        try:
            response = self.client.post(
                self.url(alert),
                content=body,
                headers=self.headers(alert, body),
                timeout=self.config.timeout_s,
                extensions={ALLOW_EXTENSION: self.config.allow_private_address},
            )
        except RefusedAddress as exc:  # where the host points will not change on a retry
            return SendResult("permanent", error=str(exc))
        except httpx.TimeoutException as exc:
            return SendResult("transient", error=f"timed out: {type(exc).__name__}")
        except httpx.HTTPError as exc:
            return SendResult("transient", error=f"{type(exc).__name__}: {exc}")
        took = int((time.monotonic() - started) * 1000)
        return self.classify(response, took)

    def classify(self, response: httpx.Response, duration_ms: int | None = None) -> SendResult:
        """Turn a response into an ``SendResult`` (see the module docstring)."""
        code = response.status_code
        if 200 <= code < 300:
            problem = self.accept(response)
            if problem is None:
                return SendResult("sent", code, duration_ms=duration_ms)
            return SendResult("permanent", code, problem, duration_ms=duration_ms)
        error = f"HTTP {code}: {_snippet(response)}"
        if code == 429:
            wait = retry_after_s(response)
            return SendResult("rate_limited", code, error, wait, duration_ms)
        if code == 408 or code >= 500:
            return SendResult("transient", code, error, duration_ms=duration_ms)
        return SendResult("permanent", code, error, duration_ms=duration_ms)
