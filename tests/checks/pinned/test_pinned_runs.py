"""Pinned plans through the real run path: DuckDB, the SQLite store, the fake LLM server.

Every LLM call is counted where it arrives, at the fake server.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import duckdb
import pytest
from sqlalchemy import update

from checks.agent.prompt import UNTRUSTED_LABEL
from checks.automation.model import Automation
from checks.fakes.llm_server import FakeLLM, one_query_agent
from checks.pinned.consult import FRESH
from checks.pinned.plan import reads_a_table
from checks.report import Finding, FindingSource, RunReport, Status
from checks.run import SourcePool
from checks.run_lifecycle import run_and_store
from checks.settings.config import Settings
from checks.settings.llm import LLMSettings
from checks.settings.sources import DuckDBSource
from checks.store.plan_tables import PinnedPlanRow
from checks.store.plans import current_plan
from checks.store.store import Store

NEGATIVES = "SELECT id, amount FROM orders WHERE amount < 0 AND NOT refund ORDER BY id"
SLOT = dt.datetime(2026, 12, 1, 9, tzinfo=dt.UTC)


def goal_only(**extra: Any) -> Automation:
    return Automation.model_validate(
        {
            "name": "no-negative-orders",
            "source": "shop",
            "goal": "No order has a negative amount.",
            "instructions": "Refunds are stored as negative amounts and are allowed.",
            "path": "inline.yaml",
            "line": 1,
            **extra,
        }
    )


def write_orders(path: Path, rows: list[tuple[int, float, bool]]) -> None:
    with duckdb.connect(str(path)) as conn:
        conn.execute(
            "CREATE OR REPLACE TABLE orders (id INTEGER, amount DECIMAL(10,2), refund BOOLEAN)"
        )
        conn.executemany("INSERT INTO orders VALUES (?, ?, ?)", rows)


class World:
    """A shop database, a store and the fake LLM playing a one-query agent."""

    def __init__(self, tmp_path: Path, llm: FakeLLM | None) -> None:
        self.db = tmp_path / "shop.duckdb"
        write_orders(self.db, [(1, 10.0, False), (2, -5.0, True)])
        self.settings = Settings(
            store_url=f"sqlite:///{tmp_path}/lookout.db",
            cache_dir=str(tmp_path / "cache"),
            sources={"shop": DuckDBSource(type="duckdb", database=str(self.db))},
        )
        if llm is not None:
            self.settings.llm = LLMSettings(base_url=llm.base_url, model="fake", max_retries=0)
        self.store = Store(self.settings.store_url)
        self.llm = llm
        self.slot = SLOT

    def calls(self) -> int:
        return len(self.llm.chat_requests) if self.llm else 0

    def run(self, automation: Automation, **kwargs: Any) -> RunReport:
        """One run in a fresh process pool (so a data change is seen), one hour after the last."""
        self.slot += dt.timedelta(hours=1)
        with SourcePool(self.settings) as pool:
            return run_and_store(
                automation, self.settings, pool, self.store, scheduled_for=self.slot, **kwargs
            )


def agent() -> FakeLLM:
    return FakeLLM(default=one_query_agent({"no-negative-orders": NEGATIVES}))


@pytest.mark.slow
def test_the_next_run_takes_the_plan_without_calling_the_llm(tmp_path: Path) -> None:
    with agent() as llm:
        world = World(tmp_path, llm)
        first = world.run(goal_only())
        assert world.calls() == 2  # execute_query, then submit_report
        second = world.run(goal_only())
        third = world.run(goal_only())
        assert world.calls() == 2  # not one call more
    assert (first.finding, first.finding_source) == (Finding.CLEAR, FindingSource.AGENT)
    assert first.pinning is not None and first.pinning["new_plan"] is True
    assert first.pinning["reason"] == "no pinned plan yet"
    for pinned in (second, third):
        assert (pinned.status, pinned.finding, pinned.finding_source) == (
            Status.COMPLETED,
            Finding.CLEAR,
            FindingSource.PINNED,
        )
        assert pinned.agent is None
        assert pinned.pinning is not None
        assert pinned.pinning["used"] is True and pinned.pinning["from_run"] == first.run_id
        assert pinned.pinning["new_plan"] is False and pinned.pinning["queries"] == ["Q1"]
        assert pinned.summary.startswith(
            f"The query returned 0 rows [Q1].\n\n*Pinned plan from run {first.run_id}* (fake, "
        )
        (q1,) = pinned.evidence
        assert (q1.id, q1.origin, q1.row_count, q1.fingerprint) == (
            "Q1",
            "pinned",
            0,
            first.evidence[0].fingerprint,
        )
    stored = world.store.get_run(second.run_id or 0)
    assert stored is not None and stored.finding_source == FindingSource.PINNED
    assert stored.pinning == second.pinning
    assert stored.to_dict()["pinning"]["from_run"] == first.run_id
    plan = current_plan(world.store, "no-negative-orders")
    assert plan is not None and (plan.run_id, plan.model, plan.finding) == (
        first.run_id,
        "fake",
        Finding.CLEAR,
    )


@pytest.mark.slow
def test_a_data_change_asks_the_agent_again_with_what_changed(tmp_path: Path) -> None:
    with agent() as llm:
        world = World(tmp_path, llm)
        first = world.run(goal_only())
        write_orders(world.db, [(1, 10.0, False), (2, -5.0, True), (3, -7.5, False)])
        changed = world.run(goal_only())
        assert world.calls() == 4
        after = world.run(goal_only())
        assert world.calls() == 4
        opening = llm.chat_requests[2]["messages"][1]["content"]
    assert (changed.finding, changed.finding_source) == (
        Finding.NEEDS_ATTENTION,
        FindingSource.AGENT,
    )
    assert changed.pinning is not None
    assert changed.pinning["used"] is False and changed.pinning["from_run"] == first.run_id
    assert changed.pinning["reason"] == (
        "a pinned query's result differs from when the plan was made"
    )
    (change,) = changed.pinning["changes"]
    before, now = first.evidence[0].fingerprint[:12], changed.evidence[0].fingerprint[:12]
    assert change == (
        f"Q1's result changed: 0 rows when pinned, 1 row now (fingerprint {before} → {now})"
    )
    assert changed.pinning["new_plan"] is True
    # the new report replaced the plan: the run after it takes the new plan
    assert (after.finding, after.finding_source) == (Finding.NEEDS_ATTENTION, FindingSource.PINNED)
    assert after.pinning is not None and after.pinning["from_run"] == changed.run_id
    # the agent asked again was told the previous report and what changed, fenced
    section = opening.split("## The previous report (the pinned plan, not taken this run)", 1)[1]
    assert f"{UNTRUSTED_LABEL}:\n```json\n" in section
    told = json.loads(section.split("```json\n", 1)[1].split("\n```", 1)[0])
    assert (told["run_id"], told["finding"], told["summary"]) == (
        first.run_id,
        "clear",
        "The query returned 0 rows [Q1].",
    )
    assert told["changes"] == [change]
    assert told["queries"][0]["row_count_then"] == 0 and told["queries"][0]["row_count_now"] == 1
    assert told["queries"][0]["rows_now"] == [[3, "-7.50"]]  # DECIMAL, exact


@pytest.mark.slow
def test_a_definition_change_asks_again_and_an_owner_change_does_not(tmp_path: Path) -> None:
    with agent() as llm:
        world = World(tmp_path, llm)
        world.run(goal_only())
        owner = world.run(goal_only(owner="fleet-data", tags=["x"], schedule="0 9 * * *"))
        assert world.calls() == 2
        edited = world.run(goal_only(instructions="Refunds are allowed."))
        assert world.calls() == 4
    assert owner.finding_source == FindingSource.PINNED
    assert edited.finding_source == FindingSource.AGENT
    assert edited.pinning is not None and edited.pinning["reason"] == (
        "the automation's definition changed since the plan was made"
    )
    assert edited.pinning["changes"] == []


@pytest.mark.slow
def test_a_plan_older_than_repin_after_asks_again(tmp_path: Path) -> None:
    with agent() as llm:
        world = World(tmp_path, llm)
        first = world.run(goal_only())

        def age(days: float) -> None:
            with world.store.session() as session:
                session.execute(
                    update(PinnedPlanRow).values(
                        made_at=dt.datetime.now(dt.UTC) - dt.timedelta(days=days)
                    )
                )

        age(6.5)
        young = world.run(goal_only())  # default repin_after: 7 days
        assert world.calls() == 2
        age(8)
        old = world.run(goal_only())
        assert world.calls() == 4
        age(2)
        per_automation = world.run(goal_only(repin_after="1d"))
        assert world.calls() == 6
        age(2)
        world.settings.llm = world.settings.llm.model_copy(update={"repin_after_s": 3 * 86400.0})
        in_settings = world.run(goal_only(repin_after="1d"))  # the automation's wins
        assert world.calls() == 8
        age(2)
        kept = world.run(goal_only())  # 2 days < the settings' 3 days
        assert world.calls() == 8
    assert young.finding_source == FindingSource.PINNED
    assert young.pinning is not None and young.pinning["from_run"] == first.run_id
    assert old.pinning is not None and old.pinning["reason"] == (
        "the plan is 8.0 days old; repin_after is 7 days"
    )
    assert per_automation.pinning is not None and per_automation.pinning["reason"] == (
        "the plan is 2.0 days old; repin_after is 1 day"
    )
    assert in_settings.finding_source == FindingSource.AGENT
    assert kept.finding_source == FindingSource.PINNED


@pytest.mark.slow
def test_fresh_asks_again_and_pinning_off_always_asks(tmp_path: Path) -> None:
    with agent() as llm:
        world = World(tmp_path, llm)
        world.run(goal_only())
        fresh = world.run(goal_only(), fresh=True)
        assert world.calls() == 4
        pinned = world.run(goal_only())
        assert world.calls() == 4
        world.settings.llm = world.settings.llm.model_copy(update={"pin_plans": False})
        off = [world.run(goal_only()) for _ in range(2)]
        assert world.calls() == 8
    assert fresh.pinning is not None
    assert (fresh.pinning["reason"], fresh.pinning["new_plan"]) == (FRESH, True)
    assert pinned.pinning is not None and pinned.pinning["from_run"] == fresh.run_id
    assert [r.finding_source for r in off] == [FindingSource.AGENT] * 2
    assert [r.pinning for r in off] == [None, None]


@pytest.mark.slow
def test_a_model_change_asks_again(tmp_path: Path) -> None:
    with agent() as llm:
        world = World(tmp_path, llm)
        world.run(goal_only())
        world.settings.llm = world.settings.llm.model_copy(update={"model": "newer"})
        newer = world.run(goal_only())
        assert world.calls() == 4
        other = world.run(goal_only(model="bigger"))  # the automation's model is its definition
        assert world.calls() == 6
    assert newer.pinning is not None and newer.pinning["reason"] == (
        "the plan was made by fake; this run would ask newer"
    )
    assert newer.agent is not None and newer.agent["model"] == "newer"
    assert other.pinning is not None and other.pinning["reason"] == (
        "the automation's definition changed since the plan was made"
    )


CHECKED = {"checks": [{"name": "negative non-refund orders", "sql": NEGATIVES, "expect": "empty"}]}


def test_a_pinned_run_is_never_clear_against_a_failed_declared_check(tmp_path: Path) -> None:
    with agent() as llm:
        world = World(tmp_path, llm)
        first = world.run(goal_only(**CHECKED))
    assert (first.finding, first.finding_source) == (Finding.CLEAR, FindingSource.AGENT)
    # a plan that says Clear beside a failed check (as a plan could have been written before
    # this rule): the check now fails with the same outcome the plan recorded
    with world.store.session() as session:
        session.execute(
            update(PinnedPlanRow).values(check_outcomes=[["negative non-refund orders", "failed"]])
        )
    write_orders(world.db, [(1, 10.0, False), (3, -7.5, False)])
    world.settings.llm = LLMSettings()  # no LLM: the checks decide
    run = world.run(goal_only(**CHECKED))
    assert (run.status, run.finding, run.finding_source) == (
        Status.COMPLETED,
        Finding.NEEDS_ATTENTION,
        FindingSource.CHECKS,
    )
    assert run.pinning is not None and run.pinning["changes"] == [
        "the plan is Clear but declared check 'negative non-refund orders' did not pass"
    ]
    assert run.pinning["reason"] == "the declared checks differ from when the plan was made"


@pytest.mark.slow
def test_a_check_outcome_change_asks_again_and_the_override_still_holds(tmp_path: Path) -> None:
    clear = {"finding": "clear", "summary": "Fine [C1].", "evidence": ["C1"], "confidence": "high"}
    with FakeLLM(default={"tool_calls": [{"name": "submit_report", "arguments": clear}]}) as llm:
        world = World(tmp_path, llm)
        world.run(goal_only(**CHECKED))
        write_orders(world.db, [(1, 10.0, False), (3, -7.5, False)])
        failed = world.run(goal_only(**CHECKED))
        assert world.calls() == 2
        pinned = world.run(goal_only(**CHECKED))
        assert world.calls() == 2
    assert failed.pinning is not None and failed.pinning["changes"] == [
        "declared check 'negative non-refund orders' was passed when pinned, failed now",
        "C1's result changed: 0 rows when pinned, 1 row now",
    ]
    # the agent said Clear again; the runtime overrode it, and that is the new plan
    assert (failed.finding, failed.finding_source) == (
        Finding.NEEDS_ATTENTION,
        FindingSource.OVERRIDE,
    )
    assert (pinned.finding, pinned.finding_source) == (
        Finding.NEEDS_ATTENTION,
        FindingSource.PINNED,
    )
    assert "- FAILED: **negative non-refund orders** — 1 row (expected empty) [C1]" in (
        pinned.summary
    )


REFUNDS = "SELECT count(*) AS refunds FROM refunds"


@pytest.mark.slow
def test_a_pinned_query_that_now_fails_falls_back(tmp_path: Path) -> None:
    checked = goal_only(name="orders-checked", **CHECKED)
    queries = {"no-negative-orders": REFUNDS, "orders-checked": REFUNDS}
    with FakeLLM(default=one_query_agent(queries)) as llm:
        world = World(tmp_path, llm)
        with duckdb.connect(str(world.db)) as conn:
            conn.execute("CREATE TABLE refunds AS SELECT 0 AS id WHERE false")
        world.run(checked)
        world.run(goal_only())
        assert world.calls() == 4
        with duckdb.connect(str(world.db)) as conn:
            conn.execute("DROP TABLE refunds")
        asked = world.run(checked)
        # sent to the agent: its query fails too, its report cites nothing that ran (one
        # repair turn), so the declared checks decide
        assert world.calls() == 7
    refused = "Q1 failed now: rejected (unknown-table): refunds is not a data set of this source"
    assert asked.pinning is not None and asked.pinning["changes"] == [refused]
    assert asked.pinning["new_plan"] is False
    assert (asked.finding, asked.finding_source) == (Finding.CLEAR, FindingSource.CHECKS)
    assert asked.agent is not None and asked.agent["ended"] == "contract_invalid"
    # without an LLM: the declared checks decide, as they always did
    world.settings.llm = LLMSettings()
    checks_only = world.run(checked)
    assert (checks_only.finding, checks_only.finding_source) == (
        Finding.CLEAR,
        FindingSource.CHECKS,
    )
    assert checks_only.pinning is not None and checks_only.pinning["changes"] == [refused]
    # a goal-only automation has nothing to fall back on: skipped, saying why
    skipped = world.run(goal_only())
    assert (skipped.status, skipped.finding) == (Status.SKIPPED, None)
    assert skipped.error is not None and skipped.error.endswith(
        "its pinned plan was not taken: a pinned query's result differs from when the plan was made"
    )


def test_without_an_llm_a_plan_still_decides_while_its_evidence_holds(tmp_path: Path) -> None:
    with agent() as llm:
        world = World(tmp_path, llm)
        first = world.run(goal_only())
    world.settings.llm = LLMSettings()
    pinned = world.run(goal_only())
    assert (pinned.finding, pinned.finding_source) == (Finding.CLEAR, FindingSource.PINNED)
    assert pinned.pinning is not None and pinned.pinning["from_run"] == first.run_id


@pytest.mark.slow
def test_a_false_positive_verdict_sends_the_next_run_to_the_agent(tmp_path: Path) -> None:
    from worker.review.actions import ActionRequest, record
    from worker.review.vocabulary import ActionKind, ResolveReason

    with agent() as llm:
        world = World(tmp_path, llm)
        world.run(goal_only())
        pinned = world.run(goal_only())
        resolve = ActionRequest(ActionKind.RESOLVE, reason=ResolveReason.FALSE_POSITIVE)
        record(world.store, pinned.run_id or 0, resolve, actor="alice", now=dt.datetime.now(dt.UTC))
        asked = world.run(goal_only())
        assert world.calls() == 4
        again = world.run(goal_only())
        assert world.calls() == 4
    assert pinned.finding_source == FindingSource.PINNED
    assert asked.pinning is not None and asked.pinning["reason"] == (
        f"ops resolved run {pinned.run_id} as false_positive since the last run"
    )
    assert again.pinning is not None and again.pinning["from_run"] == asked.run_id


@pytest.mark.slow
def test_an_unreadable_plan_row_asks_the_agent_and_is_replaced(tmp_path: Path) -> None:
    with agent() as llm:
        world = World(tmp_path, llm)
        world.run(goal_only())
        with world.store.session() as session:
            session.execute(update(PinnedPlanRow).values(queries=[{"id": "Q1"}]))
        assert current_plan(world.store, "no-negative-orders") is None
        asked = world.run(goal_only())
        assert world.calls() == 4
        pinned = world.run(goal_only())
        assert world.calls() == 4
    assert asked.finding_source == FindingSource.AGENT and asked.pinning is not None
    assert (asked.pinning["reason"], asked.pinning["new_plan"]) == ("no pinned plan yet", True)
    assert pinned.pinning is not None and pinned.pinning["from_run"] == asked.run_id


@pytest.mark.slow
def test_a_plan_resting_on_a_constant_query_is_never_pinned(tmp_path: Path) -> None:
    constant = "SELECT 0 AS negatives"
    with FakeLLM(default=one_query_agent({"no-negative-orders": constant})) as llm:
        world = World(tmp_path, llm)
        first = world.run(goal_only())
        write_orders(world.db, [(1, 10.0, False), *((i, -1.0, False) for i in range(2, 52))])
        second = world.run(goal_only())
        assert world.calls() == 4  # asked again: the constant plan was never kept
    assert first.pinning is not None and first.pinning["new_plan"] is False
    assert current_plan(world.store, "no-negative-orders") is None
    assert second.finding_source == FindingSource.AGENT


def test_reads_a_table() -> None:
    assert reads_a_table("SELECT count(*) FROM orders WHERE amount < 0")
    assert reads_a_table("WITH o AS (SELECT * FROM orders) SELECT count(*) FROM o")
    assert not reads_a_table("SELECT 1")
    assert not reads_a_table("WITH t AS (SELECT 1 AS x) SELECT x FROM t")
    assert not reads_a_table("SELECT * FROM (VALUES (1), (2)) AS v(x)")
