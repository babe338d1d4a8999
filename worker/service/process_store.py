"""A worker process's store: one per store URL, shared by its tasks, its pool sized to its threads.

The run task, the delivery tasks and the leases' heartbeats of one process
share one ``Store`` (one engine, one connection pool), opened on first use
after the fork: a pool process never inherits its parent's connections.

Its PostgreSQL pool keeps as many connections as the process has threads that
use the store at once: the pool's task threads (``--concurrency`` in the
threads pool, one in a prefork child) and ``SIDE_CONNECTIONS`` for what runs
beside them. A pool smaller than that opens and closes a connection (a new
PostgreSQL backend) on nearly every transaction once the threads are busy: 1.3
new sessions per run with 16 threads against SQLAlchemy's default of 5,
which doubled the store's CPU per run.
"""

from __future__ import annotations

import os
import threading

from celery.concurrency import get_implementation
from celery.concurrency.thread import TaskPool as ThreadPool

from checks.store.store import Store

SIDE_CONNECTIONS = 4
"""Connections beyond the task threads: the leases' heartbeats and a run's concurrent
tool calls write beside them (with 16 task threads, 18 were seen at once)."""

_task_threads = 1
_stores: dict[tuple[int, str], Store] = {}
_lock = threading.Lock()


def task_threads(concurrency: object, pool: object) -> int:
    """Return how many tasks one process of a worker runs at once.

    ``concurrency`` and ``pool`` are the worker's as Celery's ``WorkController``
    holds them when ``worker_init`` fires (an int or ``"auto"``; a pool's name,
    such as ``"threads"``, or its class). The threads pool runs ``concurrency``
    tasks in one process; every other pool (prefork, solo) runs one per process.
    """
    try:
        implementation = get_implementation(pool)
    except Exception:  # an unknown pool: Celery itself refuses it next
        return 1
    if isinstance(implementation, type) and issubclass(implementation, ThreadPool):
        return concurrency if isinstance(concurrency, int) and concurrency > 0 else 1
    return 1


def configure(threads: int) -> None:
    """Size the stores opened from now on for ``threads`` task threads per process."""
    global _task_threads
    _task_threads = max(1, threads)


def pool_size() -> int:
    """Return the connections a store of this process keeps (task threads + side ones)."""
    return _task_threads + SIDE_CONNECTIONS


def process_store(url: str) -> Store:
    """Return this process's store for ``url``, opened (and checked for migrations) once.

    Raises:
        StoreError, StoreURLError: as ``Store`` does, on the first call only.
    """
    key = (os.getpid(), url)  # a forked pool process opens its own: connections do not cross forks
    with _lock:
        if key not in _stores:
            _stores[key] = Store(url, pool_size=pool_size())
        return _stores[key]
