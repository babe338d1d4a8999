"""A worker process's store: one per URL, its PostgreSQL pool sized to the threads that use it."""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from celery.concurrency.thread import TaskPool as ThreadPool
from sqlalchemy import event, text

from checks.settings.config import Settings
from checks.store.store import Store
from worker.service import process_store as ps


@pytest.mark.parametrize(
    ("concurrency", "pool", "threads"),
    [
        (16, "threads", 16),
        (4, ThreadPool, 4),  # a pool given as its class, as app.conf.worker_pool may hold it
        (8, "prefork", 1),  # eight processes of one task each
        (1, "solo", 1),
        ("auto", "threads", 1),  # not resolved yet when worker_init fires
        (8, "no-such-pool", 1),
    ],
)
def test_a_process_runs_as_many_tasks_at_once_as_its_pool_gives_it(
    concurrency: object, pool: object, threads: int
) -> None:
    assert ps.task_threads(concurrency, pool) == threads


@pytest.fixture
def sized_for_12() -> Iterator[None]:
    ps.configure(12)
    yield
    ps.configure(1)


def test_the_process_store_is_opened_once_and_keeps_a_connection_per_thread(
    pg_url: str, sized_for_12: None
) -> None:
    store = ps.process_store(pg_url)
    try:
        assert ps.process_store(pg_url) is store
        assert store.engine.pool.size() == 12 + ps.SIDE_CONNECTIONS  # type: ignore[attr-defined]
    finally:
        store.close()
        ps._stores.clear()


def connections_opened(store: Store, threads: int, transactions: int) -> int:
    """Run ``transactions`` short transactions in each of ``threads`` threads at once.

    Between two, a thread waits (as a run waits on its LLM), so the connections
    in use rise and fall as the threads' transactions bunch up and spread out.
    """
    opened = []
    event.listen(store.engine, "connect", lambda *_: opened.append(1))
    start = threading.Barrier(threads)

    def work() -> None:
        start.wait()
        for _ in range(transactions):
            with store.engine.begin() as conn:
                conn.execute(text("SELECT pg_sleep(0.002)"))
            time.sleep(random.uniform(0, 0.01))

    workers = [threading.Thread(target=work) for _ in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    return len(opened)


def test_threads_reuse_their_connections_when_the_pool_fits_them(pg_url: str) -> None:
    sized = Store(pg_url, pool_size=12)
    default = Store(pg_url, migrate_on_open=False)
    try:
        assert connections_opened(sized, threads=12, transactions=20) <= 12
        # SQLAlchemy's default pool of 5 closes every connection beyond it once returned
        assert connections_opened(default, threads=12, transactions=20) > 20
    finally:
        sized.close()
        default.close()


def test_a_threads_worker_sizes_its_stores_for_its_concurrency_when_it_starts(
    tmp_path: Path, flights_settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    from celery.worker import WorkController

    from worker.service import tasks
    from worker.service.celery_app import app

    settings = flights_settings.model_copy(
        update={"store_url": f"sqlite:///{tmp_path}/l.db", "automations_dir": tmp_path}
    )
    monkeypatch.setattr(tasks, "settings", settings)
    try:
        WorkController(app=app, pool_cls="threads", concurrency=12)  # fires worker_init
        assert ps.pool_size() == 12 + ps.SIDE_CONNECTIONS
        WorkController(app=app, pool_cls="prefork", concurrency=3)  # one task per child
        assert ps.pool_size() == 1 + ps.SIDE_CONNECTIONS
    finally:
        ps.configure(1)
