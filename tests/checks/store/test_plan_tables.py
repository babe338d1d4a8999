"""The pinned plans table on PostgreSQL: a plan reads back as written; a race never fails a run."""

from __future__ import annotations

import datetime as dt
import threading

from checks.pinned.plan import PinnedPlan, PinnedQuery
from checks.report import Finding, FindingSource
from checks.store.plan_tables import write_plan
from checks.store.plans import current_plan
from checks.store.store import Store

MADE = dt.datetime(2026, 12, 1, 9, 30, tzinfo=dt.UTC)


def plan(summary: str) -> PinnedPlan:
    query = PinnedQuery("Q1", "SELECT 1 AS one", "ab" * 32, 1, True, ("one",), ((1,),))
    return PinnedPlan(
        "orders", 0, MADE, "cd" * 32, "fake", Finding.CLEAR, FindingSource.AGENT, summary,
        "high", (query,), (("negatives", "passed"),),
    )  # fmt: skip


def test_two_runs_writing_the_first_plan_at_once_both_succeed(empty_pg_url: str) -> None:
    store = Store(empty_pg_url)
    first = store.create_run("orders", MADE)
    second = store.create_run("orders", MADE + dt.timedelta(hours=1))
    assert first is not None and second is not None
    inserted = threading.Event()
    done: list[str] = []
    with store.session() as session:
        write_plan(session, plan("first"), first)
        session.flush()  # the row exists, uncommitted: the other insert waits on it

        def other() -> None:
            inserted.set()
            with store.session() as racing:
                write_plan(racing, plan("second"), second)
            done.append("second")

        thread = threading.Thread(target=other)
        thread.start()
        inserted.wait(5)
        thread.join(0.5)
        assert thread.is_alive()  # blocked on the uncommitted row
    thread.join(10)
    assert done == ["second"]
    read = current_plan(store, "orders")
    assert read is not None and (read.run_id, read.summary) == (second, "second")
    assert read == plan("second").__class__(**{**plan("second").__dict__, "run_id": second})
    store.close()
