"""Sending one claimed delivery: rate limit, retries, fallback, and a record of every attempt.

``send_claimed`` takes a delivery row already claimed (status ``sending``)
and sends it through its channel's sender (``worker.alerts.channels``):

- before each attempt, the URL's token bucket (``worker.alerts.ratelimit``);
- 429: wait ``Retry-After`` (or Discord's ``retry_after``) when it is at most
  ``alerts.retry_after_cap_s``; a longer wait ends the delivery as failed;
- 5xx, 408, timeouts and connection errors: exponential backoff with jitter
  (``backoff_s``: from ``alerts.backoff_base_s`` doubling up to
  ``alerts.backoff_max_s``), ``alerts.max_attempts`` tries in all (tenacity);
- any other 4xx: not retried. The minimal fallback ("X needs attention:
  link") is tried once; the delivery ends ``fallback_sent`` (the failure kept in
  ``error``) or ``failed``.

Each attempt, fallback included, is an ``alert_attempts`` row committed as
soon as the answer is in; errors are redacted before they are written.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, cast

import httpx
from sqlalchemy import CursorResult, Engine, update
from sqlalchemy.orm import Session
from tenacity import RetryCallState, Retrying, retry_if_result, stop_after_attempt

from checks.clock import utcnow
from checks.settings.config import Settings, redact
from checks.store.alert_tables import AttemptRow, DeliveryRow
from worker.alerts.channel import Sender, SendResult
from worker.alerts.channels import sender_for
from worker.alerts.delivery_log import DeliveryRecord, get_delivery, record_of
from worker.alerts.guard import GuardedTransport
from worker.alerts.message import Alert
from worker.alerts.ratelimit import Buckets, MemoryBuckets, bucket_key, buckets_for

Sleep = Callable[[float], None]


@dataclass
class Context:
    """What one delivery call shares: store engine, settings, HTTP client, buckets, sleep."""

    engine: Engine
    settings: Settings
    client: httpx.Client
    buckets: Buckets
    sleep: Sleep = time.sleep

    def redact(self, text: str | None) -> str | None:
        """Return ``text`` with every configured secret and signed query value hidden."""
        return None if text is None else redact(text, self.settings.secrets())


@contextmanager
def open_context(
    engine: Engine, settings: Settings, client: httpx.Client | None, sleep: Sleep
) -> Iterator[Context]:
    """Yield a ``Context``; a client made here (``client`` None) is closed at the end."""
    buckets: Buckets
    try:
        buckets = buckets_for(settings.alerts.rate_limiter, settings.redis_url)
    except RuntimeError:
        buckets = MemoryBuckets()
    own = client is None
    # the guard resolves each channel's host once and refuses this machine / metadata addresses
    http = client or httpx.Client(follow_redirects=False, transport=GuardedTransport())
    try:
        yield Context(engine, settings, http, buckets, sleep)
    finally:
        if own:
            http.close()


def update_delivery(
    engine: Engine, row_id: int, values: dict[str, Any], *, only_if_status: str | None = None
) -> bool:
    """Update one delivery row (only from ``only_if_status`` when given); return whether it did."""
    statement = update(DeliveryRow).where(DeliveryRow.id == row_id).values(**values)
    if only_if_status is not None:
        statement = statement.where(DeliveryRow.status == only_if_status)
    with Session(engine) as session, session.begin():
        result = cast(CursorResult[Any], session.execute(statement))
        return result.rowcount == 1


def send_claimed(ctx: Context, row_id: int) -> DeliveryRecord:
    """Send a claimed (``sending``) delivery and return its final record.

    A row in any other status is returned as it is, untouched.
    """
    with Session(ctx.engine) as session:
        row = session.get(DeliveryRow, row_id)
        assert row is not None
        status, channel, alert = row.status, row.channel, Alert.from_json(row.alert)
        if status != "sending":
            return record_of(row)
    sender = sender_for(channel, ctx.settings.channels[channel], ctx.client)
    outcome = _with_retries(ctx, row_id, sender, alert)
    values: dict[str, Any] = {"http_status": outcome.http_status}
    if outcome.ok:
        values.update(status="sent", error=None)
    else:
        values.update(status="failed", error=_explain(ctx, outcome))
        if outcome.kind == "permanent" and outcome.http_status is not None:
            fallback = sender.fallback_payload(alert)
            second = _attempt(ctx, row_id, sender, alert, fallback, "fallback")
            values["http_status"] = second.http_status  # the last answer, as on the attempts
            if second.ok:
                values["status"] = "fallback_sent"
    values["finished_at"] = utcnow()  # after the fallback too
    update_delivery(ctx.engine, row_id, values)
    record = get_delivery(ctx.engine, row_id)
    assert record is not None
    return record


def _explain(ctx: Context, outcome: SendResult) -> str | None:
    error = outcome.error or outcome.kind
    if outcome.kind == "rate_limited":
        wait = outcome.retry_after_s
        asked = f"{wait:g} s" if wait is not None else "an unknown time"
        cap = ctx.settings.alerts.retry_after_cap_s
        error += f" (rate limited: asked to wait {asked}; ceiling {cap:g} s)"
    return ctx.redact(error)


def backoff_s(attempt: int, base_s: float, max_s: float) -> float:
    """Return the seconds to wait after failed try number ``attempt`` (1-based).

    ``base_s * 2 ** (attempt - 1)``, at most ``max_s``, plus up to 25 % random
    jitter so that workers do not retry in step.
    """
    wait = min(base_s * 2.0 ** (attempt - 1), max_s)
    return wait + random.uniform(0, wait / 4)


def _with_retries(ctx: Context, row_id: int, sender: Sender, alert: Alert) -> SendResult:
    """Send the full message: 429 and transient failures retried, other 4xx not."""
    policy = ctx.settings.alerts
    payload = sender.payload(alert)

    def retryable(outcome: SendResult) -> bool:
        if outcome.kind == "rate_limited":
            return (outcome.retry_after_s or 0.0) <= policy.retry_after_cap_s
        return outcome.kind == "transient"

    def last(state: RetryCallState) -> SendResult:
        assert state.outcome is not None
        outcome: SendResult = state.outcome.result()
        return outcome

    def wait(state: RetryCallState) -> float:
        outcome = last(state)
        if outcome.kind == "rate_limited" and outcome.retry_after_s is not None:
            return outcome.retry_after_s
        return backoff_s(state.attempt_number, policy.backoff_base_s, policy.backoff_max_s)

    retrying = Retrying(
        stop=stop_after_attempt(policy.max_attempts),
        wait=wait,
        retry=retry_if_result(retryable),
        sleep=ctx.sleep,
        retry_error_callback=last,
    )
    result: SendResult = retrying(_attempt, ctx, row_id, sender, alert, payload, "message")
    return result


def _attempt(
    ctx: Context, row_id: int, sender: Sender, alert: Alert, payload: dict[str, Any], kind: str
) -> SendResult:
    """Wait for the URL's rate-limit slot, make one attempt, and record it."""
    config = sender.config
    try:
        wait = ctx.buckets.reserve(bucket_key(config.url), config.rate_per_s)
    except Exception:  # Redis went away mid-run: keep the pace in this process
        ctx.buckets = MemoryBuckets()
        wait = ctx.buckets.reserve(bucket_key(config.url), config.rate_per_s)
    if wait > 0:
        ctx.sleep(wait)
    outcome = sender.send(alert, payload)
    with Session(ctx.engine) as session, session.begin():
        row = session.get(DeliveryRow, row_id, with_for_update=True)
        assert row is not None
        row.attempts += 1
        row.http_status = outcome.http_status
        session.add(
            AttemptRow(
                delivery_id=row_id,
                number=row.attempts,
                kind=kind,
                at=utcnow(),
                outcome=outcome.kind,
                http_status=outcome.http_status,
                error=ctx.redact(outcome.error),
                duration_ms=outcome.duration_ms,
            )
        )
    return outcome
