"""Pinning through the real entry point: run, run again (no LLM call), show, --fresh, pin.

The first test starts ``lookout`` as a child process (each command's smoke test of a real
process); the second runs it in this one (``tests.cli_support.run_lookout``).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
import yaml

from checks.automation.loader import load_automations
from checks.fakes.llm_server import FakeLLM, one_query_agent
from tests.checks.pinned.test_pinned_runs import NEGATIVES, write_orders
from tests.cli_support import run_lookout
from tests.paths import ROOT
from tests.worker.cli.test_agent_cli import lookout

GOAL = (
    "name: no-negative-orders\nsource: shop\ngoal: No order has a negative amount.\n"
    "instructions: Refunds are stored as negative amounts and are allowed.\n"
)


@pytest.mark.slow
def test_run_pins_show_cites_fresh_asks_and_pin_prints_checks(tmp_path: Path) -> None:
    db = tmp_path / "shop.duckdb"
    write_orders(db, [(1, 10.0, False), (2, -5.0, True)])
    automations = tmp_path / "automations"
    automations.mkdir()
    (automations / "orders.yaml").write_text(GOAL, encoding="utf-8")
    (automations / "other.yaml").write_text(GOAL.replace("no-negative", "other"), "utf-8")
    with FakeLLM(default=one_query_agent({"no-negative-orders": NEGATIVES})) as llm:
        config = tmp_path / "lookout.yaml"
        config.write_text(
            yaml.safe_dump(
                {
                    "store_url": f"sqlite:///{tmp_path}/lookout.db",
                    "cache_dir": str(tmp_path / "cache"),
                    "automations_dir": str(automations),
                    "sources": {"shop": {"type": "duckdb", "database": str(db)}},
                    "llm": {"base_url": llm.base_url, "model": "fake-model", "max_retries": 0},
                }
            ),
            encoding="utf-8",
        )

        def cli(*args: str) -> subprocess.CompletedProcess[str]:
            return subprocess.run(
                lookout(config, *args),
                cwd=ROOT,
                capture_output=True,
                text=True,
                timeout=120,
                env={**os.environ, "COLUMNS": "200"},
            )

        runs = []
        for flags in ([], [], ["--fresh"]):
            proc = cli("run", "no-negative-orders", "--json", *flags)
            assert proc.returncode == 0, proc.stdout + proc.stderr
            runs.append(json.loads(proc.stdout))
            runs[-1]["calls"] = len(llm.chat_requests)
        shown = cli("show", str(runs[1]["run_id"]))
        pinned = cli("pin", "no-negative-orders")
        none = cli("pin", "other-orders")
    assert [(r["finding_source"], r["calls"]) for r in runs] == [
        ("agent", 2),
        ("pinned", 2),
        ("agent", 4),
    ]
    assert runs[1]["pinning"]["from_run"] == runs[0]["run_id"] and runs[1]["agent"] is None
    assert runs[2]["pinning"]["reason"] == "a fresh run was asked for (--fresh)"
    assert shown.returncode == 0, shown.stderr
    assert "no-negative-orders — Clear (decided by pinned)" in shown.stdout
    made = runs[1]["pinning"]["made_at"][:16].replace("T", " ")
    assert (
        f"pinned plan of run {runs[0]['run_id']} (fake-model, {made} UTC): taken, the LLM was"
        " not asked"
    ) in shown.stdout
    assert pinned.returncode == 0, pinned.stderr
    assert pinned.stdout.startswith(
        f"# no-negative-orders: the pinned plan of run {runs[2]['run_id']} (fake-model, "
    )
    out = tmp_path / "pinned.yaml"
    out.write_text(pinned.stdout, encoding="utf-8")
    loaded = load_automations(out, known_sources={"shop"})
    assert loaded.errors == []
    (automation,) = loaded.automations
    assert [(c.name, c.sql, str(c.expect)) for c in automation.checks] == [
        (f"pinned Q1 of run {runs[2]['run_id']}", NEGATIVES, "empty")
    ]
    assert (none.returncode, none.stderr.strip()) == (
        2,
        "error: other-orders has no pinned plan: one is kept when the agent's report is "
        "accepted (an LLM configured, llm.pin_plans on)",
    )


@pytest.mark.slow
def test_without_an_llm_the_first_line_says_a_pinned_plan_still_decides(tmp_path: Path) -> None:
    """The line above the reports is true of them: here a goal-only automation's plan decides."""
    db = tmp_path / "shop.duckdb"
    write_orders(db, [(1, 10.0, False), (2, -5.0, True)])
    automations = tmp_path / "automations"
    automations.mkdir()
    (automations / "orders.yaml").write_text(GOAL, encoding="utf-8")
    settings = {
        "store_url": f"sqlite:///{tmp_path}/lookout.db",
        "cache_dir": str(tmp_path / "cache"),
        "automations_dir": str(automations),
        "sources": {"shop": {"type": "duckdb", "database": str(db)}},
    }
    with_llm, without = tmp_path / "with-llm.yaml", tmp_path / "without.yaml"
    without.write_text(yaml.safe_dump(settings), encoding="utf-8")

    def cli(config: Path, *args: str) -> subprocess.CompletedProcess[str]:
        return run_lookout(lookout(config, *args)[3:], {**os.environ, "COLUMNS": "300"})

    with FakeLLM(default=one_query_agent({"no-negative-orders": NEGATIVES})) as llm:
        llm_settings = {"base_url": llm.base_url, "model": "fake-model", "max_retries": 0}
        with_llm.write_text(yaml.safe_dump({**settings, "llm": llm_settings}), "utf-8")
        made = cli(with_llm, "run", "no-negative-orders")
    assert made.returncode == 0, made.stdout + made.stderr
    assert made.stdout.splitlines()[0] == (
        f"A pinned plan whose evidence holds decides a run, else the agent does (fake-model at "
        f"{llm.base_url}); a Clear never stands against a failed declared check, and the "
        "checks decide when the agent gives no valid report."
    )
    pinned = cli(without, "run", "no-negative-orders")
    assert pinned.returncode == 0, pinned.stdout + pinned.stderr
    lines = pinned.stdout.splitlines()
    assert lines[0] == (
        "No LLM is configured: a pinned plan whose evidence holds decides a run, else the "
        "declared checks do; a goal-only automation with no such plan is skipped."
    )
    assert lines[2].startswith("no-negative-orders — Clear (decided by pinned) · run 2 · ")
    fresh = cli(without, "run", "no-negative-orders", "--fresh")
    assert fresh.returncode == 0, fresh.stdout + fresh.stderr
    lines = fresh.stdout.splitlines()
    assert lines[0] == (
        "No LLM is configured: the declared checks decide each run, and goal-only "
        "automations are skipped."
    )
    assert lines[2].startswith("no-negative-orders — Skipped · run 3 · ")
    # the agent's walkthrough quotes both first lines
    walkthrough = " ".join((ROOT / "docs" / "agent.md").read_text(encoding="utf-8").split())
    assert f'With no LLM set, `lookout run` says "{pinned.stdout.splitlines()[0]}"' in walkthrough
    assert f'`llm.pin_plans: false`: "{lines[0]}")' in walkthrough
