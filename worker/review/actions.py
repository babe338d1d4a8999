"""Recording what people do about a report: acknowledge, assign, snooze, comment, resolve, run now.

Every action is one ``review_actions`` row with who and when, written in its
own transaction; nothing is updated in place. A resolve also writes the
run's labelled outcome (``review_outcomes``) in the same transaction, with
the decision model's answers as they were, for measuring it later.

"Run now" queues a run the way ``lookout run-now`` does (``worker.service.run_queue.
RunQueue.add_manual``, then the broker message, then ``mark_sent``), from the
automation's current file. If the broker cannot be reached the run stays
queued without a message and the service's reaper sends it later
(``service.unsent_grace_s``); the result says so, with the error redacted
(secrets of the settings, and any password inside a URL).
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable
from dataclasses import dataclass

from sqlalchemy import select

from checks.automation.loader import load_automations
from checks.automation.monitors import add_monitors, make_monitors, monitored_sources
from checks.report import Status
from checks.settings.config import Settings, redact
from checks.sources.pool import SourcePool
from checks.store.review_tables import ReviewActionRow, ReviewOutcomeRow
from checks.store.run_tables import RunRow
from checks.store.store import Store
from worker.review.board import opinion_fields
from worker.review.state import incident_of, to_action
from worker.review.vocabulary import (
    Action,
    ActionKind,
    InvalidAction,
    NotFound,
    ResolveReason,
)
from worker.service.dispatch import visibility_problem
from worker.service.queue_records import QueuedRun, queued_run
from worker.service.run_queue import RunQueue

Send = Callable[[QueuedRun], None]
"""Sends a queued run's message to the broker (``worker.service.tasks.send_run``)."""

_URL_PASSWORD = re.compile(r"(://[^:/@\s]*:)[^@\s]+@")
MAX_COMMENT_CHARS = 10_000
MAX_NAME_CHARS = 100
MAX_SNOOZE = dt.timedelta(days=90)


@dataclass(frozen=True)
class ActionRequest:
    """An action to record on a run (not ``run_now``: see ``run_now``).

    Attributes:
        kind: what is done.
        assignee: for ``assign``: who (empty or None: nobody).
        until: for ``snooze``: when it ends (aware; after now, within 90 days).
        reason: for ``resolve``: why (required).
        comment: for ``comment`` (required), or a note with ``resolve``.
    """

    kind: ActionKind
    assignee: str | None = None
    until: dt.datetime | None = None
    reason: ResolveReason | None = None
    comment: str | None = None


@dataclass(frozen=True)
class Outcome:
    """A run labelled by a resolve (``checks.store.review_tables.ReviewOutcomeRow``)."""

    run_id: int
    automation: str
    incident_id: int | None
    reason: ResolveReason
    comment: str | None
    labelled_by: str
    labelled_at: dt.datetime
    status: str
    finding: str | None
    finding_source: str | None
    backend: str | None
    goal_met: float | None
    urgency: str | None
    flags: list[str]


@dataclass(frozen=True)
class RunNowResult:
    """What ``run_now`` did: the action, the run it queued, and whether its message left.

    ``error`` says why the message could not be sent (the reaper sends it later).
    """

    action: Action
    queued_run_id: int
    sent: bool
    error: str | None = None


def _check(request: ActionRequest, now: dt.datetime) -> ActionRequest:
    """Return the request with its text trimmed, or raise ``InvalidAction``."""
    comment = (request.comment or "").strip() or None
    assignee = (request.assignee or "").strip() or None
    if comment and len(comment) > MAX_COMMENT_CHARS:
        raise InvalidAction(f"a comment holds at most {MAX_COMMENT_CHARS} characters")
    if assignee and len(assignee) > MAX_NAME_CHARS:
        raise InvalidAction(f"an assignee's name holds at most {MAX_NAME_CHARS} characters")
    if request.kind == ActionKind.RUN_NOW:
        raise InvalidAction("run now queues a run: use run_now")
    if request.kind == ActionKind.COMMENT and not comment:
        raise InvalidAction("a comment needs text")
    if request.kind == ActionKind.RESOLVE and request.reason is None:
        reasons = ", ".join(r.value for r in ResolveReason)
        raise InvalidAction(f"resolving needs a reason: one of {reasons}")
    if request.kind == ActionKind.SNOOZE:
        if request.until is None or request.until.tzinfo is None:
            raise InvalidAction("snoozing needs an end time with its time zone")
        if not now < request.until <= now + MAX_SNOOZE:
            raise InvalidAction("a snooze ends after now and within 90 days")
    return ActionRequest(request.kind, assignee, request.until, request.reason, comment)


def record(
    store: Store, run_id: int, request: ActionRequest, *, actor: str, now: dt.datetime
) -> Action:
    """Record one action on a run and return it (with a resolve, also the run's outcome).

    Args:
        store: the report store.
        run_id: the run acted on; its incident, if any, is recorded too.
        request: the action.
        actor: who does it (a user name, ``token:NAME`` or ``local``).
        now: the action's time (aware).

    Raises:
        NotFound: no run has this id.
        InvalidAction: the request breaks a rule (see ``ActionRequest``).
    """
    request = _check(request, now)
    with store.session() as session:
        run = session.get(RunRow, run_id)
        if run is None:
            raise NotFound(f"no run with id {run_id}")
        incident = incident_of(session, run.automation, run.id, run.status, run.finding)
        row = ReviewActionRow(
            run_id=run.id,
            automation=run.automation,
            incident_id=incident.id if incident else None,
            kind=str(request.kind),
            actor=actor,
            at=now,
            assignee=request.assignee,
            until=request.until,
            reason=str(request.reason) if request.reason else None,
            comment=request.comment,
        )
        session.add(row)
        if request.kind == ActionKind.RESOLVE:
            _label(session.get(ReviewOutcomeRow, run.id), run, row, session.add)
        session.flush()
        return to_action(row)


def _label(
    existing: ReviewOutcomeRow | None,
    run: RunRow,
    action: ReviewActionRow,
    add: Callable[[ReviewOutcomeRow], None],
) -> None:
    """Write (or replace) the run's labelled outcome from a resolve action."""
    flags, urgency, goal_met = opinion_fields(run.second_opinion)
    outcome = existing or ReviewOutcomeRow(run_id=run.id)
    outcome.automation = run.automation
    outcome.incident_id = action.incident_id
    outcome.reason = action.reason or ""
    outcome.comment = action.comment
    outcome.labelled_by = action.actor
    outcome.labelled_at = action.at
    outcome.status = run.status
    outcome.finding = run.finding
    outcome.finding_source = run.finding_source
    outcome.backend = (run.second_opinion or {}).get("backend")
    outcome.goal_met = goal_met
    outcome.urgency = urgency
    outcome.flags = list(flags)
    if existing is None:
        add(outcome)


def run_now(
    store: Store,
    settings: Settings,
    run_id: int,
    *,
    actor: str,
    now: dt.datetime,
    send: Send,
) -> RunNowResult:
    """Queue a run of the automation of ``run_id`` now, and record who asked.

    The automation is read from its file now (as ``lookout run-now`` does), so
    the run uses its current definition; a monitor is made again from its
    source's catalog (``checks.automation.monitors``).

    A run asked for this way that no worker has claimed yet is reused (its
    message sent again; a worker claims a run once), so a hundred clicks queue
    one run, not a hundred.

    Raises:
        NotFound: no run has this id, or its automation is no longer in the
            automations folder (or is invalid there).
        InvalidAction: this instant already has a run of the automation, or
            its hard limit breaks the dispatch rule (``visibility_problem``).
    """
    with store.session() as session:
        run = session.get(RunRow, run_id)
        if run is None:
            raise NotFound(f"no run with id {run_id}")
        name = run.automation
    loaded = load_automations(settings.automations_dir, known_sources=settings.sources.keys())
    monitored = monitored_sources(settings, [name])
    if monitored:  # a monitor: made again from its source's catalog
        with SourcePool(settings) as pool:
            add_monitors(loaded, make_monitors(settings, pool.get, monitored))
    try:
        automation = loaded.by_name(name)
    except KeyError:
        raise NotFound(f"no valid automation named '{name}' in the automations folder") from None
    problem = visibility_problem(automation, settings.service)
    if problem is not None:  # the rule dispatch applies to every scheduled run
        raise InvalidAction(f"{name} cannot be sent to the workers: {problem}")
    queue = RunQueue(store)
    # the slot's time is the store's, as every slot's is (the web host's clock may be off)
    queued = _waiting_manual_run(store, name) or queue.add_manual(
        name, automation.source, automation.definition(), now=queue.now()
    )
    if queued is None:
        raise InvalidAction(f"{name} already has a run for this instant; try again")
    error: str | None = None
    try:
        send(queued)
        queue.mark_sent([queued.id])
    except Exception as exc:  # the broker is down: the reaper sends the queued run later
        error = _URL_PASSWORD.sub(
            r"\1***@", redact(f"{type(exc).__name__}: {exc}", settings.secrets())
        )
    with store.session() as session:
        row = ReviewActionRow(
            run_id=run_id,
            automation=name,
            incident_id=None,
            kind=str(ActionKind.RUN_NOW),
            actor=actor,
            at=now,
            queued_run_id=queued.id,
        )
        session.add(row)
        session.flush()
        action = to_action(row)
    return RunNowResult(action, queued.id, error is None, error)


def _waiting_manual_run(store: Store, automation: str) -> QueuedRun | None:
    """The newest run of ``automation`` asked for now (``manual``) and still queued, if any."""
    with store.session() as session:
        row = session.scalars(
            select(RunRow)
            .where(
                RunRow.automation == automation,
                RunRow.status == str(Status.QUEUED),
                RunRow.trigger == "manual",
            )
            .order_by(RunRow.id.desc())
            .limit(1)
        ).first()
        return queued_run(row) if row is not None else None


def outcomes(store: Store, *, automation: str | None = None, limit: int = 500) -> list[Outcome]:
    """Return labelled outcomes, newest label first (of one automation when named)."""
    query = select(ReviewOutcomeRow).order_by(ReviewOutcomeRow.labelled_at.desc()).limit(limit)
    if automation:
        query = query.where(ReviewOutcomeRow.automation == automation)
    with store.session() as session:
        return [
            Outcome(
                run_id=r.run_id,
                automation=r.automation,
                incident_id=r.incident_id,
                reason=ResolveReason(r.reason),
                comment=r.comment,
                labelled_by=r.labelled_by,
                labelled_at=r.labelled_at,
                status=r.status,
                finding=r.finding,
                finding_source=r.finding_source,
                backend=r.backend,
                goal_met=r.goal_met,
                urgency=r.urgency,
                flags=list(r.flags or []),
            )
            for r in session.scalars(query)
        ]
