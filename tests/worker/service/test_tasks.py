"""The run task's own paths, in-process: every run that ends in error is announced."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import event

from checks import run_lifecycle
from checks.automation.model import Automation
from checks.clock import utcnow
from checks.report import Status
from checks.run import SourcePool
from checks.settings.config import Settings
from checks.store.store import Store
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
    monkeypatch.setattr(tasks, "announce", lambda run_id, **_: announced.append(run_id))

    def broken(*_: object, **__: object) -> object:
        raise RuntimeError("a bug after the claim")

    monkeypatch.setattr(run_lifecycle, "run_automation", broken)
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


RUN_STATEMENTS = 22
"""Statements a checks-only run task sends to a PostgreSQL store (its second run).

One of them keeps the review list's row of its automation (``checks.store.list_rows``);
one reads the store's clock for the claim's lease (``checks.store.store_clock``); one
writes the trace event of the checks' shared statement (``checks_statement``), in the
result's transaction (``Store.finish_run``'s ``also``).
"""
RUN_TRANSACTIONS = 5
"""Transactions it opens: each costs a pool checkout, a BEGIN and a COMMIT besides."""


def test_a_checks_only_run_task_sends_a_fixed_number_of_store_statements(
    empty_pg_url: str, flights_settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = Store(empty_pg_url)
    queue = RunQueue(store)
    state = tasks._Process(flights_settings, store, queue, SourcePool(flights_settings))
    monkeypatch.setattr(tasks, "process", lambda: state)
    definition = Automation.model_validate(
        {"name": "counted", "source": "flights", "goal": "g", "checks": [
            {"name": "flights", "sql": "SELECT count(*) FROM flights", "expect": "> 0"},
            {"name": "no null carrier", "missing": {"table": "flights", "column": "carrier"}}],
         "path": "counted.yaml", "line": 1}
    ).definition()  # fmt: skip
    now = utcnow()
    runs = [
        queue.add_manual("counted", "flights", definition, now=now - dt.timedelta(seconds=s))
        for s in (2, 1)
    ]
    assert runs[0] is not None and runs[1] is not None
    try:
        # the first run opens the source and leaves a previous run for the second opinion
        assert tasks.run_automation_task.run(runs[0].id) == "done"
        statements: list[str] = []
        transactions: list[object] = []

        def statement(*args: Any) -> None:
            statements.append(args[2])

        def begin(connection: object) -> None:
            transactions.append(connection)

        event.listen(store.engine, "before_cursor_execute", statement)
        event.listen(store.engine, "begin", begin)
        try:
            assert tasks.run_automation_task.run(runs[1].id) == "done"
        finally:
            event.remove(store.engine, "before_cursor_execute", statement)
            event.remove(store.engine, "begin", begin)
        report = store.get_run(runs[1].id)
        assert report is not None and report.status == Status.COMPLETED
        assert report.second_opinion is not None and len(report.checks) == 2
    finally:
        state.sources.close()
        store.close()
    shown = "\n".join(" ".join(s.split())[:100] for s in statements)
    assert len(statements) == RUN_STATEMENTS, shown
    assert len(transactions) == RUN_TRANSACTIONS, shown
