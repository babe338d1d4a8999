"""Dispatch sends each batch of messages through one ``send_batch`` (one broker connection)."""

from __future__ import annotations

import contextlib
import datetime as dt
from collections.abc import Callable, Iterator
from pathlib import Path

from checks.store.store import Store
from tests.parallel import redis_db
from tests.worker.service.service_support import clean_store, config_data, settings_of
from tests.worker.service.service_support import write_automation as write
from worker.service.dispatch import Dispatcher
from worker.service.queue_records import QueuedRun
from worker.service.run_queue import RunQueue

UTC = dt.UTC
NOON = dt.datetime(2026, 6, 1, 12, 0, 10, tzinfo=UTC)


class Broker:
    """Counts the batches opened and the messages sent in each; can refuse to open one."""

    def __init__(self) -> None:
        self.batches: list[list[int]] = []
        self.single: list[int] = []
        self.down = False
        self.fail_at_close = False  # a pipelined batch: its messages leave, or not, at its end

    def send(self, run: QueuedRun) -> None:
        self.single.append(run.id)

    @contextlib.contextmanager
    def batch(self) -> Iterator[Callable[[QueuedRun], None]]:
        if self.down:
            raise ConnectionError("the broker is down")
        sent: list[int] = []
        self.batches.append(sent)
        yield lambda run: sent.append(run.id)
        if self.fail_at_close:
            sent.clear()
            raise ConnectionError("the pipeline could not be sent")


def test_the_due_runs_go_out_in_one_batch_and_a_refused_batch_leaves_them_to_resend(
    tmp_path: Path, pg_url: str
) -> None:
    store = Store(pg_url)
    clean_store(store)
    queue = RunQueue(store)
    folder = tmp_path / "automations"
    folder.mkdir()
    for n in range(5):
        write(folder, f"hourly-{n}", schedule="0 * * * *")
    data = config_data(
        store_url=pg_url,
        cache_dir=str(tmp_path / "cache"),
        automations_dir=folder,
        redis_url=f"redis://127.0.0.1:6379/{redis_db(15)}",
        unsent_grace_s=60,
    )
    settings = settings_of(data)
    broker = Broker()
    dispatcher = Dispatcher(settings, queue, broker.send, send_batch=broker.batch)
    dispatcher.dispatch_due(NOON - dt.timedelta(minutes=1))  # cursors start here
    due = dispatcher.dispatch_due(NOON)
    assert len(due.queued) == 5
    assert broker.batches == [due.queued] and broker.single == []  # nothing to reap: no batch

    broker.down = True
    later = dispatcher.dispatch_due(NOON + dt.timedelta(hours=1))
    assert later.queued == []  # inserted, but not sent
    unsent = queue.to_resend(
        NOON + dt.timedelta(hours=1, minutes=2), unsent_grace_s=60, resend_after_s=3600
    )
    assert len(unsent) == 5
    broker.down = False
    resent = dispatcher.dispatch_due(NOON + dt.timedelta(hours=1, minutes=2))
    assert sorted(resent.resent) == sorted(r.id for r in unsent)
    assert broker.batches[-1] == resent.resent
    store.close()


def test_a_batch_failing_as_it_closes_leaves_all_its_runs_to_resend(
    tmp_path: Path, pg_url: str
) -> None:
    store = Store(pg_url)
    clean_store(store)
    queue = RunQueue(store)
    folder = tmp_path / "automations"
    folder.mkdir()
    for n in range(3):
        write(folder, f"hourly-{n}", schedule="0 * * * *")
    data = config_data(
        store_url=pg_url,
        cache_dir=str(tmp_path / "cache"),
        automations_dir=folder,
        redis_url=f"redis://127.0.0.1:6379/{redis_db(15)}",
        unsent_grace_s=60,
    )
    broker = Broker()
    dispatcher = Dispatcher(settings_of(data), queue, broker.send, send_batch=broker.batch)
    dispatcher.dispatch_due(NOON - dt.timedelta(minutes=1))
    broker.fail_at_close = True
    due = dispatcher.dispatch_due(NOON)
    assert due.queued == []  # every send returned, but the batch never left
    unsent = queue.to_resend(NOON + dt.timedelta(minutes=2), unsent_grace_s=60, resend_after_s=3600)
    assert sorted(r.automation for r in unsent) == ["hourly-0", "hourly-1", "hourly-2"]
    broker.fail_at_close = False
    resent = dispatcher.dispatch_due(NOON + dt.timedelta(minutes=2))
    assert sorted(resent.resent) == sorted(r.id for r in unsent)
    assert broker.batches[-1] == resent.resent
    store.close()
