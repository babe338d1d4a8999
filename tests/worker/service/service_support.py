"""Helpers of the service tests: automation files, config files, a clean store, processes."""

from __future__ import annotations

import datetime as dt
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import redis
import yaml
from sqlalchemy import text

from checks.settings.config import Settings, default_config_data
from checks.store.store import Store
from tests.paths import ROOT
from worker.service.queue_records import Cursor
from worker.service.run_queue import RunQueue
from worker.service.slots import CronSchedule

CELERY = str(Path(sys.executable).with_name("celery"))
LOOKOUT = str(Path(sys.executable).with_name("lookout"))
T = TypeVar("T")


def write_automation(folder: Path, name: str, **fields: Any) -> Path:
    """Write ``<folder>/<name>.yaml`` holding one automation (defaults: flights, one check)."""
    data: dict[str, Any] = {
        "name": name,
        "source": "flights",
        "goal": "There are flights.",
        "checks": [
            {"name": "some flights", "sql": "SELECT count(*) FROM flights", "expect": "> 0"}
        ],
        **fields,
    }
    path = folder / f"{name}.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def config_data(
    *, store_url: str, cache_dir: str, automations_dir: Path, redis_url: str, **service: Any
) -> dict[str, Any]:
    """Return a config file's data: the flights source, the store, Redis and ``service:``."""
    return {
        **default_config_data(),
        "store_url": store_url,
        "cache_dir": cache_dir,
        "automations_dir": str(automations_dir),
        "redis_url": redis_url,
        "service": service,
    }


def settings_of(data: dict[str, Any]) -> Settings:
    return Settings.model_validate(data)


def write_config(path: Path, data: dict[str, Any]) -> Path:
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def clean_store(store: Store) -> None:
    """Empty the runs and cursors (and everything hanging off runs)."""
    with store.engine.begin() as conn:
        conn.execute(text("TRUNCATE runs, schedule_cursors RESTART IDENTITY CASCADE"))


def seed_cursor(store: Store, name: str, schedule: CronSchedule, at: dt.datetime) -> None:
    """Pretend the dispatcher last looked at ``name`` at ``at`` (as after a downtime)."""
    RunQueue(store).record([], {name: Cursor(schedule.key, at)}, now=at)


def wait_for(check: Callable[[], T | None], timeout_s: float, what: str, step_s: float = 0.2) -> T:
    """Poll ``check`` until it returns something truthy; fail with ``what`` after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout_s:g} s waiting for {what}")
        time.sleep(step_s)


class Processes:
    """Starts service processes in their own session (so signals reach the whole group)."""

    def __init__(self, env: dict[str, str], logs: Path) -> None:
        inherited = {k: v for k, v in os.environ.items() if not k.startswith("LOOKOUT_")}
        self.env = {**inherited, **env}
        self.logs = logs
        self.started: list[subprocess.Popen[bytes]] = []

    def start(self, name: str, *argv: str) -> subprocess.Popen[bytes]:
        log = (self.logs / f"{name}.log").open("ab")
        proc = subprocess.Popen(
            list(argv),
            cwd=ROOT,
            env=self.env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        log.close()
        self.started.append(proc)
        return proc

    def worker(self, name: str = "worker", *extra: str) -> subprocess.Popen[bytes]:
        return self.start(
            name,
            CELERY,
            "-A",
            "worker.service.celery_app",
            "worker",
            "--loglevel=INFO",
            "--without-mingle",
            "--without-gossip",
            f"--hostname={name}@%h",
            *extra,
        )

    def beat(self, name: str = "beat") -> subprocess.Popen[bytes]:
        return self.start(
            name, CELERY, "-A", "worker.service.celery_app", "beat", "--loglevel=INFO"
        )

    @staticmethod
    def kill(proc: subprocess.Popen[bytes], sig: int = signal.SIGKILL) -> None:
        if proc.poll() is None:
            os.killpg(proc.pid, sig)
        proc.wait(timeout=20)

    def stop_all(self) -> None:
        for proc in self.started:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
        for proc in self.started:
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=10)

    def log(self, name: str) -> str:
        path = self.logs / f"{name}.log"
        return path.read_text(errors="replace") if path.exists() else ""


def free_port() -> int:
    """Return a TCP port free on 127.0.0.1 right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def redis_server(port: int, folder: Path) -> subprocess.Popen[bytes]:
    """Start a private redis-server without persistence; return once it answers."""
    server = subprocess.Popen(
        [
            "redis-server",
            "--port",
            str(port),
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            str(folder),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    with redis.Redis(port=port) as client:
        wait_for(lambda: pings(client), 10, f"redis-server on port {port}")
    return server


def pings(client: redis.Redis) -> bool:
    try:
        return bool(client.ping())
    except redis.ConnectionError:
        return False
