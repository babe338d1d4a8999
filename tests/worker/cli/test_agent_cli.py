"""The agent through the real entry point: ``run --json``, ``show --trace``, and a crash.

In this process (``tests.cli_support.run_lookout``), except the crash: a child process
killed halfway.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from checks.agent.trace import read_trace
from checks.fakes.llm_server import FakeLLM, Step
from checks.report import Status
from checks.settings.config import Settings, default_config_data
from checks.store.store import Store
from tests.cli_support import run_lookout
from tests.paths import ROOT

KEY = "sk-cli-test-SECRET-7777"
RATE_SQL = "SELECT round(avg(CASE WHEN dep_time IS NULL THEN 1 ELSE 0 END), 4) AS rate FROM flights"


def setup(tmp_path: Path, flights: Settings, fake: FakeLLM) -> tuple[Path, str]:
    """Write a config (the flights source, a store, the fake LLM) and one goal-only automation."""
    automations = tmp_path / "automations"
    automations.mkdir()
    (automations / "probe.yaml").write_text(
        "name: cancellation-probe\nsource: flights\n"
        "goal: Less than 5% of flights were cancelled.\n",
        encoding="utf-8",
    )
    store_url = f"sqlite:///{tmp_path}/lookout.db"
    config: dict[str, Any] = {
        **default_config_data(),
        "store_url": store_url,
        "cache_dir": flights.cache_dir,
        "automations_dir": str(automations),
        "llm": {"base_url": fake.base_url, "api_key": KEY, "model": "fake-model", "max_retries": 0},
    }
    path = tmp_path / "lookout.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path, store_url


def lookout(config: Path, *args: str) -> list[str]:
    """The child process's command line; ``[3:]`` of it is what ``run_lookout`` takes."""
    return [
        sys.executable,
        "-c",
        "from worker.cli.app import main; main()",
        "--config",
        str(config),
        *args,
    ]


def test_run_json_fills_agent_and_show_trace_prints_jsonl(
    tmp_path: Path, flights_settings: Settings
) -> None:
    report = {
        "finding": "clear",
        "summary": "2.45% [Q1].",
        "evidence": ["Q1"],
        "confidence": "high",
    }
    script: list[Step] = [
        {
            "tool_calls": [{"name": "execute_query", "arguments": {"sql": RATE_SQL}}],
            "usage": {"cost": 0.002},
        },
        {
            "tool_calls": [{"name": "submit_report", "arguments": report}],
            "usage": {"cost": 0.001},
        },
    ]
    with FakeLLM(script) as fake:
        config, _ = setup(tmp_path, flights_settings, fake)
        proc = run_lookout(lookout(config, "run", "cancellation-probe", "--json")[3:])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    doc = json.loads(proc.stdout)
    assert (doc["status"], doc["finding"], doc["finding_source"]) == ("completed", "clear", "agent")
    agent = doc["agent"]
    assert {k: agent[k] for k in ("model", "steps", "tool_calls", "error")} == {
        "model": "fake-model", "steps": 2, "tool_calls": 2, "error": None,
    }  # fmt: skip
    assert agent["input_tokens"] > 0 and agent["output_tokens"] > 0
    assert agent["cost_usd"] == pytest.approx(0.003)
    assert [e["id"] for e in doc["evidence"]] == ["Q1"]

    shown = run_lookout(lookout(config, "show", str(doc["run_id"]), "--trace")[3:])
    assert shown.returncode == 0, shown.stderr
    events = [json.loads(line) for line in shown.stdout.splitlines()]
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    assert events[0]["kind"] == "agent_start" and events[-1]["kind"] == "agent_end"
    assert KEY not in shown.stdout


@pytest.mark.slow
def test_a_crash_halfway_keeps_the_trace_written_so_far(
    tmp_path: Path, flights_settings: Settings
) -> None:
    script: list[Step] = [
        {"tool_calls": [{"name": "list_data_sets", "arguments": {"query": None}}]},
        {"content": "too late", "delay_s": 10},
    ]
    with FakeLLM(script) as fake:
        config, store_url = setup(tmp_path, flights_settings, fake)
        proc = subprocess.Popen(
            lookout(config, "run", "cancellation-probe"),
            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        try:
            deadline = time.monotonic() + 60
            while len(fake.requests) < 2 and time.monotonic() < deadline:
                time.sleep(0.05)
            assert len(fake.requests) == 2
        finally:
            proc.kill()  # SIGKILL: no cleanup runs
            proc.wait(timeout=10)
    store = Store(store_url)
    try:
        (run,) = store.list_runs()
        assert run.status == Status.RUNNING and run.run_id is not None
        kinds = [e.kind for e in read_trace(store, run.run_id)]
    finally:
        store.close()
    assert kinds == [
        "agent_start",
        "model_request",
        "model_response",
        "tool_call",
        "tool_result",
        "model_request",
    ]


def test_a_summary_echoing_secrets_is_redacted_before_it_is_printed_or_stored(
    tmp_path: Path, flights_settings: Settings
) -> None:
    hook = "https://hooks.slack.com/services/T000/B000/XXXXXXXXXXXXXXXXXXXXXXXX"
    report = {
        "finding": "clear",
        "summary": f"2.45% [Q1]. My key is {KEY}; post to {hook}.",
        "evidence": ["Q1"],
        "confidence": "high",
    }
    script: list[Step] = [
        {"tool_calls": [{"name": "execute_query", "arguments": {"sql": RATE_SQL}}]},
        {"tool_calls": [{"name": "submit_report", "arguments": report}]},
    ]
    with FakeLLM(script) as fake:
        config, store_url = setup(tmp_path, flights_settings, fake)
        data = yaml.safe_load(config.read_text(encoding="utf-8"))
        data["channels"] = {"ops": {"type": "slack", "url": hook}}
        config.write_text(yaml.safe_dump(data), encoding="utf-8")
        ran = run_lookout(lookout(config, "run", "cancellation-probe")[3:])
    assert ran.returncode == 0, ran.stdout + ran.stderr
    store = Store(store_url)
    [stored] = store.list_runs()
    store.close()
    shown = run_lookout(lookout(config, "show", str(stored.run_id))[3:])
    for text in (ran.stdout, shown.stdout, stored.summary):
        assert KEY not in text and "XXXXXXXXXXXXXXXX" not in text, text
        assert "My key is ***" in text
