"""list_data_sets on a large catalog: the decision model ranks it, the agent sees the top 5."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import duckdb
import pytest

from checks.agent.prompt import UNTRUSTED_LABEL
from checks.automation.model import Automation
from checks.fakes.decision_server import FakeDecision
from checks.fakes.llm_server import FakeLLM
from checks.fakes.synthetic_catalog import (
    INSTRUCTION_LIKE_NAME,
    CatalogScorer,
    family,
    synthetic_catalog,
)
from checks.opinion.decision_model import Backend
from checks.run import SourcePool
from checks.run_lifecycle import run_and_store
from checks.settings.config import Settings
from checks.settings.decision import DecisionSettings
from checks.settings.llm import LLMSettings
from checks.settings.sources import DuckDBSource
from checks.store.store import Store

GOAL = "Every order has a positive amount."


def build_catalog(path: Path, n: int) -> list[str]:
    names = [d.name for d in synthetic_catalog(n)]
    with duckdb.connect(str(path)) as conn:
        for d in synthetic_catalog(n):
            cols = ", ".join(f'"{c.name}" {c.type}' for c in d.columns)
            conn.execute(f'CREATE TABLE "{d.name}" ({cols})')
        # One real order, so the declared check looks at data (an empty table is not evaluated).
        conn.execute("INSERT INTO orders (order_id, amount) VALUES (1, 12.50)")
    return names


def relevance(name: str) -> float:
    if name == "orders":
        return 1.0
    return 0.5 if family(name) == "orders" else 0.0


def automation() -> Automation:
    return Automation.model_validate(
        {
            "name": "positive-orders",
            "source": "shop",
            "goal": GOAL,
            "checks": [
                {
                    "name": "non-positive",
                    "sql": "SELECT count(*) FROM orders WHERE amount <= 0",
                    "expect": "== 0",
                }
            ],
            "path": "inline.yaml",
            "line": 1,
        }
    )


def listed_names(request: dict[str, Any]) -> list[str]:
    tool = next(m for m in request["messages"] if m["role"] == "tool")["content"]
    body = re.fullmatch(re.escape(UNTRUSTED_LABEL) + r":\n```json\n(.*)\n```", tool, re.S)
    assert body
    listed = json.loads(body.group(1))
    assert listed["partial"] is True and listed["total"] == 50 and listed["shown"] == 5
    return [d["name"] for d in listed["data_sets"]]


SCRIPT = [
    {"tool_calls": [{"name": "list_data_sets", "arguments": {}}]},
    {
        "tool_calls": [
            {
                "name": "submit_report",
                "arguments": {
                    "finding": "clear",
                    "summary": "No order has a non-positive amount [C1].",
                    "evidence": ["C1"],
                    "confidence": "high",
                },
            }
        ]
    },
]


def run(tmp_path: Path, decision: DecisionSettings) -> tuple[dict[str, Any], list[str]]:
    db = tmp_path / "shop.duckdb"
    build_catalog(db, 50)
    with FakeLLM(SCRIPT) as llm:
        settings = Settings(
            store_url=f"sqlite:///{tmp_path}/lookout.db",
            cache_dir=str(tmp_path / "cache"),
            sources={"shop": DuckDBSource(type="duckdb", database=str(db))},
            llm=LLMSettings(base_url=llm.base_url, model="fake-model"),
            decision=decision,
        )
        with SourcePool(settings) as pool:
            report = run_and_store(automation(), settings, pool, Store(settings.store_url))
        names = listed_names(llm.chat_requests[1])
    assert report.finding == "clear" and report.finding_source == "agent"
    assert report.agent is not None
    return report.agent, names


def test_decision_model_ranks_the_source_table_first(tmp_path: Path) -> None:
    scorer = CatalogScorer(Backend.SYSTEMONE, relevance)
    with FakeDecision("systemone", default=scorer) as fake:
        agent, names = run(
            tmp_path,
            DecisionSettings(backend="systemone", base_url=fake.base_url, model="jev-latest"),
        )
    assert names[0] == "orders"
    assert all(family(n) == "orders" for n in names)
    assert INSTRUCTION_LIKE_NAME not in names
    (ranking,) = agent["rankings"]
    assert ranking["method"] == "decision_model" and ranking["candidates"] == 50
    assert ranking["fallback_reason"] is None


@pytest.mark.slow
def test_timeout_falls_back_to_lexical_and_says_so(tmp_path: Path) -> None:
    slow = CatalogScorer(Backend.SYSTEMONE, relevance, delay_s=2.0)
    with FakeDecision("systemone", default=slow) as fake:
        agent, names = run(
            tmp_path,
            DecisionSettings(
                backend="systemone", base_url=fake.base_url, model="jev-latest", timeout_s=0.3
            ),
        )
    (ranking,) = agent["rankings"]
    assert ranking["method"] == "lexical_fallback"
    assert "timed out" in ranking["fallback_reason"]
    assert names[0] == "orders"  # the goal names orders: lexical relevance still finds it
    assert INSTRUCTION_LIKE_NAME not in names


def test_no_decision_model_means_lexical_and_the_run_says_so(tmp_path: Path) -> None:
    agent, names = run(tmp_path, DecisionSettings(backend="none"))
    (ranking,) = agent["rankings"]
    assert (ranking["method"], ranking["backend"]) == ("lexical_fallback", "none")
    assert names[0] == "orders"
