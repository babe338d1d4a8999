"""Celery tasks for alerts: ``deliver_run`` (one run's alerts) and ``deliver_due`` (periodic).

Deliveries are their own task so a slow webhook never holds a check: the run
task stores the report and enqueues ``deliver_run(run_id)``. The tasks use one
store per worker process, the run task's (``worker.service.process_store``),
opened on the first task after the fork, never one per task. Both tasks are thin
edges over ``worker.alerts.delivery``; every rule lives there. A redelivered message
is harmless — each (run, event, channel) is claimed in the store before it is
sent — so the tasks use late acknowledgement like the run task.

``deliver_due`` sends alerts held by quiet hours once their window is over and
closes deliveries left ``sending`` by a dead worker; beat should call it every
minute or so (``DUE_INTERVAL_S``).
"""

from __future__ import annotations

from typing import Any

from checks.report import Status
from checks.settings.config import Settings
from checks.store.store import Store
from worker.alerts.delivery import deliver_due, deliver_for_run
from worker.service.celery_app import DEFAULT_QUEUE, app, settings
from worker.service.process_store import process_store

DELIVER_TASK = "lookout.deliver_run"
DELIVER_DUE_TASK = "lookout.deliver_due"
DUE_INTERVAL_S = 60.0


def deliver_run_now(
    run_id: int, config: Settings, *, store: Store | None = None
) -> list[dict[str, Any]]:
    """Deliver one stored run's alerts in this process; return what was sent, as dicts.

    A missing run, or one not finished (``completed`` or ``error``), sends nothing.

    Args:
        run_id: the stored run.
        config: channels, routing and the store URL.
        store: the store to use (default: a store of its own, opened and closed here).
    """
    own = store is None
    store = store or Store(config.store_url)
    try:
        report = store.get_run(run_id)
        if report is None or report.status not in (Status.COMPLETED, Status.ERROR):
            return []
        return [record.to_dict() for record in deliver_for_run(store, config, report)]
    finally:
        if own:
            store.close()


def deliver_due_now(config: Settings, *, store: Store | None = None) -> list[dict[str, Any]]:
    """Send due deferred alerts and close stale ones in this process; return them as dicts.

    ``store`` as in ``deliver_run_now``.
    """
    own = store is None
    store = store or Store(config.store_url)
    try:
        return [record.to_dict() for record in deliver_due(store, config)]
    finally:
        if own:
            store.close()


@app.task(  # type: ignore[untyped-decorator]
    name=DELIVER_TASK, acks_late=True, reject_on_worker_lost=True, ignore_result=True
)
def deliver_run(run_id: int) -> list[dict[str, Any]]:
    """Celery task: deliver one run's alerts (see ``deliver_run_now``)."""
    return deliver_run_now(run_id, settings, store=process_store(settings.store_url))


@app.task(name=DELIVER_DUE_TASK, acks_late=True, ignore_result=True)  # type: ignore[untyped-decorator]
def deliver_due_task() -> list[dict[str, Any]]:
    """Celery task: send alerts whose quiet hours ended (see ``deliver_due_now``)."""
    return deliver_due_now(settings, store=process_store(settings.store_url))


def enqueue_delivery(run_id: int, *, queue: str = DEFAULT_QUEUE) -> None:
    """Queue ``deliver_run(run_id)``; call it after the run's report is stored."""
    deliver_run.apply_async(args=(run_id,), queue=queue)
