"""One run's lifecycle, the same for every trigger: row → run (traced) → finish fenced → incidents.

``run_and_store`` is the one sequence ``lookout run``, the service's run task
and ``lookout eval`` take:

1. **start or take the run row**: ``lookout run`` starts its own
   (``Store.start_run``, created claimed, attempt 1); the service's task hands
   over the row it claimed (a ``Claim``: claim, lease and admission are the
   service's, ``worker.service.claims``);
2. **run**: ``checks.run.run_automation``, its agent traced under the run's id
   and attempt as it happens (``checks.agent.trace.TraceWriter``);
3. **finish**, fenced on the attempt (``Store.finish_run``): a late write of an
   attempt no longer current is refused; an unexpected error ends the run in
   ``error`` with its reason, fenced the same way (``Store.fail_run``);
4. **move its incidents** (``checks.store.incidents.decide_run_events``), alerts or not,
   then hand the planned events to ``deliver`` when the caller delivers them
   (the service's alert task; ``lookout run --notify`` delivers after it).

``lookout eval`` gives no store: its runs are measured, never kept, so only
step 2 runs (with its trace kept in memory).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import logging
from collections.abc import Callable
from dataclasses import dataclass

from sqlalchemy.exc import SQLAlchemyError

from checks.agent.trace import TraceWriter
from checks.automation.model import Automation
from checks.clock import utcnow
from checks.errors import StoreError, first_line
from checks.report import RunReport, Status
from checks.run import Progress, SourcePool, run_automation
from checks.settings.config import Settings, redact
from checks.store.incidents import RunEvents, decide_run_events
from checks.store.store import Store

log = logging.getLogger("lookout.run")


@dataclass(frozen=True)
class Claim:
    """A run row the caller has claimed: its id and the attempt every write is fenced on."""

    run_id: int
    attempt: int


Deliver = Callable[[RunReport, "RunEvents | None"], None]
"""Called once a run has ended and been stored, with its planned events.

The events are None when its incidents could not be moved here (the failure is
logged): the deliverer then plans the run itself.
"""

KnownFailure = Callable[[Exception], "str | None"]
"""The reason an exception ends a run as expected (a time limit), or None: a bug, re-raised."""


def run_and_store(
    automation: Automation,
    settings: Settings,
    sources: SourcePool,
    store: Store | None,
    *,
    claim: Claim | None = None,
    scheduled_for: dt.datetime | None = None,
    trigger: str = "manual",
    progress: Progress | None = None,
    announce: bool = False,
    fresh: bool = False,
    deliver: Deliver | None = None,
    known_failure: KnownFailure | None = None,
) -> RunReport:
    """Run one automation through its whole lifecycle and return its report (see the module).

    The run row exists before anything runs, so the agent's trace is written
    under its id as it happens and survives a crash halfway. Once claimed, the
    run always ends: an unexpected error is stored as the run's ``error`` (its
    type and message, secrets redacted) before it propagates, and the store
    writes are retried while the store is briefly unavailable
    (``checks.store.store.retry_writes``).

    Args:
        automation: the automation, as loaded (or as its stored definition loads back).
        settings: sources, limits, the LLM and ``alerts.events``.
        sources: the open sources of this process.
        store: where the run is kept; None (``lookout eval``): only run, nothing stored.
        claim: the row the caller claimed (the service); None: a row is started here.
        scheduled_for: the slot (zone-aware); defaults to now.
        trigger: ``manual``, ``schedule``, ``fresh`` or ``eval``.
        progress: called with a short line as each step starts.
        announce: whether this run's events are planned for delivery (the service,
            ``lookout run --notify``); without it incidents move and nothing is announced.
        fresh: ask the agent even when the pinned plan's evidence is unchanged.
        deliver: hands a stored run's events to its channels (the service).
        known_failure: names the exceptions that end a run as expected, with the
            reason stored; the run's report comes back instead of the exception.

    Raises:
        StoreError: the slot already has a run, the store stayed unavailable past
            its retries, or (without ``deliver``) the incidents could not be moved.
    """
    slot = scheduled_for or utcnow()
    if store is None:
        return run_automation(
            automation, settings, sources, scheduled_for=slot, trigger=trigger,
            progress=progress, fresh=fresh,
        )  # fmt: skip
    claim = claim or _start(store, automation, slot, trigger)
    secrets = settings.secrets()
    trace = TraceWriter(store, claim.run_id, secrets=secrets, attempt=claim.attempt)
    try:
        report = run_automation(
            automation, settings, sources, scheduled_for=slot, trigger=trigger,
            progress=progress, trace=trace, store=store, fresh=fresh, run_id=claim.run_id,
        )  # fmt: skip
        report.run_id, report.attempt = claim.run_id, claim.attempt
        # the events noted last (the shared statements of a checks-only run) go with the result
        stored = store.finish_run(claim.run_id, claim.attempt, report, also=trace.write_noted)
    except Exception as exc:
        with contextlib.suppress(SQLAlchemyError):  # what was noted before the failure, kept
            trace.flush()
        known = known_failure(exc) if known_failure is not None else None
        reason = known or redact(f"internal error: {type(exc).__name__}: {exc}", secrets)
        failed = _fail(store, automation, claim, reason, settings, announce, deliver)
        if known is not None:
            return failed or _ended_in_error(automation, slot, trigger, reason)
        if isinstance(exc, SQLAlchemyError):  # the store failed mid-run, then came back
            raise StoreError(f"run {claim.run_id} ended in error: {reason}") from None
        raise
    if stored:
        _ended(store, report, settings, announce, deliver)
    else:
        log.warning(
            "run %d attempt %d: result refused (no longer current)", claim.run_id, claim.attempt
        )
    return report


def _ended_in_error(
    automation: Automation, slot: dt.datetime, trigger: str, reason: str
) -> RunReport:
    """The report of a run ended in error that the store could not give back."""
    return RunReport(
        automation=automation.name,
        scheduled_for=slot,
        status=Status.ERROR,
        trigger=trigger,
        error=reason,
        summary=f"**Error** — {reason}",
        finished_at=utcnow(),
    )


def _start(store: Store, automation: Automation, slot: dt.datetime, trigger: str) -> Claim:
    """Insert the run row already claimed (``Store.start_run``), for a run this process runs."""
    try:
        started = store.start_run(
            automation.name,
            slot,
            lease_s=automation.timeout_s + 60,
            trigger=trigger,
            definition=automation.definition(),
        )
    except SQLAlchemyError as exc:
        raise StoreError(f"cannot store a run of {automation.name}: {first_line(exc)}") from None
    if started is None:
        raise StoreError(f"{automation.name} already has a run for {slot.isoformat()}")
    return Claim(*started)


def _ended(
    store: Store,
    report: RunReport,
    settings: Settings,
    announce: bool,
    deliver: Deliver | None,
) -> None:
    """Move a stored run's incidents, then hand its events to ``deliver``."""
    try:
        run_events = decide_run_events(
            store.engine, report, now=utcnow(), enabled=settings.alerts.events, announce=announce
        )
    except Exception:
        if deliver is None:
            raise
        log.exception("run %s: could not move its incidents", report.run_id)
        run_events = None
    if deliver is not None:
        deliver(report, run_events)


def _fail(
    store: Store,
    automation: Automation,
    claim: Claim,
    reason: str,
    settings: Settings,
    announce: bool,
    deliver: Deliver | None,
) -> RunReport | None:
    """End the claimed attempt in error with ``reason``; return the stored run when it was."""
    try:
        written = store.fail_run(claim.run_id, claim.attempt, reason)
    except SQLAlchemyError as again:
        raise StoreError(
            f"run {claim.run_id} of {automation.name} failed ({reason}) and the store could not"
            f" record it: {redact(first_line(again), settings.secrets())}"
        ) from None
    if not written:  # another attempt holds the run, or it has ended
        return None
    failed = None
    with contextlib.suppress(Exception):  # best effort: the run's own error is what matters
        failed = store.get_run(claim.run_id)
    if failed is not None:
        with contextlib.suppress(Exception):  # its deliverer plans it itself if this fails
            _ended(store, failed, settings, announce, deliver)
    return failed
