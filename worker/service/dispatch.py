"""``dispatch_due``: turn due cron slots into runs, queue them once, and reap lost ones.

Beat sends one task, ``dispatch_due``, every ``service.dispatch_interval_s``
(docs/design.md, Scheduling). Each call, in one worker:

1. re-reads the automation files that changed (``worker.service.known_automations``; a bad file
   is reported and skipped, the others go on);
2. for each enabled, scheduled automation, finds the slots in
   ``(cursor, now]`` (``worker.service.slots``: croniter in the automation's zone,
   the DST rule), applies its catch-up policy, then its overlap policy against
   its runs still queued or running;
3. inserts one ``runs`` row per slot — queued, or skipped with the reason —
   with ``ON CONFLICT DO NOTHING`` and moves the cursors, in one transaction;
4. sends a Celery message only for the queued rows actually inserted, so two
   beats, a restarted beat or a dispatcher running twice never queue a slot twice;
5. reaps: requeues runs whose lease ran out (giving up after
   ``service.max_attempts``) and resends queued runs whose message never left
   or was lost.

A new automation, or one whose schedule, zone or day rule changed, starts at
the time it is first seen: no catch-up for slots before it existed. While an
automation is disabled its slots pass without records.

Nothing here imports Celery: the message is sent by the ``send`` callable
given to ``Dispatcher`` (``worker.service.tasks.send_run`` in the service, a list in
tests and the benchmark). With ``send_batch`` (``worker.service.tasks.run_sender``),
each batch of messages — the tick's new runs, the requeued ones, the resent
ones — goes out on one broker connection instead of one taken per message.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import logging
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager
from dataclasses import asdict, dataclass, field

from checks.automation.model import Automation
from checks.settings.config import Settings
from checks.settings.service import ServiceSettings
from worker.service.known_automations import KnownAutomations
from worker.service.queue_records import ActiveRun, Cursor, NewRun, QueuedRun
from worker.service.run_queue import RunQueue
from worker.service.slots import (
    CronSchedule,
    SlotDecision,
    apply_catchup,
    next_occurrences,
    occurrences,
)

log = logging.getLogger("lookout.dispatch")

_MAX_SHARED_SLOTS = 50_000  # (schedule, cursor) pairs kept; cleared when full
Sender = Callable[[QueuedRun], None]
BatchSender = Callable[[], AbstractContextManager[Sender]]
"""Opens a batch: yields a ``Sender`` whose messages share one broker connection."""


@dataclass
class DispatchResult:
    """What one ``dispatch_due`` call did (also the Celery task's return value).

    Attributes:
        queued: ids of the runs inserted and sent.
        skipped: slots recorded as skipped.
        requeued: ids of runs whose lease ran out, sent again.
        gave_up: ids of runs ended in error after ``max_attempts``.
        resent: ids of queued runs whose message was sent again.
        file_errors: every problem in the automation files, one line each, when
            they differ from the last dispatch's (a file changed); else empty,
            so the result logged every tick does not repeat them.
        file_error_count: the problems in the automation files now, always.
        automations: enabled automations with a schedule.
    """

    queued: list[int] = field(default_factory=list)
    skipped: int = 0
    requeued: list[int] = field(default_factory=list)
    gave_up: list[int] = field(default_factory=list)
    resent: list[int] = field(default_factory=list)
    file_errors: list[str] = field(default_factory=list)
    file_error_count: int = 0
    automations: int = 0

    def to_dict(self) -> dict[str, object]:
        """Return the result as JSON-safe data."""
        return asdict(self)


def due_slots(
    schedule: CronSchedule, after: dt.datetime, until: dt.datetime, *, cap: int
) -> list[dt.datetime]:
    """Return at most ``cap`` of the newest slots in ``(after, until]``, oldest first (UTC).

    The one window query of dispatch and of ``lookout schedule --between``.
    """
    return sorted(occurrences(schedule, after, until, limit=cap, newest_first=True))


def _stamp(instant: dt.datetime) -> str:
    return instant.astimezone(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")


def apply_overlap(
    automation: Automation, decisions: list[SlotDecision], active: list[ActiveRun]
) -> list[SlotDecision]:
    """Apply ``overlap`` to the slots that would run, given the automation's active runs.

    ``allow`` runs them all. With a run still queued or running, ``skip``
    skips them all; ``buffer_one`` lets the newest wait behind a running run
    (it starts when that run ends: the claim is exclusive) unless a run already
    waits. Slots of one dispatch are not checked against each other (with
    ``catchup: all`` they are queued together).
    """
    if automation.overlap == "allow" or not active:
        return decisions
    running = [r for r in active if r.status == "running"]
    waiting = [r for r in active if r.status == "queued"]
    to_run = [d.scheduled_for for d in decisions if d.run]
    keep = to_run[-1] if automation.overlap == "buffer_one" and not waiting else None
    holder = waiting[0] if waiting else running[0]
    state = "queued" if holder.status == "queued" else "still running"
    reason = (
        f"overlap: {automation.overlap} — run {holder.id} "
        f"(for {_stamp(holder.scheduled_for)}) is {state}"
    )
    if keep is not None:
        reason += f"; only the newest slot ({_stamp(keep)}) waits behind it"
    return [
        d if not d.run or d.scheduled_for == keep else SlotDecision(d.scheduled_for, False, reason)
        for d in decisions
    ]


def visibility_problem(automation: Automation, service: ServiceSettings) -> str | None:
    """Why ``automation`` may not be sent to the workers, or None when it may.

    Its hard limit must stay under half of ``service.visibility_timeout_s``:
    Redis hands an unacknowledged message to another worker after that long
    (``worker.service.celery_app``), so a longer run would start twice.
    """
    hard_s = service.hard_limit_s(automation.timeout_s)
    if hard_s <= service.visibility_timeout_s / 2:
        return None
    return (
        f"timeout_s {automation.timeout_s:g} s: its hard limit ({hard_s:g} s) must stay under "
        f"half of service.visibility_timeout_s ({service.visibility_timeout_s:g} s)"
    )


class Dispatcher:
    """One process's dispatcher: the automations it knows and a cache of each next slot.

    Args:
        settings: ``automations_dir``, the sources and the ``service`` section.
        queue: the store's run queue.
        send: sends one run's Celery message; an exception leaves the run
            unsent, and the reaper sends it after ``service.unsent_grace_s``.
        known: the automations it knows, re-read as their files change (default:
            those of ``settings.automations_dir``).
        send_batch: when given, used instead of ``send`` for each batch of
            messages; a batch that cannot be opened (the broker is down) or
            fails as it closes (when a pipelined batch's messages leave) leaves
            all its runs unsent, as ``send`` failing does; the reaper sends them
            again (a message that did leave then arrives twice, and the second
            finds its run claimed).
    """

    def __init__(
        self,
        settings: Settings,
        queue: RunQueue,
        send: Sender,
        known: KnownAutomations | None = None,
        *,
        send_batch: BatchSender | None = None,
    ) -> None:
        self.settings = settings
        self.queue = queue
        self.send = send
        self.send_batch = send_batch
        self.known = known or KnownAutomations(
            settings.automations_dir, settings.sources.keys(), settings=settings
        )
        self._next: dict[str, tuple[Cursor, dt.datetime | None]] = {}
        # (schedule key, cursor time) -> next slot: automations sharing a schedule
        # and a cursor (created or moved by the same tick) share one croniter walk
        self._slots: dict[tuple[str, dt.datetime], dt.datetime | None] = {}
        self._file_errors: list[str] = []  # the problems the last result listed
        self._last_tick: dt.datetime | None = None  # the store's time at the last tick

    def tick(self) -> DispatchResult:
        """Beat's tick: ``dispatch_due`` at the store's current time (``RunQueue.now``).

        The store's clock, not this process's, so a worker whose clock is ahead
        or behind finds the same slots due and judges the same leases. A tick
        arriving less than half of ``service.dispatch_interval_s`` (store time)
        after this dispatcher's last one is coalesced into it: ticks that piled
        up while no worker ran do not each redo the work. It returns an empty
        result.
        """
        now = self.queue.now()
        gap = dt.timedelta(seconds=self.settings.service.dispatch_interval_s / 2)
        if self._last_tick is not None and self._last_tick <= now < self._last_tick + gap:
            log.debug("tick at %s coalesced into the one at %s", now, self._last_tick)
            return DispatchResult()
        self._last_tick = now
        return self.dispatch_due(now)

    def next_slot(self, name: str, schedule: CronSchedule, cursor: Cursor) -> dt.datetime | None:
        """Return the first slot after ``cursor`` (cached until the cursor moves), or None."""
        cached = self._next.get(name)
        if cached is not None and cached[0] == cursor:
            return cached[1]
        shared = (schedule.key, cursor.at)
        if shared not in self._slots:
            if len(self._slots) >= _MAX_SHARED_SLOTS:
                self._slots.clear()
            found = next_occurrences(schedule, cursor.at, 1)
            self._slots[shared] = found[0] if found else None
        slot = self._slots[shared]
        self._next[name] = (cursor, slot)
        return slot

    def dispatch_due(self, now: dt.datetime) -> DispatchResult:
        """Insert and queue every slot due at ``now`` (zone-aware), then reap.

        Safe to call concurrently from several processes and to call twice:
        the unique slot constraint decides which call queues a slot.
        """
        result = DispatchResult()
        loaded = self.known.refresh()
        problems = [e.location_message() for e in loaded.errors]
        result.file_error_count = len(problems)
        if problems != self._file_errors:
            result.file_errors = self._file_errors = problems
        cursors = self.queue.cursors()
        moves: dict[str, Cursor] = {}
        decided: dict[str, tuple[Automation, list[SlotDecision]]] = {}
        for automation in loaded.automations:
            schedule = CronSchedule.of(automation)
            if schedule is None:
                continue
            result.automations += automation.enabled
            cursor = cursors.get(automation.name)
            if cursor is None or cursor.key != schedule.key:
                moves[automation.name] = Cursor(schedule.key, now)
                continue
            slot = self.next_slot(automation.name, schedule, cursor)
            if slot is None or slot > now:
                continue
            moves[automation.name] = Cursor(schedule.key, now)
            if automation.enabled:
                slots = self._decide_slots(automation, schedule, cursor, now)
                decided[automation.name] = (automation, slots)
        active = self.queue.active_runs(
            [n for n, (a, ds) in decided.items() if a.overlap != "allow" and any(d.run for d in ds)]
        )
        runs = [
            NewRun(a.name, d.scheduled_for, a.source, a.definition(), reason=d.reason)
            for name, (a, decisions) in decided.items()
            for d in apply_overlap(a, decisions, active.get(name, []))
        ]
        result.skipped = sum(1 for r in runs if r.reason)
        queued = self.queue.record(runs, moves, now=now)
        result.queued = self._send_all(queued, now)
        self._reap(now, result)
        if result.queued or result.skipped or result.requeued or result.gave_up or result.resent:
            log.info("dispatch at %s: %s", now.isoformat(), result.to_dict())
        return result

    def _decide_slots(
        self, automation: Automation, schedule: CronSchedule, cursor: Cursor, now: dt.datetime
    ) -> list[SlotDecision]:
        """Decide the slots in ``(cursor, now]``: catch-up, then the visibility-timeout rule."""
        service = self.settings.service
        slots = due_slots(schedule, cursor.at, now, cap=service.catchup_cap + 1)
        if len(slots) > service.catchup_cap:
            log.warning(
                "%s: more than %d slots since %s; only the newest %d are looked at",
                automation.name,
                service.catchup_cap,
                _stamp(cursor.at),
                service.catchup_cap,
            )
            slots = slots[1:]
        decisions = apply_catchup(automation, slots, now, misfire_grace_s=service.misfire_grace_s)
        reason = visibility_problem(automation, service)
        if reason is None:
            return decisions
        return [SlotDecision(d.scheduled_for, False, reason) for d in decisions]

    def _send_all(self, runs: Iterable[QueuedRun], now: dt.datetime) -> list[int]:
        runs = list(runs)
        sent: list[int] = []
        if not runs:
            return sent
        batch = self.send_batch() if self.send_batch else contextlib.nullcontext(self.send)
        try:
            with batch as send:
                for run in runs:
                    try:
                        send(run)
                    except Exception:  # the broker is down: the reaper sends it later
                        log.exception(
                            "could not send run %d (%s); it will be resent", run.id, run.automation
                        )
                        continue
                    sent.append(run.id)
        except Exception:  # the batch could not be opened or closed
            log.exception("could not send %d runs; unsent ones will be resent", len(runs))
            if self.send_batch is not None:
                sent = []  # a batch's messages may leave only as it closes: none is known sent
        self.queue.mark_sent(sent, at=now)
        return sent

    def _reap(self, now: dt.datetime, result: DispatchResult) -> None:
        service = self.settings.service
        reaped = self.queue.reap(now, max_attempts=service.max_attempts)
        for run_id in reaped.gave_up:
            log.error("run %d: its lease ran out; ended in error", run_id)
        result.gave_up = reaped.gave_up
        result.requeued = self._send_all(reaped.requeued, now)
        stale = self.queue.to_resend(
            now, unsent_grace_s=service.unsent_grace_s, resend_after_s=service.resend_after_s
        )
        result.resent = self._send_all(stale, now)
