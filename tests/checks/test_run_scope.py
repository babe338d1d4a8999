"""A check that could not look at any data, through the real run path: never Clear, said everywhere.

The run's finding and summary, ``--json``, the store, the second opinion's
state and the alert all carry the not-evaluated check and its reason.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from checks.automation.model import Automation
from checks.fakes.decision_server import FakeDecision
from checks.fakes.llm_server import FakeLLM, Step
from checks.opinion.decision_model import read_untrusted_state
from checks.run import SourcePool
from checks.run_lifecycle import run_and_store
from checks.settings.alerts import EventKind
from checks.settings.config import Settings
from checks.settings.decision import DecisionSettings
from checks.settings.llm import LLMSettings
from checks.settings.review import ReviewSettings
from checks.settings.sources import DuckDBSource, SQLAlchemySource
from checks.store.incidents import AlertEvent
from checks.store.store import Store
from worker.alerts.delivery import build_alert
from worker.web import create_app

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


@pytest.mark.slow
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
    assert report.summary.splitlines()[5:7] == [
        "- NOT EVALUATED: **no negative amount** — 0 rows in scope: orders where name = 'Diana' "
        "(expected == 0) [C1]",
        "- NOT EVALUATED: **no refund row** — table empty_t has 0 rows (expected == 0)",
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

    alert = build_alert(stored, AlertEvent(EventKind.NEEDS_ATTENTION), settings)
    assert alert.not_evaluated == (
        "no negative amount: 0 rows in scope: orders where name = 'Diana'",
        "no refund row: table empty_t has 0 rows",
    )
    assert ("Not evaluated", "; ".join(alert.not_evaluated)) in alert.facts()
    assert alert.facts()[1][0] == "Not evaluated"  # right after the finding: never cut first


def shop_settings(tmp_path: Path, shop_duckdb_path: Path, shop_pg: str, **extra: Any) -> Settings:
    """Settings over the shop on DuckDB (``shop``) and PostgreSQL (``shop_pg``)."""
    return Settings(
        store_url=f"sqlite:///{tmp_path}/lookout.db",
        cache_dir=str(tmp_path / "cache"),
        sources={
            "shop": DuckDBSource(type="duckdb", database=str(shop_duckdb_path)),
            "shop_pg": SQLAlchemySource(type="sqlalchemy", url=shop_pg),
        },
        **extra,
    )


@pytest.mark.parametrize("source", ["shop", "shop_pg"])
def test_an_agents_clear_is_overridden_by_a_not_evaluated_check(
    source: str, tmp_path: Path, shop_duckdb_path: Path, shop_pg: str
) -> None:
    script: list[Step] = [
        {
            "tool_calls": [
                {
                    "name": "submit_report",
                    "arguments": {
                        "finding": "clear",
                        "summary": "No order of Diana's is negative [C1].",
                        "evidence": ["C1"],
                        "confidence": "high",
                    },
                }
            ]
        }
    ]
    with FakeLLM(script) as fake:
        settings = shop_settings(
            tmp_path,
            shop_duckdb_path,
            shop_pg,
            llm=LLMSettings(base_url=fake.base_url, model="fake-model", max_retries=0),
        )
        store = Store(settings.store_url)
        with SourcePool(settings) as pool:
            report = run_and_store(
                automation().model_copy(update={"source": source}), settings, pool, store
            )
        prompt = json.dumps(fake.chat_requests[0]["messages"])
    # The agent was shown the check as not evaluated, with its reason ...
    assert "not_evaluated" in prompt and "0 rows in scope: orders where name = 'Diana'" in prompt
    # ... and its Clear does not stand against it.
    assert (report.status, report.finding, report.finding_source) == (
        "completed",
        "needs_attention",
        "override",
    )
    assert report.summary.startswith(
        "No order of Diana's is negative [C1].\n\n**Overridden by Lookout — Needs attention:** "
        "the agent reported Clear, but declared checks are authoritative and "
        "**no negative amount** was not evaluated (0 rows in scope: orders where name = "
        "'Diana') [C1]; **no refund row** was not evaluated (table empty_t has 0 rows)."
    )
    store.close()


def test_the_report_page_shows_each_not_evaluated_check_and_why(
    tmp_path: Path, shop_duckdb_path: Path, shop_pg: str
) -> None:
    review = ReviewSettings(allowed_hosts=["testserver"])  # the Host TestClient sends
    settings = shop_settings(tmp_path, shop_duckdb_path, shop_pg, review=review)
    store = Store(settings.store_url)
    with SourcePool(settings) as pool:
        report = run_and_store(automation(), settings, pool, store)
    app = create_app(settings, store=store, local=True)
    client = TestClient(app, client=("127.0.0.1", 5000))
    page = client.get(f"/runs/{report.run_id}")
    assert page.status_code == 200
    rows = re.findall(r"<tr[^>]*>(.*?)</tr>", page.text, re.DOTALL)
    cells = [html.unescape(" ".join(re.sub(r"<[^>]+>", " ", row).split())) for row in rows]
    first = cells.index("no negative amount == 0 NULL not evaluated C1")
    assert cells[first + 1 : first + 3] == [
        "0 rows in scope: orders where name = 'Diana'",
        "rows_in_scope 0 · below_min 0 · above_max 0 · null_values 0 · compared violations",
    ]
    second = cells.index("no refund row == 0 NULL not evaluated")
    assert cells[second + 1 : second + 3] == [
        "table empty_t has 0 rows",
        "orders exist > 0 5 passed C3",
    ]
    store.close()
