"""A check that could not look at any data, through the real run path: never Clear, said everywhere.

The run's finding and summary, ``--json``, the store, the second opinion's
state and the alert all carry the not-evaluated check and its reason.
"""

from __future__ import annotations

from pathlib import Path

from checks.automation.model import Automation
from checks.fakes.decision_server import FakeDecision
from checks.opinion.decision_model import read_untrusted_state
from checks.run import SourcePool, run_and_store
from checks.settings.alerts import EventKind
from checks.settings.config import Settings
from checks.settings.decision import DecisionSettings
from checks.settings.sources import DuckDBSource
from checks.store.incidents import PlannedEvent
from checks.store.store import Store
from worker.alerts.delivery import build_alert

CALM = {
    "probabilities": {"nothing_to_do": 0.7, "worth_a_look": 0.2, "act_soon": 0.05, "act_now": 0.05}
}


def automation() -> Automation:
    return Automation.model_validate(
        {
            "name": "diana-orders",
            "source": "shop",
            "goal": "No order of Diana's has a negative amount.",
            "checks": [
                {
                    "name": "no negative amount",
                    "range": {
                        "table": "orders",
                        "column": "amount",
                        "min": 0,
                        "filter": "name = 'Diana'",
                    },
                },
                {
                    "name": "no refund row",
                    "sql": "SELECT count(*) FROM empty_t",
                    "expect": "== 0",
                },
                {"name": "orders exist", "row_count": {"table": "orders"}},
            ],
            "path": "inline.yaml",
            "line": 1,
        }
    )


def test_not_evaluated_makes_the_run_need_attention_and_says_why(
    tmp_path: Path, shop_duckdb_path: Path
) -> None:
    script = [{"answers": {"goal_met": 0.5, "urgency": CALM}}]
    with FakeDecision("systemone", script=script) as fake:
        settings = Settings(
            store_url=f"sqlite:///{tmp_path}/lookout.db",
            cache_dir=str(tmp_path / "cache"),
            sources={"shop": DuckDBSource(type="duckdb", database=str(shop_duckdb_path))},
            decision=DecisionSettings(backend="systemone", base_url=fake.base_url, model="jev"),
        )
        store = Store(settings.store_url)
        with SourcePool(settings) as pool:
            report = run_and_store(automation(), settings, pool, store)
        state = fake.bodies[0]["state"]

    assert (report.status, report.finding, report.finding_source) == (
        "completed",
        "needs_attention",
        "checks",
    )
    assert report.summary.splitlines()[:4] == [
        "**Needs attention** — 2 not evaluated of 3 checks.",
        "",
        "Not evaluated: **no negative amount** — 0 rows in scope: orders where name = 'Diana'.",
        "Not evaluated: **no refund row** — table empty_t has 0 rows.",
    ]
    doc = report.to_dict()
    first, second, third = doc["checks"]
    assert (first["outcome"], first["passed"], first["value"], first["kind"]) == (
        "not_evaluated",
        None,
        None,
        "range",
    )
    assert first["metrics"]["rows_in_scope"] == 0
    assert (second["outcome"], second["reason"]) == ("not_evaluated", "table empty_t has 0 rows")
    assert (third["outcome"], third["value"], third["metrics"]) == (
        "passed",
        5,
        {"rows_in_scope": 5, "compared": "rows_in_scope"},
    )
    stored = store.get_run(report.run_id or 0)
    assert stored is not None
    assert [c.to_dict() for c in stored.checks] == doc["checks"]

    # The decision model sees each check's outcome and its scope counts.
    payload = read_untrusted_state(state)
    seen = payload["this_run"]["checks"]
    assert [(c["name"], c["outcome"], c["metrics"].get("rows_in_scope")) for c in seen] == [
        ("no negative amount", "not_evaluated", 0),
        ("no refund row", "not_evaluated", None),
        ("orders exist", "passed", 5),
    ]
    assert seen[0]["reason"] == "0 rows in scope: orders where name = 'Diana'"

    alert = build_alert(stored, PlannedEvent(EventKind.NEEDS_ATTENTION), settings)
    assert alert.not_evaluated == (
        "no negative amount: 0 rows in scope: orders where name = 'Diana'",
        "no refund row: table empty_t has 0 rows",
    )
    assert ("Not evaluated", "; ".join(alert.not_evaluated)) in alert.facts()
    assert alert.facts()[1][0] == "Not evaluated"  # right after the finding: never cut first
