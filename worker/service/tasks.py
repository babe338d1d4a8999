"""The Celery tasks: ``dispatch_due`` (beat's one entry) and ``run_automation`` (one run).

Thin edges: ``dispatch_due`` calls ``worker.service.dispatch.Dispatcher``; the run task
claims the run (``worker.service.run_queue``), keeps its lease (``worker.service.lease``)
and hands the claimed row to ``checks.run_lifecycle.run_and_store`` — the lifecycle
``lookout run`` takes too: run, finish fenced on the attempt, move the incidents —
adding only the time limits' reasons and the delivery of its alerts. Each
worker process keeps its own store connection, open sources and dispatcher
(``process()``), made after the fork.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from celery import Task
from celery.exceptions import SoftTimeLimitExceeded, TimeLimitExceeded
from celery.signals import worker_init
from pydantic import ValidationError

from checks.automation.model import Automation
from checks.clock import utcnow
from checks.errors import LookoutError
from checks.report import FRESH_TRIGGER, RunReport, Status
from checks.run import SourcePool
from checks.run_lifecycle import Claim, run_and_store
from checks.settings.config import Settings
from checks.store.incidents import RunEvents, decide_run_events
from checks.store.store import Store
from worker.alerts.routing import About, routes
from worker.service.celery_app import (
    DEFAULT_QUEUE,
    DISPATCH_TASK,
    RUN_TASK,
    app,
    settings,
    source_queue,
)
from worker.service.delivery_tasks import deliver_due_task, enqueue_delivery
from worker.service.dispatch import Dispatcher
from worker.service.known_automations import KnownAutomations
from worker.service.lease import Heartbeat, hard_limit_reason, soft_limit_reason
from worker.service.process_store import configure, process_store, task_threads
from worker.service.queue_records import QueuedRun, RunInfo
from worker.service.run_queue import RunQueue

log = logging.getLogger("lookout.worker")


@dataclass
class _Process:
    """What one worker process keeps between tasks."""

    settings: Settings
    store: Store
    queue: RunQueue
    sources: SourcePool
    lock: threading.Lock = field(default_factory=threading.Lock)
    dispatch_lock: threading.Lock = field(default_factory=threading.Lock)
    dispatcher: Dispatcher | None = None


_state: dict[int, _Process] = {}
_state_lock = threading.Lock()


def process() -> _Process:
    """Return this process's store, run queue and sources, made on first use after a fork."""
    pid = os.getpid()
    with _state_lock:
        if pid not in _state:
            store = process_store(settings.store_url)
            queue = RunQueue(store, skew_warn_s=settings.service.clock_skew_warn_s)
            _state[pid] = _Process(settings, store, queue, SourcePool(settings))
        return _state[pid]


_preloaded: dict[str, KnownAutomations] = {}


@worker_init.connect  # type: ignore[untyped-decorator]
def _prepare(sender: Any = None, **_: object) -> None:
    """In the worker's main process, before the pool forks: migrate, check the clock, parse once.

    Every pool process then starts from the parsed automations (copied by the fork)
    and re-reads only files that change, instead of parsing them all again. Its
    stores are sized for the tasks one process runs at once (``sender`` is
    Celery's ``WorkController``).
    """
    if sender is not None:
        pool = getattr(sender, "pool_cls", None)
        configure(task_threads(getattr(sender, "concurrency", 1), pool))
    try:
        store = Store(settings.store_url)
        try:  # a clock far from the store's is said when the worker starts
            RunQueue(store, skew_warn_s=settings.service.clock_skew_warn_s).now()
        finally:
            store.close()
    except LookoutError as exc:  # the store is down: each task tries again when it opens it
        log.error("%s", exc)
    known = KnownAutomations(settings.automations_dir, settings.sources.keys())
    known.refresh()
    # the monitors are made after the fork, by the dispatcher's first refresh: making them
    # opens the sources (a DuckDB query process, a Spark session), never before a fork
    known.settings = settings
    _preloaded["automations"] = known


def send_run(run: QueuedRun, *, producer: Any = None) -> None:
    """Send one run's message: to its source's queue, with its soft and hard time limits.

    ``producer`` (a kombu producer, see ``run_sender``) sends on its connection;
    without one, Celery takes a connection from its pool for this message.
    """
    known = run.source is not None and run.source in settings.sources
    run_automation_task.apply_async(
        args=[run.id],
        queue=source_queue(run.source) if known and run.source else DEFAULT_QUEUE,
        soft_time_limit=run.timeout_s,
        time_limit=settings.service.hard_limit_s(run.timeout_s),
        producer=producer,
    )


BATCH_COMMANDS = 100_000
"""Broker commands a batch of messages holds before it is sent (one Redis pipeline)."""


@contextlib.contextmanager
def run_sender() -> Iterator[Callable[[QueuedRun], None]]:
    """Yield a sender of run messages that all go out together, on one broker connection.

    The dispatcher's batches (``worker.service.dispatch.BatchSender``): a tick's
    thousand messages share one producer, and with Redis one pipeline
    (kombu's ``Producer.batch``): they leave in one round trip when the batch
    ends, so an error there means none of them is known to have left.
    """
    with app.producer_or_acquire() as producer, producer.batch(max_size=BATCH_COMMANDS):
        yield functools.partial(send_run, producer=producer)


@app.task(name=DISPATCH_TASK)  # type: ignore[untyped-decorator]
def dispatch_due() -> dict[str, object]:
    """Beat's one entry: queue the due slots and reap lost runs (``worker.service.dispatch``)."""
    state = process()
    with state.dispatch_lock:  # one dispatch at a time per process (threads pool)
        if state.dispatcher is None:
            known = _preloaded.get("automations")
            state.dispatcher = Dispatcher(
                state.settings, state.queue, send_run, known, send_batch=run_sender
            )
        result = state.dispatcher.tick()  # at the store's time, not this host's
    for run_id in result.gave_up:  # ended in error by the reaper: announced like any other
        announce(run_id)
    # Alerts held by quiet hours: checked on the same beat, so beat keeps one entry.
    deliver_due_task.apply_async(queue=DEFAULT_QUEUE)
    return result.to_dict()


def announce(
    run_id: int,
    store: Store | None = None,
    report: RunReport | None = None,
    run_events: RunEvents | None = None,
) -> None:
    """A run has just ended: move its incidents and decide its events, then queue its alerts.

    The incidents move here, in the run's task, whether or not any channel is
    configured and whether or not the broker takes the delivery task
    (``checks.store.incidents``: once per run). The alerts are their own task,
    so a slow webhook never holds a run; a run whose events go to no channel
    (none configured, none routed) queues no task. Nothing here raises: the
    run is already stored; a store or broker failure is logged, and the
    delivery task plans the run itself if this could not.

    Args:
        run_id: the run that ended.
        store: the store to use (default: this process's).
        report: the report just stored for it (``Store.finish_run``), when the
            caller has it; else the run is read back from the store.
        run_events: its events, when its incidents have already moved
            (``checks.run_lifecycle``); else they move here.
    """
    needed = True  # unless the events say no channel would get anything
    try:
        store = store or process().store
        if report is None:
            report = store.get_run(run_id)
        if report is not None and report.status in (Status.COMPLETED, Status.ERROR):
            if run_events is None:
                run_events = decide_run_events(
                    store.engine, report, now=utcnow(), enabled=settings.alerts.events
                )
            notify = [n for n in report.definition.get("notify") or [] if isinstance(n, str)]
            needed = bool(routes(run_events.events, notify, settings, About.of(report.definition)))
        else:
            needed = False  # the delivery task sends nothing for it either
    except Exception:
        log.exception("run %d: could not move its incidents", run_id)
    if not needed:  # e.g. no channel configured: no task, no broker message
        return
    try:
        enqueue_delivery(run_id)
    except Exception:
        log.exception("run %d: could not queue its alerts", run_id)


def _deliver(report: RunReport, run_events: RunEvents | None) -> None:
    """The lifecycle's last step in the service: the stored run's alerts, queued."""
    if report.run_id is not None:
        announce(report.run_id, report=report, run_events=run_events)
        _send_lineage(report)


def _send_lineage(report: RunReport) -> None:
    """The stored run's OpenLineage events, when ``lineage.url`` is set; a failure is logged."""
    state = process()
    if not state.settings.lineage.url:
        return
    from worker.lineage.emit import LineageError, emit_run

    try:
        emit_run(state.settings, report)
    except LineageError as error:
        log.warning("run %s: %s", report.run_id, error)


class RunTask(Task):  # type: ignore[misc]
    """Base of the run task: records a hard time limit, which Celery handles in the parent.

    In the prefork pool the hard limit kills the pool process; Celery then calls
    ``on_failure`` in the worker's main process with ``TimeLimitExceeded``.
    """

    def on_failure(
        self, exc: BaseException, task_id: str, args: Any, kwargs: Any, einfo: Any
    ) -> None:
        """End the run in error with the reason when the failure is the hard time limit."""
        if isinstance(exc, TimeLimitExceeded) and args:
            limit = float(exc.args[0]) if exc.args else 0.0
            # a short-lived connection: the main process keeps none open across forks
            store = Store(settings.store_url, migrate_on_open=False)
            try:
                RunQueue(store, skew_warn_s=settings.service.clock_skew_warn_s).fail(
                    int(args[0]), hard_limit_reason(limit)
                )
                announce(int(args[0]), store)
            finally:
                store.close()


def _automation(run: RunInfo) -> Automation | str:
    """Return the automation as dispatched (the run's stored definition), or why it is unusable."""
    try:
        return Automation.model_validate(
            {**run.definition, "path": f"run {run.id}", "line": 1},
            context={"monitor": True},  # a monitor's definition is stored as any other
        )
    except ValidationError as exc:
        return f"the stored definition is not a valid automation: {exc.errors()[0]['msg']}"


@app.task(bind=True, base=RunTask, name=RUN_TASK, max_retries=None)  # type: ignore[untyped-decorator]
def run_automation_task(self: RunTask, run_id: int) -> str:
    """Run one queued run: claim, run, store; a message for a claimed or ended run does nothing.

    Returns a word for the worker's log: ``done``, ``ignored`` or ``busy``
    (retried after ``service.busy_retry_s``).
    """
    state = process()
    service = state.settings.service
    checked: list[Automation | str] = []

    def admission(run: RunInfo) -> tuple[int | None, bool]:
        automation = _automation(run)
        checked.append(automation)
        exclusive = isinstance(automation, Automation) and automation.overlap == "buffer_one"
        return service.source_concurrency.get(run.source or ""), exclusive

    # the run read and claimed in one transaction
    run, claim = state.queue.take(
        run_id, admission, lease_s=service.lease_s, max_attempts=service.max_attempts
    )
    if run is None or not checked:  # missing, or already ended
        return "ignored"
    automation = checked[0]
    if claim == "busy":
        raise self.retry(countdown=service.busy_retry_s)
    if claim is None:
        return "ignored"
    if isinstance(automation, str):
        if state.queue.fail(run_id, automation, attempt=claim):
            announce(run_id)
        return "done"
    _run(state, run, automation, claim)
    return "done"


def _run(state: _Process, run: RunInfo, automation: Automation, attempt: int) -> None:
    """Run one claimed attempt to its end: stored, or failed with the reason, and announced.

    In the prefork (and solo) pool the task runs on its process's main thread,
    where Celery's soft limit raises and its hard limit kills. In the threads
    pool nothing interrupts a thread, so the run goes on a daemon thread of its
    own and the pool's thread waits at most the hard limit for it: past it the
    run ends in error, is announced, and the pool thread is free for other runs
    and for shutdown. The abandoned thread's late writes are refused (every
    write is fenced on the attempt, and the run is no longer running).
    """
    service = state.settings.service
    hard_s = service.hard_limit_s(automation.timeout_s)
    with Heartbeat(state.queue, run.id, attempt, lease_s=service.lease_s, hard_limit_s=hard_s):
        if threading.current_thread() is threading.main_thread():
            _attempt(state, run, automation, attempt)
            return
        failure: list[BaseException] = []

        def body() -> None:
            try:
                _attempt(state, run, automation, attempt)
            except BaseException as exc:  # handed to the pool's thread below
                failure.append(exc)

        thread = threading.Thread(target=body, name=f"run-{run.id}-{attempt}", daemon=True)
        thread.start()
        thread.join(hard_s + 1.0)
        if thread.is_alive():
            log.error("run %d attempt %d: past its hard limit of %g s", run.id, attempt, hard_s)
            state.queue.fail(run.id, hard_limit_reason(hard_s), attempt=attempt)
            announce(run.id)
            return
        if failure:
            raise failure[0]


def _attempt(state: _Process, run: RunInfo, automation: Automation, attempt: int) -> None:
    """Take the claimed attempt through the run lifecycle; the soft time limit is its reason."""
    # open the source once per process, even with the threads pool; a source
    # that cannot open is reported by the run itself
    with state.lock, contextlib.suppress(LookoutError):
        state.sources.get(automation.source)

    def known_failure(exc: Exception) -> str | None:
        if isinstance(exc, SoftTimeLimitExceeded):
            return soft_limit_reason(automation.timeout_s)
        return None

    run_and_store(
        automation,
        state.settings,
        state.sources,
        state.store,
        claim=Claim(run.id, attempt),
        scheduled_for=run.scheduled_for,
        trigger=run.trigger,
        announce=True,
        fresh=run.trigger == FRESH_TRIGGER,
        deliver=_deliver,
        known_failure=known_failure,
    )
