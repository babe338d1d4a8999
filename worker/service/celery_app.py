"""The Celery app: Redis broker and result backend, one queue per source, one beat entry.

``celery -A worker.service.celery_app worker`` and ``celery -A worker.service.celery_app beat``
work as well as ``lookout worker`` / ``lookout beat``. Settings are read once,
when this module is imported, from ``LOOKOUT_CONFIG`` and the ``LOOKOUT_*``
variables (``checks.settings.config.load_settings``); restart the worker after
changing the sources. Automation files need no restart (``worker.service.dispatch``).

Delivery rules (docs/design.md, Scheduling; Celery's documentation of these settings):

- ``task_acks_late``: a run's message is acknowledged when the run ends, so a
  worker that dies mid-run leaves it to be delivered again;
  ``task_reject_on_worker_lost`` requeues it when a pool process dies.
- ``worker_prefetch_multiplier=1``: a worker process reserves one run at a time.
- Time limits are set per message from the automation's ``timeout_s``
  (``worker.service.tasks.send_run``): soft = ``timeout_s``, hard = ``timeout_s +
  service.hard_limit_grace_s``. Celery enforces them in the prefork pool only;
  the run's lease heartbeat records the hard limit in every pool.
- ``broker_transport_options.visibility_timeout``: Redis hands an unacknowledged
  message to another worker after this long, so it must stay well above the
  longest hard limit (``service.visibility_timeout_s``, default 6 h; dispatch
  refuses automations whose hard limit exceeds half of it). The store's lease
  and attempt fencing make an early redelivery harmless anyway.
- Queues: ``lookout.default`` (``dispatch_due``) and ``lookout.source.<name>``
  per configured source; a worker consumes all of them unless told otherwise.
- Beat keeps its one entry, ``dispatch_due``, in memory (no schedule file):
  everything that must survive a restart is in the store.
  Its messages carry no expiry (that would compare two hosts' clocks).
"""

from __future__ import annotations

from celery import Celery
from kombu.entity import Exchange, Queue

from checks.settings.config import Settings, load_settings

DEFAULT_QUEUE = "lookout.default"
DISPATCH_TASK = "lookout.dispatch_due"
RUN_TASK = "lookout.run_automation"


def source_queue(source: str) -> str:
    """Return the queue of a source's runs: ``lookout.source.<name>``."""
    return f"lookout.source.{source}"


def _queue(name: str) -> Queue:
    """A queue with its own direct exchange and routing key, so a message reaches one queue."""
    exchange = Exchange(name, type="direct")  # type: ignore[no-untyped-call]
    return Queue(name, exchange, routing_key=name)  # type: ignore[no-untyped-call]


def make_app(settings: Settings) -> Celery:
    """Build the Celery app for ``settings`` (tasks come from ``worker.service.tasks``)."""
    service = settings.service
    celery = Celery(
        "lookout",
        broker=settings.redis_url,
        backend=settings.redis_url,
        include=["worker.service.tasks", "worker.service.delivery_tasks"],
    )
    celery.conf.update(
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        worker_prefetch_multiplier=1,
        task_ignore_result=True,
        task_serializer="json",
        accept_content=["json"],
        result_serializer="json",
        result_expires=3600,
        enable_utc=True,
        timezone="UTC",
        task_default_queue=DEFAULT_QUEUE,
        task_queues=[_queue(DEFAULT_QUEUE)]
        + [_queue(source_queue(n)) for n in sorted(settings.sources)],
        task_routes={DISPATCH_TASK: {"queue": DEFAULT_QUEUE}},
        broker_transport_options={"visibility_timeout": service.visibility_timeout_s},
        result_backend_transport_options={"visibility_timeout": service.visibility_timeout_s},
        broker_connection_retry_on_startup=True,
        broker_connection_max_retries=None,
        worker_cancel_long_running_tasks_on_connection_loss=False,
        worker_send_task_events=False,
        beat_scheduler="celery.beat:Scheduler",
        beat_schedule={
            "dispatch_due": {
                "task": DISPATCH_TASK,
                "schedule": service.dispatch_interval_s,
                # no ``expires``: Celery would judge it by the worker's clock against
                # beat's, so a worker ahead by one interval dropped every tick; ticks
                # that pile up are coalesced on the store's clock instead
                # (``worker.service.dispatch.Dispatcher.tick``)
                "options": {"queue": DEFAULT_QUEUE},
            }
        },
    )
    return celery


settings = load_settings()
app = make_app(settings)
