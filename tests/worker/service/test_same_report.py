"""A run gives the same report in-process (``lookout run``'s path) and through a real worker.

The worker runs an automation from the definition stored with its run; the
in-process run from the automation as loaded. Both go through the one run
lifecycle (``checks.run_lifecycle``), so for the same slot they must agree on
the status, the finding and each check's outcome and value. Tried on every
shipped example, every typed kind with every option
(``tests/data/every_option/``) and the README's freshness form (``max_age:``),
which once ended in error in every worker run.
"""

from __future__ import annotations

import datetime as dt
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from checks.automation.loader import load_automations
from checks.report import RunReport, Status
from checks.run import SourcePool
from checks.run_lifecycle import run_and_store
from checks.settings.config import Settings
from checks.sources import Source
from checks.store.store import Store
from tests.paths import DATA
from tests.shipped import shipped_folder
from tests.worker.service.service_support import (
    Processes,
    clean_store,
    config_data,
    free_port,
    redis_server,
    wait_for,
    write_automation,
    write_config,
)

SLOT = dt.datetime(2026, 12, 1, 9, 0, tzinfo=dt.UTC)

QUEUE = """
import datetime as dt, sys
from checks.automation.loader import load_automations
from checks.store.store import Store
from worker.service.celery_app import settings
from worker.service.run_queue import RunQueue
from worker.service.tasks import send_run

queue = RunQueue(Store(settings.store_url))
for automation in load_automations(settings.automations_dir).automations:
    run = queue.add_manual(
        automation.name, automation.source, automation.definition(),
        now=dt.datetime.fromisoformat(sys.argv[1]),
    )
    assert run is not None
    send_run(run)
"""
"""Queues every automation of the folder for one instant, as ``lookout run-now`` queues one."""


AGE_SLACK_S = 900.0
"""A freshness age is measured from the clock, not the slot: the two runs are minutes apart."""


def shape(report: RunReport) -> tuple[Any, ...]:
    """What must agree: status, finding, error, and each check's name, outcome and value.

    A freshness age stands as None here; ``ages`` gives it, compared within the slack.
    """
    checks = [
        (c.name, str(c.outcome), None if c.kind == "freshness" else c.value) for c in report.checks
    ]
    return (str(report.status), report.finding, report.error, checks)


def ages(report: RunReport) -> list[float]:
    """Each freshness check's age, in seconds."""
    return [float(c.value) for c in report.checks if c.kind == "freshness" and c.value is not None]


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """The shipped examples, every typed option, and the README's freshness form."""
    found = shipped_folder(tmp_path)
    shutil.copy(DATA / "every_option" / "every-typed-option.yaml", found)
    write_automation(
        found,
        "readme-freshness",
        checks=[
            {
                "name": "fresh flights",
                "freshness": {"table": "flights", "column": "time_hour", "max_age": "3h"},
            },
            {
                "name": "fresh enough",
                "freshness": {"table": "flights", "column": "time_hour", "max_age": "3650d"},
            },
        ],
    )
    return found


@pytest.fixture
def worker_store(
    tmp_path: Path, pg_url: str, flights_settings: Settings, folder: Path
) -> Iterator[tuple[Store, Processes]]:
    """A worker on a private Redis over a clean PostgreSQL store, with ``folder`` as its files."""
    port = free_port()
    server = redis_server(port, tmp_path)
    data = config_data(
        store_url=pg_url,
        cache_dir=flights_settings.cache_dir,
        automations_dir=folder,
        redis_url=f"redis://127.0.0.1:{port}/0",
        dispatch_interval_s=1,
    )
    config = write_config(tmp_path / "lookout.yaml", data)
    store = Store(pg_url)
    clean_store(store)
    procs = Processes({"LOOKOUT_CONFIG": str(config)}, tmp_path)
    try:
        yield store, procs
    finally:
        procs.stop_all()
        store.close()
        server.terminate()
        server.wait(timeout=10)


@pytest.mark.slow
def test_every_automation_gives_the_same_report_in_process_and_in_a_worker(
    tmp_path: Path,
    flights_settings: Settings,
    flights_source: Source,
    folder: Path,
    worker_store: tuple[Store, Processes],
) -> None:
    store, procs = worker_store
    loaded = load_automations(folder)
    assert not loaded.errors
    local = Store(f"sqlite:///{tmp_path / 'local.db'}")
    with SourcePool(flights_settings) as pool:
        here = {
            a.name: run_and_store(a, flights_settings, pool, local, scheduled_for=SLOT)
            for a in loaded.automations
        }
    local.close()
    procs.worker("worker", "--concurrency=2")
    subprocess.run(
        [sys.executable, "-c", QUEUE, SLOT.isoformat()],
        env=procs.env,
        check=True,
        capture_output=True,
    )

    def ended() -> list[RunReport] | None:
        runs = store.list_runs(limit=1000)
        done = [r for r in runs if r.status not in (Status.QUEUED, Status.RUNNING)]
        return done if len(done) == len(here) else None

    listed = wait_for(ended, 300, "every run to end in the worker", step_s=1.0)
    there = {r.automation: store.get_run(r.run_id or 0) for r in listed}
    assert set(there) == set(here)
    assert here["readme-freshness"].status == Status.COMPLETED
    for name, report in here.items():
        stored = there[name]
        assert stored is not None
        assert shape(stored) == shape(report), name
        assert len(ages(stored)) == len(ages(report)), name
        for later, earlier in zip(ages(stored), ages(report), strict=True):
            assert 0 <= later - earlier < AGE_SLACK_S, name
