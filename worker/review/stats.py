"""Operational numbers computed from the store at the moment they are asked for (``/metrics``).

Nothing is counted in memory: every number is a query over the store, so
any number of web processes report the same values and a restart loses
nothing. The queries aggregate in the database over plain columns (tokens and
cost are copied from each run's JSON when it is written,
``checks.store.list_columns``): one pass over the runs for the flags, tokens and
cost, the runs by status and finding from an index, a fixed number of
statements whatever the store holds.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import case, func, select
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


def _run_sums(session: Session) -> tuple[dict[str, int], dict[str, Usage]]:
    """Runs per flag and tokens and cost per component, in one pass over the runs."""
    flags = [str(flag) for flag in Flag]
    sums: list[Any] = [
        func.coalesce(func.sum(case((RunRow.flags.like(f"%,{flag},%"), 1), else_=0)), 0)
        for flag in flags
    ]
    components = ("agent", "decision")
    for component in components:
        for part in ("input_tokens", "output_tokens", "cost_usd"):
            sums.append(func.coalesce(func.sum(getattr(RunRow, f"{component}_{part}")), 0))
    row = session.execute(select(*sums)).one()
    counted = {flag: int(row[i]) for i, flag in enumerate(flags)}
    usage = {}
    for i, component in enumerate(components):
        at = len(flags) + 3 * i
        usage[component] = Usage(int(row[at]), int(row[at + 1]), float(row[at + 2]))
    return counted, usage


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
        runs: dict[tuple[str, str], int] = {}
        decided: dict[str, int] = {}
        by_kind = select(RunRow.status, RunRow.finding, RunRow.finding_source, func.count())
        for status, finding, source, n in session.execute(  # read from an index alone
            by_kind.group_by(RunRow.status, RunRow.finding, RunRow.finding_source)
        ):
            runs[(status, finding or "")] = runs.get((status, finding or ""), 0) + n
            if source is not None:
                decided[str(source)] = decided.get(str(source), 0) + n
        flags, usage = _run_sums(session)
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
    return Stats(
        runs, flags, usage, deliveries, failed, queued, running, lag, incidents, outcomes, decided
    )
