"""A worker's clock ahead or behind the store's: slots and leases follow the store's clock.

Real PostgreSQL; the process clock is skewed through ``RunQueue``'s ``clock``,
the clock seam the service reads (``checks.clock.utcnow`` by default).
"""

from __future__ import annotations

import datetime as dt
import logging
import re
import time
from collections.abc import Callable
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from sqlalchemy import select

from checks.clock import utcnow
from checks.settings.service import ServiceSettings
from checks.store.run_tables import RunRow
from checks.store.store import Store
from checks.store.store_clock import SkewWatch, store_now
from tests.parallel import redis_db
from tests.worker.service.service_support import (
    clean_store,
    config_data,
    seed_cursor,
    settings_of,
    write_automation,
)
from worker.service.celery_app import DEFAULT_QUEUE, make_app
from worker.service.dispatch import Dispatcher
from worker.service.lease import Heartbeat
from worker.service.queue_records import QueuedRun
from worker.service.run_queue import RunQueue
from worker.service.slots import CronSchedule

UTC = dt.UTC


def skewed(offset_s: float) -> Callable[[], dt.datetime]:
    """A process clock ``offset_s`` seconds ahead of the real one (behind when negative)."""
    return lambda: utcnow() + dt.timedelta(seconds=offset_s)


@pytest.fixture
def clean(store: Store) -> Store:
    clean_store(store)
    return store


def _runs(store: Store, name: str) -> list[tuple[int, str, dt.datetime]]:
    with store.session() as session:
        rows = session.execute(
            select(RunRow.id, RunRow.status, RunRow.scheduled_for)
            .where(RunRow.automation == name)
            .order_by(RunRow.id)
        )
        return [(r.id, r.status, r.scheduled_for) for r in rows]


@pytest.mark.parametrize("offset_s", [31.0, -40.0])
def test_a_skewed_worker_queues_the_due_slot_once(
    clean: Store, pg_url: str, tmp_path: Path, offset_s: float
) -> None:
    write_automation(tmp_path, "every-minute", schedule="* * * * *")
    data = config_data(
        store_url=pg_url,
        cache_dir=str(tmp_path / "cache"),
        automations_dir=tmp_path,
        redis_url=f"redis://127.0.0.1:6379/{redis_db(15)}",
    )
    queue = RunQueue(clean, clock=skewed(offset_s))
    sent: list[QueuedRun] = []
    dispatcher = Dispatcher(settings_of(data), queue, sent.append)
    # the dispatcher last looked just before this minute began (store time): one slot is due
    before = queue.now()
    looked = before.replace(second=0, microsecond=0) - dt.timedelta(seconds=1)
    seed_cursor(clean, "every-minute", CronSchedule("* * * * *", ZoneInfo("UTC")), looked)
    first = dispatcher.tick()
    after = queue.now()
    assert first.automations == 1  # the tick ran: not dropped
    assert len(first.queued) == 1 and [r.id for r in sent] == first.queued
    # a tick from another dispatcher: nothing more; a second tick at once is coalesced
    other = Dispatcher(settings_of(data), queue, sent.append).tick()
    assert other.automations == 1 and other.queued == []
    assert dispatcher.tick().automations == 0
    runs = _runs(clean, "every-minute")
    assert [(i, s) for i, s, _ in runs] == [(first.queued[0], "queued")]
    slot = runs[0][2]
    expected = before.replace(second=0, microsecond=0)
    assert slot in (expected, after.replace(second=0, microsecond=0))  # the store's minute
    assert slot > looked


def test_beat_ticks_carry_no_expiry_judged_by_a_workers_clock(pg_url: str, tmp_path: Path) -> None:
    data = config_data(
        store_url=pg_url,
        cache_dir=str(tmp_path / "cache"),
        automations_dir=tmp_path,
        redis_url=f"redis://127.0.0.1:6379/{redis_db(15)}",
    )
    entry = make_app(settings_of(data)).conf.beat_schedule["dispatch_due"]
    assert entry["options"] == {"queue": DEFAULT_QUEUE}  # no "expires": a worker ahead dropped it


@pytest.mark.slow
def test_a_worker_40_s_behind_keeps_its_renewed_lease(clean: Store) -> None:
    run_id = clean.create_run("slow", utcnow(), definition={})
    assert run_id is not None
    with clean.session() as session:  # a worker's run (the CLI's have no source)
        row = session.get(RunRow, run_id)
        assert row is not None
        row.source = "flights"
    worker = RunQueue(clean, clock=skewed(-40.0))
    reaper = RunQueue(clean)  # the dispatcher's, on a correct clock
    run = worker.run_info(run_id)
    assert run is not None
    lease_s = 1.5
    attempt = worker.claim(run, lease_s=lease_s, max_attempts=3)
    assert attempt == 1
    with clean.session() as session:
        lease = session.execute(select(RunRow.lease_expires_at).where(RunRow.id == run_id))
        ends = lease.scalar_one()
    assert abs((ends - reaper.now()).total_seconds() - lease_s) < 1.0  # not 40 s in the past
    with Heartbeat(worker, run_id, attempt, lease_s=lease_s, hard_limit_s=60):
        for _ in range(8):  # 4 s: well past the lease, renewed every 0.5 s
            time.sleep(0.5)
            reaped = reaper.reap(reaper.now(), max_attempts=3)
            assert reaped.requeued == [] and reaped.gave_up == []
    assert _runs(clean, "slow")[0][1] == "running"
    time.sleep(lease_s + 0.5)  # no more renewals: the lease runs out, on the store's clock
    requeued = reaper.reap(reaper.now(), max_attempts=3).requeued
    assert [r.id for r in requeued] == [run_id]


SKEW = re.compile(
    r"this process's clock reads (\S+) but the store's reads (\S+): ([+-]\d+\.\d) s apart, "
    r"more than service.clock_skew_warn_s \(5 s\); slot and lease times follow the store's "
    r"clock, fix this host's time \(NTP\)"
)


@pytest.mark.parametrize(("offset_s", "shown"), [(31.0, "+31.0"), (-40.0, "-40.0")])
def test_the_skew_is_warned_once_with_both_times(
    clean: Store, caplog: pytest.LogCaptureFixture, offset_s: float, shown: str
) -> None:
    queue = RunQueue(clean, clock=skewed(offset_s), skew_warn_s=5.0)
    with caplog.at_level(logging.WARNING, logger="lookout.clock"):
        first = queue.now()
        queue.now()
        queue.renew(0, 1, lease_s=60)  # every read of the store's clock checks, once warned
    records = [r for r in caplog.records if r.name == "lookout.clock"]
    assert [r.levelname for r in records] == ["WARNING"]
    found = SKEW.fullmatch(records[0].getMessage())
    assert found is not None, records[0].getMessage()
    process, store_time = (dt.datetime.fromisoformat(found[i]) for i in (1, 2))
    assert found[3] == shown
    assert abs((store_time - first).total_seconds()) < 1.0
    assert abs((process - store_time).total_seconds() - offset_s) < 0.1


def test_the_skew_warning_repeats_only_when_crossed_again(
    caplog: pytest.LogCaptureFixture,
) -> None:
    store_time = dt.datetime(2026, 12, 6, 5, 0, tzinfo=UTC)
    watch = SkewWatch(ServiceSettings().clock_skew_warn_s)
    seconds = [31, 31, 4, -40, -40, 0]
    with caplog.at_level(logging.WARNING, logger="lookout.clock"):
        skews = [watch.check(store_time + dt.timedelta(seconds=s), store_time) for s in seconds]
    assert skews == [True, True, False, True, True, False]
    assert [r.getMessage() for r in caplog.records] == [
        "this process's clock reads 2026-12-06T05:00:31.000+00:00 but the store's reads "
        "2026-12-06T05:00:00.000+00:00: +31.0 s apart, more than service.clock_skew_warn_s "
        "(5 s); slot and lease times follow the store's clock, fix this host's time (NTP)",
        "this process's clock reads 2026-12-06T04:59:20.000+00:00 but the store's reads "
        "2026-12-06T05:00:00.000+00:00: -40.0 s apart, more than service.clock_skew_warn_s "
        "(5 s); slot and lease times follow the store's clock, fix this host's time (NTP)",
    ]


def test_sqlite_and_postgresql_each_give_their_clock_in_utc(store: Store, tmp_path: Path) -> None:
    lite = Store(f"sqlite:///{tmp_path / 'store.db'}")
    try:
        for engine in (lite.engine, store.engine):
            with engine.connect() as connection:
                now = store_now(connection)
            assert now.tzinfo is UTC
            assert abs((now - utcnow()).total_seconds()) < 2.0
    finally:
        lite.close()
