"""The service with real processes: Redis, ``celery worker`` / ``celery beat``, PostgreSQL.

Each test starts its own worker and beat with ``subprocess.Popen`` (in their
own session, so a signal reaches the whole process group), against a private
``redis-server`` (flushed between tests; never the machine's shared one, so two
test runs side by side cannot take each other's messages) and an empty store.
Slots are made due at once by setting a cursor in the past, as after a
downtime (``seed_cursor``): no test waits for the clock.

A run is made slow without a slow machine: its source is a SQLite file the
test holds an exclusive lock on, so the run's first read waits in C (where
neither the soft time limit nor anything else can interrupt it) until the
test lets go.
"""

from __future__ import annotations

import datetime as dt
import signal
import sqlite3
import subprocess
import time
from collections.abc import Iterator
from contextlib import closing
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
import redis

from checks.clock import utcnow
from checks.report import RunReport, Status
from checks.settings.config import Settings
from checks.sources import Source
from checks.store.incidents import open_incidents
from checks.store.store import Store
from tests.worker.service.service_support import (
    LOOKOUT,
    Processes,
    clean_store,
    config_data,
    free_port,
    redis_server,
    seed_cursor,
    wait_for,
    write_automation,
    write_config,
)
from worker.service.slots import CronSchedule

SERVICE = {
    "dispatch_interval_s": 1,
    "lease_s": 2,
    "misfire_grace_s": 90,
    "hard_limit_grace_s": 2,
    "visibility_timeout_s": 3600,
    "unsent_grace_s": 5,
    "busy_retry_s": 0.5,
}


@dataclass
class Env:
    """One test's service: config, folders, store and processes."""

    folder: Path
    store: Store
    procs: Processes
    slow_db: Path

    def runs(self, automation: str) -> list[RunReport]:
        return sorted(
            self.store.list_runs(automation=automation, limit=100), key=lambda r: r.scheduled_for
        )

    def finished(self, automation: str, count: int = 1) -> list[RunReport] | None:
        runs = [r for r in self.runs(automation) if r.status not in (Status.QUEUED, Status.RUNNING)]
        return runs if len(runs) >= count else None

    def due_now(self, name: str, **fields: Any) -> dt.datetime:
        """Write a daily automation whose slot was 2 minutes ago and make that slot due."""
        slot = (utcnow() - dt.timedelta(minutes=2)).replace(second=0, microsecond=0)
        schedule = f"{slot.minute} {slot.hour} * * *"
        write_automation(self.folder, name, schedule=schedule, **fields)
        seed_cursor(
            self.store,
            name,
            CronSchedule(schedule, ZoneInfo("UTC")),
            slot - dt.timedelta(minutes=3),
        )
        return slot


def _service(
    tmp: Path, pg_url: str, cache_dir: str, redis_url: str
) -> tuple[dict[str, str], Path, Path]:
    folder = tmp / "automations"
    folder.mkdir()
    slow_db = tmp / "slow.db"
    with closing(sqlite3.connect(slow_db)) as conn, conn:
        conn.execute("CREATE TABLE readings (x INTEGER)")
        conn.execute("INSERT INTO readings VALUES (1)")
    data = config_data(
        store_url=pg_url,
        cache_dir=cache_dir,
        automations_dir=folder,
        redis_url=redis_url,
        **SERVICE,
    )
    data["sources"]["slow"] = {"type": "sqlalchemy", "url": f"sqlite:///{slow_db}?timeout=60"}
    config = write_config(tmp / "lookout.yaml", data)
    return {"LOOKOUT_CONFIG": str(config)}, folder, slow_db


def flush(url: str) -> None:
    with redis.Redis.from_url(url) as client:
        client.flushdb()


@pytest.fixture(scope="module")
def redis_port(tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    """A private redis-server for this module, so that test runs side by side never meet."""
    port = free_port()
    server = redis_server(port, tmp_path_factory.mktemp("redis"))
    yield port
    server.terminate()
    server.wait(timeout=10)


@pytest.fixture
def env(
    tmp_path: Path,
    pg_url: str,
    flights_settings: Settings,
    flights_source: Source,
    redis_port: int,
) -> Iterator[Env]:
    url = f"redis://127.0.0.1:{redis_port}/0"
    flush(url)
    variables, folder, slow_db = _service(tmp_path, pg_url, flights_settings.cache_dir, url)
    store = Store(pg_url)  # migrations are applied here, before any worker starts
    clean_store(store)
    procs = Processes(variables, tmp_path)
    yield Env(folder, store, procs, slow_db)
    procs.stop_all()
    store.close()
    flush(url)


@pytest.fixture
def locked(env: Env) -> Iterator[sqlite3.Connection]:
    """An exclusive lock on the slow source; a run reading it waits until the test commits."""
    conn = sqlite3.connect(env.slow_db, isolation_level=None)
    conn.execute("BEGIN EXCLUSIVE")
    yield conn
    if conn.in_transaction:
        conn.execute("ROLLBACK")
    conn.close()


SLOW_CHECK = [{"name": "readings", "sql": "SELECT count(*) FROM readings", "expect": "== 1"}]


def test_a_due_automation_runs_once_and_its_report_is_stored(env: Env) -> None:
    slot = env.due_now("due")
    env.procs.worker()
    env.procs.beat()
    [run] = wait_for(lambda: env.finished("due"), 60, "the due run to finish")
    time.sleep(3)  # three more dispatches
    assert [(r.scheduled_for, r.status, r.attempt, r.trigger) for r in env.runs("due")] == [
        (slot, Status.COMPLETED, 1, "schedule")
    ]
    report = env.store.get_run(run.run_id or 0)
    assert report is not None and report.finding == "clear"
    assert [(c.name, c.passed, c.evidence_id) for c in report.checks] == [
        ("some flights", True, "C1")
    ]
    assert report.evidence[0].rows == [[336776]]
    queued = subprocess.run(
        [LOOKOUT, "run-now", "due"], env=env.procs.env, capture_output=True, text=True, check=True
    )
    assert queued.stdout.startswith("queued run ") and "lookout.source.flights" in queued.stdout
    manual = wait_for(
        lambda: [r for r in env.finished("due", 2) or [] if r.trigger == "manual"], 30, "run-now"
    )
    assert [(r.status, r.attempt) for r in manual] == [(Status.COMPLETED, 1)]


def test_two_beats_at_once_give_one_run_per_slot(env: Env) -> None:
    slots = {f"twin-{n}": env.due_now(f"twin-{n}") for n in range(5)}
    env.procs.beat("beat-1")
    env.procs.beat("beat-2")
    env.procs.worker("worker", "--concurrency=2")
    for name in slots:
        wait_for(partial(env.finished, name), 60, f"{name} to finish")
    time.sleep(3)
    for name, slot in slots.items():
        assert [(r.scheduled_for, r.status, r.attempt) for r in env.runs(name)] == [
            (slot, Status.COMPLETED, 1)
        ]
    log = env.procs.log("worker")
    assert log.count("lookout.dispatch_due") >= 8  # both beats sent ticks
    assert "Context impl" not in log and "alembic" not in log  # the store is at head: no Alembic


def test_a_worker_killed_mid_run_is_finished_exactly_once_after_a_restart(
    env: Env, locked: sqlite3.Connection
) -> None:
    slot = env.due_now("slow", source="slow", checks=SLOW_CHECK, timeout_s=60)
    first = env.procs.worker("worker-1", "--concurrency=1")
    env.procs.beat()

    def running() -> RunReport | None:
        runs = env.runs("slow")
        return runs[0] if runs and runs[0].status == Status.RUNNING else None

    wait_for(running, 60, "the run to start")
    time.sleep(1.5)  # well inside the run, the lease renewed at least once
    env.procs.kill(first, signal.SIGKILL)
    locked.execute("COMMIT")
    env.procs.start("worker-2", LOOKOUT, "worker", "--concurrency=1", "--loglevel=INFO")
    [run] = wait_for(lambda: env.finished("slow"), 60, "the run to finish after the restart")
    time.sleep(2)
    assert [(r.scheduled_for, r.status, r.attempt) for r in env.runs("slow")] == [
        (slot, Status.COMPLETED, 2)
    ]
    assert run.finding == "clear"


def test_a_run_over_its_hard_time_limit_ends_in_error_with_the_reason(
    env: Env, locked: sqlite3.Connection
) -> None:
    env.due_now("stuck", source="slow", checks=SLOW_CHECK, timeout_s=1)
    env.procs.worker()
    env.procs.beat()
    [run] = wait_for(lambda: env.finished("stuck"), 60, "the run to be stopped")
    assert (run.status, run.attempt) == (Status.ERROR, 1)
    assert run.error == "hard time limit of 3 s exceeded; the run was stopped"
    # no channel is configured: the run's error incident opens all the same
    [incident] = wait_for(
        lambda: open_incidents(env.store.engine, "stuck"), 30, "the error incident"
    )
    assert (incident.kind, incident.opened_run_id) == ("error", run.run_id)
    locked.execute("COMMIT")
    time.sleep(3)  # the message was acknowledged and the reaper leaves an ended run alone
    assert [(r.status, r.attempt) for r in env.runs("stuck")] == [(Status.ERROR, 1)]
    assert "Hard time limit (3.0s) exceeded" in env.procs.log("worker")


# -- a restart of Redis, and a file edited while beat runs -------------------------------------


@dataclass
class NextMinute:
    """Runs of the `every` automation: the first one, and the slot's run after the restart."""

    first: RunReport
    after_restart: list[RunReport]
    worker_log: str
    worker_restarted: bool = False


@pytest.fixture(scope="module")
def next_minute(
    tmp_path_factory: pytest.TempPathFactory,
    pg_url: str,
    flights_settings: Settings,
    flights_source: Source,
) -> Iterator[NextMinute]:
    """The service through a Redis restart, with no wait for the clock.

    `every` first has no schedule: its first run is a ``run-now``. While Redis
    is down its file gains a schedule (every minute) and a second check, and
    its cursor is set just before this minute's slot (``seed_cursor``, the
    dispatcher's own record of where it looked last), so that slot is due at
    once, and only once the restarted Redis carries beat's ticks again.
    """
    tmp = tmp_path_factory.mktemp("redis-restart")
    port = free_port()
    server = redis_server(port, tmp)
    variables, folder, _ = _service(
        tmp, pg_url, flights_settings.cache_dir, f"redis://127.0.0.1:{port}/0"
    )
    store = Store(pg_url)
    clean_store(store)
    procs = Processes(variables, tmp)
    env = Env(folder, store, procs, tmp / "slow.db")
    try:
        write_automation(folder, "every")  # no schedule yet: no slot, no cursor
        worker = procs.worker()
        procs.start("beat", LOOKOUT, "beat")
        subprocess.run(
            [LOOKOUT, "run-now", "every"], env=procs.env, capture_output=True, check=True
        )
        [first] = wait_for(lambda: env.finished("every"), 60, "the first run")
        # Restart Redis while nothing runs (every run finished): nothing is persisted,
        # every key is gone.
        wait_for(lambda: env.finished("every", len(env.runs("every"))), 30, "an idle service")
        server.send_signal(signal.SIGKILL)
        server.wait(timeout=10)
        # Edit the file while Redis is down: a schedule, and a second check marks the new
        # definition; this minute's slot is due from the next tick that gets through.
        every_minute = CronSchedule("* * * * *", ZoneInfo("UTC"))
        nxt = utcnow().replace(second=0, microsecond=0)
        seed_cursor(store, "every", every_minute, nxt - dt.timedelta(seconds=1))
        marker = {"name": "edited", "sql": "SELECT count(*) FROM airlines", "expect": "== 16"}
        write_automation(
            folder,
            "every",
            schedule="* * * * *",
            checks=[
                {"name": "some flights", "sql": "SELECT count(*) FROM flights", "expect": "> 0"},
                marker,
            ],
        )
        server = redis_server(port, tmp)
        # kombu's Redis transport can die with "Unrecoverable error" when the broker
        # drops mid-ack (a known class of kombu races); compose restarts it
        # (restart: unless-stopped), and so does this test, as a supervisor would.
        time.sleep(3)
        restarted = worker.poll() is not None
        if restarted:
            worker = procs.worker()
        wait_for(
            lambda: [r for r in env.finished("every") or [] if r.scheduled_for == nxt],
            100,
            "the run of the slot after the restart",
        )
        time.sleep(2)
        runs = [store.get_run(r.run_id or 0) for r in env.runs("every")]
        yield NextMinute(
            first,
            [r for r in runs if r and r.scheduled_for == nxt],
            procs.log("worker"),
            restarted,
        )
    finally:
        procs.stop_all()
        store.close()
        server.terminate()
        server.wait(timeout=10)


def test_a_redis_restart_while_idle_loses_no_schedule(next_minute: NextMinute) -> None:
    [run] = next_minute.after_restart
    assert (run.status, run.attempt, run.finding) == (Status.COMPLETED, 1, "clear")


def test_a_changed_automation_file_is_picked_up_without_restarting_beat(
    next_minute: NextMinute,
) -> None:
    [run] = next_minute.after_restart
    assert [c.name for c in run.checks] == ["some flights", "edited"]
    assert [c.passed for c in run.checks] == [True, True]
    if not next_minute.worker_restarted:  # a restarted worker parses every file afresh
        assert "automation file loaded" in next_minute.worker_log


def test_a_run_that_needs_attention_alerts_its_channel_once(env: Env) -> None:
    import yaml

    from worker.alerts.delivery_log import deliveries_by_run
    from worker.alerts.fake_chat import FakeChat

    failing = {"name": "no flights", "sql": "SELECT count(*) FROM flights", "expect": "== 0"}

    with FakeChat("slack") as fake:
        config = Path(env.procs.env["LOOKOUT_CONFIG"])
        data = yaml.safe_load(config.read_text(encoding="utf-8"))
        data["channels"] = {"ops": fake.channel()}
        data["alerts"] = {"default_channels": ["ops"]}
        config.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
        env.due_now(
            "alerting",
            checks=[failing],
        )
        env.procs.worker()
        env.procs.beat()
        [run] = wait_for(lambda: env.finished("alerting"), 60, "the run to finish")
        wait_for(lambda: fake.requests or None, 30, "the alert to reach the fake Slack")
        time.sleep(3)  # further dispatches and redeliveries must not send it again
        assert len(fake.requests) == 1
        assert "Needs attention: alerting" in str(fake.requests[0].json)
    records = deliveries_by_run(env.store.engine, [run.run_id or 0])[run.run_id or 0]
    assert [(r.event, r.channel, r.status) for r in records] == [("needs_attention", "ops", "sent")]


def test_a_stuck_run_in_the_threads_pool_frees_the_worker_at_its_hard_limit(
    env: Env, locked: sqlite3.Connection
) -> None:
    env.due_now("stuck", source="slow", checks=SLOW_CHECK, timeout_s=1)
    env.due_now("due")
    worker = env.procs.worker("worker", "--pool=threads", "--concurrency=1")
    env.procs.beat()
    # The stuck run waits on the lock for up to 60 s; the other run needs the only thread.
    [stuck] = wait_for(lambda: env.finished("stuck"), 60, "the stuck run to be stopped")
    [due] = wait_for(lambda: env.finished("due"), 30, "the other run, while the lock is held")
    assert (stuck.status, stuck.error) == (
        Status.ERROR,
        "hard time limit of 3 s exceeded; the run was stopped",
    )
    assert (due.status, due.finding) == (Status.COMPLETED, "clear")
    started = time.monotonic()
    env.procs.kill(worker, signal.SIGTERM)  # a warm shutdown, the stuck thread still waiting
    assert time.monotonic() - started < 20
    assert worker.returncode == 0


def test_the_service_takes_the_pinned_plan_without_calling_the_llm(env: Env) -> None:
    import yaml

    from checks.fakes.llm_server import FakeLLM, one_query_agent
    from checks.report import FindingSource

    sql = "SELECT count(*) AS odd FROM flights WHERE dep_time IS NULL AND dep_delay IS NOT NULL"
    with FakeLLM(default=one_query_agent({"pinned": sql})) as llm:
        config = Path(env.procs.env["LOOKOUT_CONFIG"])
        data = yaml.safe_load(config.read_text(encoding="utf-8"))
        data["llm"] = {"base_url": llm.base_url, "model": "fake-model", "max_retries": 0}
        config.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
        env.due_now("pinned", checks=[], goal="Every flight without a departure time has no delay.")
        env.procs.worker()
        env.procs.beat()
        [first] = wait_for(lambda: env.finished("pinned"), 60, "the scheduled run to finish")
        subprocess.run(
            [LOOKOUT, "run-now", "pinned"], env=env.procs.env, capture_output=True, check=True
        )
        runs = wait_for(lambda: env.finished("pinned", 2), 60, "the run-now run to finish")
        calls = len(llm.chat_requests)
        subprocess.run(
            [LOOKOUT, "run-now", "pinned", "--fresh"],
            env=env.procs.env,
            capture_output=True,
            check=True,
        )
        runs = wait_for(lambda: env.finished("pinned", 3), 60, "the fresh run to finish")
        fresh_calls = len(llm.chat_requests)
    assert [(r.trigger, r.status, r.finding, r.finding_source) for r in runs] == [
        ("schedule", Status.COMPLETED, "clear", FindingSource.AGENT),
        ("manual", Status.COMPLETED, "clear", FindingSource.PINNED),
        ("fresh", Status.COMPLETED, "clear", FindingSource.AGENT),
    ]
    assert (calls, fresh_calls) == (2, 4)  # the second run asked nothing; the fresh one did
    fresh = env.store.get_run(runs[2].run_id or 0)
    assert fresh is not None and fresh.pinning is not None
    assert (fresh.pinning["reason"], fresh.pinning["new_plan"]) == (
        "a fresh run was asked for (--fresh)",
        True,
    )
    second = env.store.get_run(runs[1].run_id or 0)
    assert second is not None and second.pinning is not None
    assert (second.pinning["used"], second.pinning["from_run"]) == (True, first.run_id)
    assert [(e.id, e.origin, e.rows) for e in second.evidence] == [("Q1", "pinned", [[0]])]
