"""The second opinion through the real run path: stored with the run, flags beside the finding."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from checks.automation.model import Automation
from checks.fakes.decision_server import FakeDecision
from checks.run import SourcePool
from checks.run_lifecycle import run_and_store
from checks.settings.config import Settings
from checks.settings.decision import DecisionSettings
from checks.settings.sources import DuckDBSource
from checks.store.store import Store

URGENT = {
    "probabilities": {"nothing_to_do": 0.05, "worth_a_look": 0.15, "act_soon": 0.3, "act_now": 0.5}
}
CALM = {
    "probabilities": {"nothing_to_do": 0.7, "worth_a_look": 0.2, "act_soon": 0.05, "act_now": 0.05}
}


def automation() -> Automation:
    return Automation.model_validate(
        {
            "name": "no-negative-orders",
            "source": "shop",
            "goal": "No order has a negative amount.",
            "instructions": "Refunds are stored as negative amounts and are allowed.",
            "checks": [
                {
                    "name": "negative non-refund orders",
                    "sql": "SELECT id, amount FROM orders "
                    "WHERE amount < 0 AND NOT refund ORDER BY id",
                    "expect": "empty",
                }
            ],
            "path": "inline.yaml",
            "line": 1,
        }
    )


def write_orders(path: Path, rows: list[tuple[int, float, bool]]) -> None:
    with duckdb.connect(str(path)) as conn:
        conn.execute(
            "CREATE OR REPLACE TABLE orders (id INTEGER, amount DECIMAL(10,2), refund BOOLEAN)"
        )
        conn.executemany("INSERT INTO orders VALUES (?, ?, ?)", rows)


def settings_for(tmp_path: Path, db: Path, fake: FakeDecision | None) -> Settings:
    decision = (
        DecisionSettings(backend="systemone", base_url=fake.base_url, model="jev-latest")
        if fake
        else DecisionSettings()
    )
    return Settings(
        store_url=f"sqlite:///{tmp_path}/lookout.db",
        cache_dir=str(tmp_path / "cache"),
        sources={"shop": DuckDBSource(type="duckdb", database=str(db))},
        decision=decision,
    )


def run_once(settings: Settings, store: Store):  # type: ignore[no-untyped-def]
    with SourcePool(settings) as pool:
        return run_and_store(automation(), settings, pool, store)


def test_contradicted_report_then_changed_data(tmp_path: Path) -> None:
    db = tmp_path / "shop.duckdb"
    write_orders(db, [(1, 10.0, False), (2, -5.0, True)])
    steps = [
        # Run 1 is Clear, but the decision model thinks the goal is not met: disagreement.
        {"answers": {"goal_met": 0.1, "urgency": CALM}},
        # Run 2 needs attention; the decision model agrees and sees a change.
        {"answers": {"goal_met": 0.05, "same_as_last_run": 0.1, "urgency": URGENT}},
    ]
    with FakeDecision("systemone", script=steps) as fake:
        settings = settings_for(tmp_path, db, fake)
        store = Store(settings.store_url)
        first = run_once(settings, store)
        write_orders(db, [(1, 10.0, False), (2, -5.0, True), (3, -99.5, False)])
        second = run_once(settings, store)
        bodies = fake.bodies

    assert first.finding == "clear"
    stored_first = store.get_run(first.run_id)
    assert stored_first is not None and stored_first.second_opinion is not None
    op1 = stored_first.second_opinion
    assert op1["backend"] == "systemone"
    assert op1["goal_met"] == pytest.approx(0.1)
    assert op1["same_as_last_run"] is None
    assert op1["urgency"] == "nothing_to_do"
    assert op1["flags"] == ["double_check_disagrees"]
    assert op1["error"] is None
    assert sorted(bodies[0]["questions"]) == ["goal_met", "urgency"]  # first run: no comparison

    assert second.finding == "needs_attention"  # the decision model never changes the finding
    op2 = store.get_run(second.run_id).second_opinion  # type: ignore[union-attr]
    assert op2["flags"] == ["changed_since_last_run"]
    assert op2["urgency"] == "act_now"
    assert sorted(bodies[1]["questions"]) == ["goal_met", "same_as_last_run", "urgency"]
    assert [c["id"] for c in op2["evidence_diff"]["changed"]] == ["C1"]
    assert "-99.5" in bodies[1]["state"] or "-99.50" in bodies[1]["state"]
    # `lookout reports --flag …` filters on what the second opinion set.
    assert [r.run_id for r in store.list_runs(flag="double_check_disagrees")] == [first.run_id]
    assert [r.run_id for r in store.list_runs(flag="changed_since_last_run")] == [second.run_id]


@pytest.mark.slow
def test_backend_none_sets_only_the_deterministic_flag(tmp_path: Path) -> None:
    db = tmp_path / "shop.duckdb"
    write_orders(db, [(1, 10.0, False)])
    settings = settings_for(tmp_path, db, None)
    store = Store(settings.store_url)
    first = run_once(settings, store)
    write_orders(db, [(1, -10.0, False)])
    second = run_once(settings, store)
    assert first.second_opinion is not None and second.second_opinion is not None
    assert first.second_opinion["flags"] == []
    assert "no decision model is configured" in first.second_opinion["error"]
    assert second.second_opinion["flags"] == ["changed_since_last_run"]
    assert second.second_opinion["goal_met"] is None


@pytest.mark.slow
def test_unreachable_decision_model_is_no_opinion_never_agreement(tmp_path: Path) -> None:
    db = tmp_path / "shop.duckdb"
    write_orders(db, [(1, 10.0, False)])
    with FakeDecision("systemone", script=[{"delay_s": 3, "answers": {"goal_met": 0.9}}]) as fake:
        settings = settings_for(tmp_path, db, fake)
        settings.decision.timeout_s = 0.5
        report = run_once(settings, Store(settings.store_url))
    assert report.finding == "clear"
    assert report.second_opinion is not None
    assert report.second_opinion["goal_met"] is None
    assert report.second_opinion["flags"] == []
    assert "timed out" in report.second_opinion["error"]
