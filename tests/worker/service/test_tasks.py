"""The run task's own paths, in-process: every run that ends in error is announced."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from checks.automation.model import Automation
from checks.report import Status
from checks.run import SourcePool
from checks.settings.config import Settings
from checks.store.store import Store, utcnow
from worker.service import tasks
from worker.service.queue_records import RunInfo
from worker.service.run_queue import RunQueue


def test_an_internal_error_in_the_task_fails_the_run_and_announces_it(
    tmp_path: Path, flights_settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = Store(f"sqlite:///{tmp_path}/lookout.db")
    queue = RunQueue(store)
    automation = Automation.model_validate(
        {"name": "a", "source": "flights", "goal": "g", "checks": [
            {"name": "n", "sql": "SELECT 1", "expect": "== 1"}], "path": "a.yaml", "line": 1}
    )  # fmt: skip
    run_id = store.create_run("a", utcnow(), definition=automation.definition())
    assert run_id is not None and store.claim_run(run_id, lease_s=60) == 1
    announced: list[int] = []
    monkeypatch.setattr(tasks, "announce", announced.append)

    def broken(*_: object, **__: object) -> object:
        raise RuntimeError("a bug after the claim")

    monkeypatch.setattr(tasks, "run_automation", broken)
    state = tasks._Process(flights_settings, store, queue, SourcePool(flights_settings))
    info = RunInfo(run_id, "a", "running", 1, utcnow() - dt.timedelta(seconds=1), "schedule",
                   "flights", automation.definition())  # fmt: skip
    with pytest.raises(RuntimeError):
        tasks._run(state, info, automation, 1)
    report = store.get_run(run_id)
    store.close()
    assert report is not None and report.status == Status.ERROR
    assert report.error == "internal error: RuntimeError: a bug after the claim"
    assert announced == [run_id]
