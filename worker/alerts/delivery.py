"""Delivering a run's alerts: each (run, event, channel) at most once, every attempt recorded.

``deliver_for_run`` is the one entry point (``lookout run --notify`` calls it
in-process; the Celery task ``worker.service.delivery_tasks.deliver_run`` calls it
in a worker). For one stored run it:

1. plans the run's events (``checks.store.incidents.decide_run_events``: decided once per run,
   normally already when the run was stored);
2. routes them to channels (``worker.alerts.routing``: one message per channel);
3. **claims** each (run, event, channel) by inserting its ``alert_deliveries``
   row — unique on that triple — *before* anything is sent. A redelivered
   task, a retry of this call or a second worker hits the constraint and sends
   nothing. A channel in quiet hours gets its row as ``deferred`` instead;
   ``deliver_due`` sends it when the window ends;
4. sends what it claimed (``worker.alerts.attempts``: per-URL rate limit, 429 and
   5xx retried within bounds, permanent 4xx not retried but a minimal
   fallback tried once).

Every attempt is an ``alert_attempts`` row (kind, outcome, HTTP status,
redacted error, time, duration). The price of sending at most once: a worker
killed between claiming and finishing leaves the row ``sending``;
``deliver_due`` marks such rows ``failed`` ("outcome unknown") after
``alerts.stale_sending_s`` rather than risk a duplicate.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import time

import httpx
from sqlalchemy import Engine, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from checks.clock import utcnow
from checks.finding import anomaly_lines, not_evaluated_lines, warned_lines
from checks.opinion.row_diff import change_lines
from checks.report import RunReport
from checks.settings.config import Settings
from checks.store.alert_tables import DeliveryRow
from checks.store.incidents import AlertEvent, decide_run_events
from checks.store.store import Store
from worker.alerts.attempts import Context, Sleep, open_context, send_claimed, update_delivery
from worker.alerts.delivery_log import DeliveryRecord, get_delivery
from worker.alerts.message import TEST_EVENT, Alert, cut, opinion_of, run_link
from worker.alerts.routing import About, Route, hold_until, routes


def _engine(store_or_engine: Store | Engine) -> Engine:
    return store_or_engine.engine if isinstance(store_or_engine, Store) else store_or_engine


def idempotency_key(run_id: int | None, event: str, channel: str) -> str:
    """Return the key of one (run, event, channel) delivery, as sent to receivers."""
    return f"lookout-{run_id}-{event}-{channel}"


def build_alert(report: RunReport, event: AlertEvent, settings: Settings) -> Alert:
    """Return the alert for one planned event of a stored run (summary cut to its budget)."""
    urgency, flags = opinion_of(report)
    summary, truncated = cut(report.summary, settings.alerts.summary_chars)
    error = cut(report.error, settings.alerts.summary_chars)[0] if report.error else None
    definition = report.definition
    return Alert(
        event=str(event.kind),
        automation=report.automation,
        run_id=report.run_id,
        link=run_link(settings.review_base_url, report.run_id),
        status=str(report.status),
        finding=str(report.finding) if report.finding else None,
        urgency=urgency,
        flags=flags,
        summary=summary,
        summary_truncated=truncated,
        owner=cut(str(definition["owner"]), 200)[0] if definition.get("owner") else None,
        severity=definition.get("severity"),
        error=error,
        reminder=event.reminder,
        opened_at=event.opened_at,
        thread_key=event.thread_key,
        not_evaluated=tuple(not_evaluated_lines(report.checks)),
        since_last_run=tuple(change_lines(report.second_opinion)),
        anomalies=tuple(anomaly_lines(report.checks)),
        warnings=tuple(warned_lines(report.checks)),
    )


def deliver_for_run(
    store_or_engine: Store | Engine,
    settings: Settings,
    report: RunReport,
    *,
    now: dt.datetime | None = None,
    client: httpx.Client | None = None,
    sleep: Sleep = time.sleep,
) -> list[DeliveryRecord]:
    """Announce a stored run's events on its channels; return the deliveries this call made.

    Safe to call any number of times, from any number of workers: a (run,
    event, channel) already claimed is skipped (and not in the result).

    Args:
        store_or_engine: the report store (or its engine); the run must be in it.
        settings: channels, alert routing and delivery policy.
        report: the stored run (``run_id`` set), with its ``definition``.
        now: the current time, aware (default: the clock); decides reminders and
            quiet hours. Attempt times are always the real clock.
        client: the HTTP client (default: a new one, closed at the end).
        sleep: how to wait for backoff, ``Retry-After`` and rate limits.

    Returns:
        The deliveries claimed by this call: sent, fallback_sent, failed or deferred.

    Raises:
        ValueError: ``report`` has no ``run_id``.
        StoreError: the plan could not be written.
    """
    engine = _engine(store_or_engine)
    now = now or utcnow()
    run_events = decide_run_events(engine, report, now=now, enabled=settings.alerts.events)
    notify = [n for n in report.definition.get("notify") or [] if isinstance(n, str)]
    done: list[DeliveryRecord] = []
    chosen = routes(run_events.events, notify, settings, About.of(report.definition))
    if not chosen:  # nothing to send (e.g. no channel configured): no HTTP client, no buckets
        return done
    with open_context(engine, settings, client, sleep) as ctx:
        for route in chosen:
            alert = build_alert(report, route.event, settings)
            row_id = _claim(ctx, report.run_id, route, alert, now)
            if row_id is not None:
                done.append(send_claimed(ctx, row_id))
    return done


def deliver_due(
    store_or_engine: Store | Engine,
    settings: Settings,
    *,
    now: dt.datetime | None = None,
    client: httpx.Client | None = None,
    sleep: Sleep = time.sleep,
) -> list[DeliveryRecord]:
    """Send deferred deliveries whose quiet hours are over; close stale ``sending`` rows.

    Run it periodically (a beat entry, or ``lookout notify flush``). Each
    deferred row is taken with a conditional update, so two callers never send
    the same one. Returns the deliveries it sent or closed.
    """
    engine = _engine(store_or_engine)
    now = now or utcnow()
    done = _close_stale(engine, settings, now)
    query = (
        select(DeliveryRow.id)
        .where(DeliveryRow.status == "deferred", DeliveryRow.not_before <= now)
        .order_by(DeliveryRow.not_before, DeliveryRow.id)
    )
    with Session(engine) as session:
        due = list(session.scalars(query))
    with open_context(engine, settings, client, sleep) as ctx:
        for row_id in due:
            taken = update_delivery(
                engine,
                row_id,
                {"status": "sending", "claimed_at": now},
                only_if_status="deferred",
            )
            if taken:
                done.append(send_claimed(ctx, row_id))
    return done


def send_test(
    store_or_engine: Store | Engine,
    settings: Settings,
    channel: str,
    *,
    client: httpx.Client | None = None,
    sleep: Sleep = time.sleep,
) -> DeliveryRecord:
    """Send a sample message to ``channel`` (``lookout notify test``), recorded like any delivery.

    The sample quotes ``<!here>``, ``@everyone`` and a disguised link, so the
    channel shows they arrive inert.

    Raises:
        KeyError: ``channel`` is not configured.
    """
    config = settings.channels[channel]
    engine = _engine(store_or_engine)
    alert = Alert(
        event=TEST_EVENT,
        automation="lookout-test",
        run_id=None,
        link=run_link(settings.review_base_url, None),
        finding="needs_attention",
        urgency="worth_a_look",
        flags=("changed_since_last_run",),
        summary=(
            "A test message from `lookout notify test`. Quoted data stays inert: "
            "<!here> @everyone <https://example.invalid|click here> [label](https://example.invalid)"
        ),
        owner="lookout",
        severity="low",
    )
    now = utcnow()
    row = _new_row(None, TEST_EVENT, channel, config.type, alert, "sending", now)
    with Session(engine) as session, session.begin():
        session.add(row)
        session.flush()
        row_id = row.id
    with open_context(engine, settings, client, sleep) as ctx:
        return send_claimed(ctx, row_id)


def _new_row(
    run_id: int | None,
    event: str,
    channel: str,
    channel_type: str,
    alert: Alert,
    status: str,
    now: dt.datetime,
    *,
    reminder: bool = False,
    incident_id: int | None = None,
) -> DeliveryRow:
    return DeliveryRow(
        run_id=run_id,
        event=event,
        channel=channel,
        channel_type=channel_type,
        reminder=reminder,
        incident_id=incident_id,
        status=status,
        alert=alert.to_json(),
        attempts=0,
        created_at=now,
        claimed_at=now if status == "sending" else None,
    )


def _claim(
    ctx: Context, run_id: int | None, route: Route, alert: Alert, now: dt.datetime
) -> int | None:
    """Insert the delivery row (the idempotency key); return its id, or None if taken."""
    name, event = route.channel, route.event
    key = idempotency_key(run_id, str(event.kind), name)
    alert = dataclasses.replace(alert, extra={**alert.extra, "idempotency_key": key})
    config = ctx.settings.channels.get(name)
    hold = hold_until(name, alert.urgency, ctx.settings, now)
    status = "failed" if config is None else "deferred" if hold else "sending"
    row = _new_row(
        run_id,
        str(event.kind),
        name,
        config.type if config else "unknown",
        alert,
        status,
        now,
        reminder=event.reminder,
        incident_id=event.incident_id,
    )
    row.not_before = hold
    if config is None:
        row.error = f"unknown channel {name!r}: not in the config's channels"
        row.finished_at = now
    try:
        with Session(ctx.engine) as session, session.begin():
            session.add(row)
            session.flush()
            return row.id
    except IntegrityError:
        return None


def _close_stale(engine: Engine, settings: Settings, now: dt.datetime) -> list[DeliveryRecord]:
    """Mark ``sending`` rows older than ``stale_sending_s`` failed: outcome unknown, not resent."""
    cutoff = now - dt.timedelta(seconds=settings.alerts.stale_sending_s)
    query = select(DeliveryRow.id).where(
        DeliveryRow.status == "sending", DeliveryRow.claimed_at < cutoff
    )
    with Session(engine) as session:
        stale = list(session.scalars(query))
    closed = []
    message = "the worker stopped while sending: outcome unknown, not resent (at most once)"
    for row_id in stale:
        values = {"status": "failed", "error": message, "finished_at": now}
        if update_delivery(engine, row_id, values, only_if_status="sending"):
            record = get_delivery(engine, row_id)
            if record is not None:
                closed.append(record)
    return closed


__all__ = [
    "DeliveryRecord",
    "build_alert",
    "deliver_due",
    "deliver_for_run",
    "idempotency_key",
    "send_test",
]
