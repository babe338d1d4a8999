"""``start_run``: a run this process runs itself, created already claimed in one transaction."""

import datetime as dt
from pathlib import Path

from checks.report import RunReport, Status
from checks.store.store import Store


def test_start_run_claims_once_per_slot_and_finishes_fenced(tmp_path: Path) -> None:
    store = Store(f"sqlite:///{tmp_path / 'store.db'}")
    slot = dt.datetime(2026, 5, 1, 9, tzinfo=dt.UTC)
    started = store.start_run("a", slot, lease_s=60, definition={"name": "a"})
    assert started is not None
    run_id, attempt = started
    assert attempt == 1
    assert store.start_run("a", slot, lease_s=60) is None  # the slot is taken
    assert store.claim_run(run_id, lease_s=60) is None  # held by a live lease
    row = store.get_run(run_id)
    assert row is not None and (row.status, row.attempt) == (Status.RUNNING, 1)
    assert row.started_at is not None and row.definition == {"name": "a"}
    report = RunReport(automation="a", scheduled_for=slot, status=Status.COMPLETED, summary="ok")
    assert not store.finish_run(run_id, 2, report)  # fenced on the attempt
    assert store.finish_run(run_id, 1, report)
    done = store.get_run(run_id)
    assert done is not None and (done.status, done.summary) == (Status.COMPLETED, "ok")
    store.close()
