"""Operational numbers computed from the store at the moment they are asked for (``/metrics``).

Nothing is counted in memory: every number is a query over the store, so
any number of web processes report the same values and a restart loses
nothing. The queries aggregate in the database (JSON fields through
SQLAlchemy's JSON paths, which SQLite and PostgreSQL both evaluate).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from checks.opinion.second_opinion import Flag
from checks.report import Status
from checks.store.alert_tables import DeliveryRow, IncidentRow
from checks.store.review_tables import ReviewOutcomeRow
from checks.store.run_tables import RunRow
from checks.store.store import Store
from worker.alerts.delivery_log import FAILED_STATUSES


@dataclass(frozen=True)
class Usage:
    """Tokens and cost of one component (``agent`` or ``decision``) over every stored run.

    ``cost_usd`` sums the costs known; runs whose cost is unknown add nothing.
    """

    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0


@dataclass(frozen=True)
class Stats:
    """The numbers ``/metrics`` exports.

    Attributes:
        runs: (status, finding or "") -> runs stored.
        flags: flag -> runs whose second opinion set it.
        usage: component (``agent``, ``decision``) -> tokens and cost.
        deliveries: (channel, status) -> deliveries stored.
        deliveries_failed: channel -> deliveries that failed or sent only the fallback.
        queued: runs waiting for a worker.
        running: runs being run.
        queue_lag_s: seconds the oldest queued run has waited past its slot (0: none).
        open_incidents: incident kind -> open incidents.
        outcomes: resolve reason -> runs labelled so.
        decided: who decided (``checks``, ``agent``, ``override``, ``pinned``) -> runs
            with a finding; ``pinned`` runs asked no LLM (``checks.pinned``).
    """

    runs: dict[tuple[str, str], int] = field(default_factory=dict)
    flags: dict[str, int] = field(default_factory=dict)
    usage: dict[str, Usage] = field(default_factory=dict)
    deliveries: dict[tuple[str, str], int] = field(default_factory=dict)
    deliveries_failed: dict[str, int] = field(default_factory=dict)
    queued: int = 0
    running: int = 0
    queue_lag_s: float = 0.0
    open_incidents: dict[str, int] = field(default_factory=dict)
    outcomes: dict[str, int] = field(default_factory=dict)
    decided: dict[str, int] = field(default_factory=dict)


def _usage(session: Session, column: str) -> Usage:
    data = getattr(RunRow, column)
    row = session.execute(
        select(
            func.coalesce(func.sum(data["input_tokens"].as_integer()), 0),
            func.coalesce(func.sum(data["output_tokens"].as_integer()), 0),
            func.coalesce(func.sum(data["cost_usd"].as_float()), 0.0),
        ).where(data.is_not(None))
    ).one()
    return Usage(int(row[0]), int(row[1]), float(row[2]))


def _queue(session: Session, now: dt.datetime) -> tuple[int, int, float]:
    counts = dict(
        session.execute(
            select(RunRow.status, func.count())
            .where(RunRow.status.in_([str(Status.QUEUED), str(Status.RUNNING)]))
            .group_by(RunRow.status)
        ).all()
    )
    oldest = session.scalar(
        select(func.min(RunRow.scheduled_for)).where(RunRow.status == str(Status.QUEUED))
    )
    lag = max(0.0, (now - oldest).total_seconds()) if oldest is not None else 0.0
    return counts.get(str(Status.QUEUED), 0), counts.get(str(Status.RUNNING), 0), lag


def stats(store: Store, *, now: dt.datetime) -> Stats:
    """Return the numbers of ``Stats``, read from the store now."""
    with store.session() as session:
        runs = {
            (status, finding or ""): n
            for status, finding, n in session.execute(
                select(RunRow.status, RunRow.finding, func.count()).group_by(
                    RunRow.status, RunRow.finding
                )
            )
        }
        flags = {
            str(flag): int(
                session.scalar(select(func.count()).where(RunRow.flags.like(f"%,{flag},%"))) or 0
            )
            for flag in Flag
        }
        deliveries = {
            (channel, status): n
            for channel, status, n in session.execute(
                select(DeliveryRow.channel, DeliveryRow.status, func.count()).group_by(
                    DeliveryRow.channel, DeliveryRow.status
                )
            )
        }
        failed: dict[str, int] = {}
        for (channel, status), n in deliveries.items():
            if status in FAILED_STATUSES:
                failed[channel] = failed.get(channel, 0) + n
        queued, running, lag = _queue(session, now)
        incidents = dict(
            session.execute(
                select(IncidentRow.kind, func.count())
                .where(IncidentRow.open_key.is_not(None))
                .group_by(IncidentRow.kind)
            ).all()
        )
        outcomes = dict(
            session.execute(
                select(ReviewOutcomeRow.reason, func.count()).group_by(ReviewOutcomeRow.reason)
            ).all()
        )
        usage = {"agent": _usage(session, "agent"), "decision": _usage(session, "second_opinion")}
        decided = {
            str(source): n
            for source, n in session.execute(
                select(RunRow.finding_source, func.count())
                .where(RunRow.finding_source.is_not(None))
                .group_by(RunRow.finding_source)
            )
        }
    return Stats(
        runs, flags, usage, deliveries, failed, queued, running, lag, incidents, outcomes, decided
    )
