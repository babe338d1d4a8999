"""A pinned plan as declared checks: exact YAML that loads back and keeps the outcomes."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from checks.automation.loader import load_automations
from checks.declared.check import run_checks
from checks.fakes.llm_server import FakeLLM, one_query_agent
from checks.pinned.as_checks import plan_as_yaml
from checks.report import CheckOutcome
from checks.run import SourcePool
from checks.store.plans import current_plan
from tests.checks.pinned.test_pinned_runs import CHECKED, World, goal_only, write_orders

NEGATIVE_ROWS = "SELECT id, amount FROM orders WHERE amount < 0 ORDER BY id"
TOTAL = "SELECT sum(amount) AS total FROM orders"


def pinned_yaml(tmp_path: Path, sql: str, **extra: object) -> tuple[World, str]:
    with FakeLLM(default=one_query_agent({"no-negative-orders": sql})) as llm:
        world = World(tmp_path, llm)
        world.run(goal_only(**extra))
    plan = current_plan(world.store, "no-negative-orders")
    assert plan is not None
    return world, plan_as_yaml(plan, goal_only(**extra))


def outcomes(world: World, text: str, tmp_path: Path) -> dict[str, str]:
    path = tmp_path / "pinned.yaml"
    path.write_text(text, encoding="utf-8")
    loaded = load_automations(path, known_sources={"shop"})
    assert loaded.errors == []
    (automation,) = loaded.automations
    with SourcePool(world.settings) as pool:
        checks, _ = run_checks(
            automation, pool.get("shop"), world.settings.limits, deadline=time.monotonic() + 60
        )
    return {c.name: str(c.outcome) for c in checks}


@pytest.mark.slow
def test_a_number_becomes_an_exact_check_that_passes_then_fails(tmp_path: Path) -> None:
    world, text = pinned_yaml(tmp_path, TOTAL)
    assert text.splitlines()[:4] == [
        "# no-negative-orders: the pinned plan of run 1 (fake, "
        + text.splitlines()[0].split("(fake, ", 1)[1],
        "# as declared checks. The plan's finding: needs_attention.",
        "# Each 'pinned' check expects what its query returned when the plan was made:",
        "# it passes while the data is as the plan saw it and fails when it moves.",
    ]
    assert "# it is right. Edit each expect to what must hold before relying on them" in text
    assert text.endswith(
        "checks:\n- name: pinned Q1 of run 1\n  sql: SELECT SUM(amount) AS total FROM orders\n"
        "  expect: == 5.00\n"
    )  # 10.00 + -5.00, a DECIMAL sum, as the guard regenerated the SQL
    assert outcomes(world, text, tmp_path) == {"pinned Q1 of run 1": str(CheckOutcome.PASSED)}
    write_orders(world.db, [(1, 10.0, False), (2, -5.5, True)])
    assert outcomes(world, text, tmp_path) == {"pinned Q1 of run 1": str(CheckOutcome.FAILED)}


@pytest.mark.slow
def test_rows_become_a_count_and_declared_checks_keep_their_outcome(tmp_path: Path) -> None:
    world, text = pinned_yaml(tmp_path, NEGATIVE_ROWS, **CHECKED)
    assert (
        "- name: pinned Q1 of run 1\n  sql: |-\n    SELECT count(*) AS pinned_rows FROM (\n"
        "    SELECT id, amount FROM orders WHERE amount < 0 ORDER BY id\n    ) AS pinned\n"
        "  expect: == 1\n"
    ) in text
    assert outcomes(world, text, tmp_path) == {
        "negative non-refund orders": str(CheckOutcome.PASSED),
        "pinned Q1 of run 1": str(CheckOutcome.PASSED),
    }
    write_orders(world.db, [(1, 10.0, False), (2, -5.0, True), (3, -1.0, True)])
    assert outcomes(world, text, tmp_path) == {
        "negative non-refund orders": str(CheckOutcome.PASSED),
        "pinned Q1 of run 1": str(CheckOutcome.FAILED),
    }


@pytest.mark.slow
def test_no_rows_become_an_empty_check(tmp_path: Path) -> None:
    world, text = pinned_yaml(tmp_path, NEGATIVE_ROWS.replace("amount < 0", "amount < -100"))
    assert "The plan found a problem" not in text  # a Clear plan
    assert text.endswith("  expect: empty\n  allow_empty: true\n")
    assert outcomes(world, text, tmp_path) == {"pinned Q1 of run 1": str(CheckOutcome.PASSED)}


def test_the_yaml_holds_only_what_differs_from_the_defaults(tmp_path: Path) -> None:
    typed = {"checks": [{"name": "ids present", "missing": {"table": "orders", "column": "id"}}]}
    world, text = pinned_yaml(tmp_path, TOTAL, timeout_s=60, **typed)
    body = text.split("# it is right. Edit each expect to what must hold before relying on them")
    assert body[1].split("\n", 1)[1] == (
        "name: no-negative-orders\n"
        "source: shop\n"
        "goal: No order has a negative amount.\n"
        "instructions: Refunds are stored as negative amounts and are allowed.\n"
        "timeout_s: 60.0\n"
        "checks:\n"
        "- name: ids present\n"
        "  expect: == 0\n"
        "  missing:\n"
        "    table: orders\n"
        "    column: id\n"
        "- name: pinned Q1 of run 1\n"
        "  sql: SELECT SUM(amount) AS total FROM orders\n"
        "  expect: == 5.00\n"
    )  # no filter: null, missing_values: [], enabled: true, catchup: latest, ...
    assert outcomes(world, text, tmp_path) == {
        "ids present": str(CheckOutcome.PASSED),
        "pinned Q1 of run 1": str(CheckOutcome.PASSED),
    }
