"""A broker that cannot be reached: ``run-now``, ``worker`` and ``beat`` say so in one line.

Through the real entry point (``worker.cli.app.main``) in a child process. The
broker "down" is a port nothing listens on (127.0.0.1:1); the broker "back" is
the machine's Redis, database 11 on a run without xdist, one of its own on
each xdist worker (``tests.parallel.redis_db``; no other test uses it; flushed
before and after each test).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis

from checks.clock import utcnow
from checks.report import Status
from checks.settings.config import Settings
from checks.store.store import Store
from tests.parallel import redis_db
from tests.paths import ROOT
from tests.worker.service.service_support import (
    config_data,
    wait_for,
    write_automation,
    write_config,
)
from worker.service.broker import probe, unreachable
from worker.service.run_queue import RunQueue

BROKER_DOWN = "redis://lookout:hunter22@127.0.0.1:1/0"
BROKER_BACK = f"redis://127.0.0.1:6379/{redis_db(11)}"
REFUSED = (
    "the broker at redis://lookout:***@127.0.0.1:1/0 could not be reached (Error 111 connecting"
    " to 127.0.0.1:1. Connection refused): start Redis, or set LOOKOUT_REDIS_URL (redis_url in"
    " the config) to its URL"
)
MAIN = "from worker.cli.app import main; main()"


@pytest.fixture
def broker_back() -> Iterator[redis.Redis]:
    client = redis.Redis.from_url(BROKER_BACK)
    client.flushdb()
    yield client
    client.flushdb()
    client.close()


def environment(tmp_path: Path, flights_settings: Settings, redis_url: str) -> dict[str, str]:
    """A config (``unsent_grace_s`` tiny, so the reaper may resend at once) and one automation."""
    folder = tmp_path / "automations"
    folder.mkdir(exist_ok=True)
    write_automation(folder, "on-demand")  # no schedule: only run-now makes its runs
    data = config_data(
        store_url=f"sqlite:///{tmp_path / 'lookout.db'}",
        cache_dir=flights_settings.cache_dir,
        automations_dir=folder,
        redis_url=redis_url,
        unsent_grace_s=0.001,
    )
    config = write_config(tmp_path / "lookout.yaml", data)
    return {"PATH": "/usr/bin:/bin", "LOOKOUT_CONFIG": str(config), "LOOKOUT_REDIS_URL": redis_url}


def lookout(env: dict[str, str], *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", MAIN, *argv],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_run_now_with_the_broker_down_exits_2_in_one_line_and_the_reaper_sends_the_run_later(
    tmp_path: Path, flights_settings: Settings, broker_back: redis.Redis
) -> None:
    env = environment(tmp_path, flights_settings, BROKER_DOWN)
    down = lookout(env, "run-now", "on-demand")
    assert (down.returncode, down.stdout) == (2, "")
    assert down.stderr == (
        f"error: {REFUSED}. Run 1 of on-demand is recorded and not sent: the service's reaper"
        " sends it once the broker answers\n"
    )
    store = Store(f"sqlite:///{tmp_path / 'lookout.db'}")
    run = store.get_run(1)
    assert run is not None and (run.status, run.trigger) == (Status.QUEUED, "manual")
    queue = RunQueue(store)
    unsent = queue.to_resend(utcnow(), unsent_grace_s=0.001, resend_after_s=3600)
    assert [r.id for r in unsent] == [1]  # no message left: enqueued_at is still empty

    # The broker is back: the service's dispatch_due task (its reaper) sends the run.
    back = {**env, "LOOKOUT_REDIS_URL": BROKER_BACK}
    script = (
        "import json; from worker.service.tasks import dispatch_due;"
        " print(json.dumps(dispatch_due()))"
    )
    tick = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        env=back,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert tick.returncode == 0, tick.stderr
    result = json.loads(tick.stdout)
    assert (result["queued"], result["resent"]) == ([], [1])
    [message] = [json.loads(m) for m in broker_back.lrange("lookout.source.flights", 0, -1)]
    assert (message["headers"]["task"], message["headers"]["argsrepr"]) == (
        "lookout.run_automation",
        "[1]",
    )
    assert queue.to_resend(utcnow(), unsent_grace_s=0.001, resend_after_s=3600) == []
    store.close()


def test_run_now_with_the_broker_up_sends_the_run(
    tmp_path: Path, flights_settings: Settings, broker_back: redis.Redis
) -> None:
    up = lookout(environment(tmp_path, flights_settings, BROKER_BACK), "run-now", "on-demand")
    assert (up.returncode, up.stderr) == (0, "")
    assert up.stdout == (
        "queued run 1 of on-demand on lookout.source.flights; see 'lookout show 1'\n"
    )
    assert broker_back.llen("lookout.source.flights") == 1


def _first_line(path: Path) -> str | None:
    text = path.read_text(errors="replace") if path.exists() else ""
    return text.splitlines()[0] if "\n" in text else None


@pytest.mark.parametrize(
    ("argv", "waiting"),
    [
        (("worker", "--pool", "threads", "--concurrency", "1"), "the worker waits for it"),
        (("beat",), "beat waits for it"),
    ],
)
def test_worker_and_beat_say_in_one_line_that_the_broker_is_down_and_wait(
    tmp_path: Path, flights_settings: Settings, argv: tuple[str, ...], waiting: str
) -> None:
    env = environment(tmp_path, flights_settings, BROKER_DOWN)
    log = tmp_path / "stderr.log"
    with log.open("wb") as stderr:
        proc = subprocess.Popen(
            [sys.executable, "-c", MAIN, *argv],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
            start_new_session=True,
        )
    try:
        first = wait_for(lambda: _first_line(log), 60, f"lookout {argv[0]}'s first line")
        assert proc.poll() is None  # it waits for the broker: Celery retries
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=20)
    assert first == f"warning: {REFUSED}; {waiting}"
    assert "hunter22" not in log.read_text(errors="replace")


def test_the_line_hides_passwords_and_secrets_anywhere_in_the_url() -> None:
    settings: Any = Settings.model_validate(
        {"redis_url": "rediss://:s3cret-pw@cache.example:6380/2?ssl_cert_reqs=required"}
    )
    line = unreachable(settings.redis_url, "Timeout connecting to server.\n", settings.secrets())
    assert line == (
        "the broker at rediss://:***@cache.example:6380/2?ssl_cert_reqs=required could not be"
        " reached (Timeout connecting to server): start Redis, or set LOOKOUT_REDIS_URL"
        " (redis_url in the config) to its URL"
    )


def test_the_probe_finds_a_refused_port_and_a_database_out_of_range() -> None:
    assert probe(BROKER_BACK) is None
    assert probe(BROKER_DOWN) == "Error 111 connecting to 127.0.0.1:1. Connection refused."
    assert probe("redis://127.0.0.1:6379/99") == "DB index is out of range"
