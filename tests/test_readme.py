"""The README tells the truth: its example runs, every command it lists exists and has help."""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
from fractions import Fraction
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from checks.automation.loader import load_automations
from checks.declared.wording import describe_value
from checks.run import SourcePool, run_automation
from checks.settings.config import ENV_OVERRIDES, Settings
from worker.cli.app import app

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
# The agent's walkthrough with the fake LLM, which the README links to.
AGENT = (ROOT / "docs" / "agent.md").read_text(encoding="utf-8")


def test_readme_automation_example_runs(tmp_path: Path, flights_settings: Settings) -> None:
    block = re.search(r"```yaml\n(name: planes-registry-coverage.*?)```", README, re.S)
    assert block is not None
    shipped = ROOT / "automations" / "planes-registry-coverage.yaml"
    # the README shows the shipped file, comments aside
    assert yaml.safe_load(block.group(1)) == yaml.safe_load(shipped.read_text(encoding="utf-8"))
    (tmp_path / "example.yaml").write_text(block.group(1), encoding="utf-8")
    loaded = load_automations(tmp_path, known_sources={"flights"})
    assert loaded.errors == []
    with SourcePool(flights_settings) as pool:
        report = run_automation(loaded.automations[0], flights_settings, pool)
    assert report.finding == "needs_attention"
    assert [c.value for c in report.checks] == [721, float(Fraction(50094, 334264) * 100), 0]
    assert [c.outcome for c in report.checks] == ["failed", "failed", "passed"]
    assert report.checks[1].metrics["orphans"] == 50094
    assert "50,094 of the 334,264" in README and "14.99 %" in README
    assert report.evidence[0].rows[0] == ["N725MQ", "MQ", 575]
    # the percent the README quotes is the one the report's line shows
    assert describe_value(report.checks[1]) == (
        "50,094 rows with no match (721 distinct keys), 0 NULL keys skipped,"
        " in 334,264 rows (14.99 %)"
    )


def test_readme_first_automation_runs_clear(tmp_path: Path, flights_settings: Settings) -> None:
    block = re.search(r"```yaml\n((?: {3})?name: early-departures.*?)```", README, re.S)
    assert block is not None
    text = "\n".join(line.removeprefix("   ") for line in block.group(1).splitlines())
    (tmp_path / "early-departures.yaml").write_text(text, encoding="utf-8")
    loaded = load_automations(tmp_path, known_sources={"flights"})
    assert loaded.errors == []
    with SourcePool(flights_settings) as pool:
        report = run_automation(loaded.automations[0], flights_settings, pool)
    assert report.finding == "clear"
    assert [c.outcome for c in report.checks] == ["passed", "passed"]
    assert report.checks[0].value == 0
    assert report.checks[1].metrics == {
        "rows_in_scope": 336776,
        "missing": 8255,
        "missing_percent": 100 * 8255 / 336776,
        "compared": "missing",
    }
    assert "8,255 of 336,776 flights (2.45 %)" in README
    assert describe_value(report.checks[1]) == "8,255 of 336,776 rows missing (2.45 %)"


def test_every_command_is_in_the_readme_and_has_help() -> None:
    runner = CliRunner()
    names = [c.name or c.callback.__name__ for c in app.registered_commands if c.callback]
    assert names
    for name in names:
        assert f"lookout {name}" in README, name
        result = runner.invoke(app, [name, "--help"])
        assert result.exit_code == 0, result.output
        assert "Usage" in result.output


def test_every_environment_variable_is_in_the_readme() -> None:
    for var in ENV_OVERRIDES:
        short = var.rsplit("_", 1)[-1]
        assert var in README or f"_{short}" in README, var


def fenced(lang: str, page: str = README) -> list[str]:
    """A page's fenced blocks of one language (``""`` for plain ones), in order."""
    return [
        m.group(2)
        for m in re.finditer(r"^```(\w*)\n(.*?)^```$", page, re.S | re.M)
        if m.group(1) == lang
    ]


def one(blocks: list[str], start: str) -> str:
    [found] = [b for b in blocks if b.startswith(start)]
    return found


def fresh_clone(tmp_path: Path) -> Path:
    """The repository's tracked files, as a fresh clone has them, with this checkout's .venv.

    The .venv is linked, not rebuilt (``make`` is told it is up to date), so the
    code that runs is this checkout's.
    """
    clone = tmp_path / "clone"
    listed = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
    ).stdout.decode()
    for name in filter(None, listed.split("\0")):
        source = ROOT / name
        if source.is_file():
            (clone / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, clone / name)
    (clone / ".venv").symlink_to(ROOT / ".venv")
    return clone


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.slow
def test_the_walkthrough_runs_as_written_on_a_fresh_clone(
    tmp_path: Path, flights_settings: Settings
) -> None:
    clone = fresh_clone(tmp_path)
    env = {k: v for k, v in os.environ.items() if not k.startswith("LOOKOUT_")}
    env["LOOKOUT_CACHE_DIR"] = flights_settings.cache_dir  # the built DuckDB file, shared

    def sh(command: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["bash", "-euo", "pipefail", "-c", command],
            cwd=clone,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )

    # 1. make demo, as the first block says (the linked .venv counts as installed)
    [demo] = [line for line in fenced("sh")[0].splitlines() if line.startswith("make demo")]
    made = sh(demo.split("#")[0].replace("make ", "make -o .venv/bin/lookout ", 1))
    assert made.returncode == 0, made.stdout[-3000:] + made.stderr[-3000:]
    assert "15 runs: 7 Clear, 6 Needs attention, 2 skipped · " in made.stdout
    assert "6 of the 13 example automations with\nchecks need attention" in README

    # 2. the agent with the fake LLM: the script, the fake (--repeat), the run, its trace
    (clone / "script.yaml").write_text(one(fenced("yaml", AGENT), "steps:\n"), encoding="utf-8")
    port = str(free_port())  # the README's 8099 may be taken on a shared machine
    serve = one(fenced("sh", AGENT), ".venv/bin/python -m checks.fakes.llm_server").strip()
    assert "--repeat" in serve
    fake = subprocess.Popen(
        ["bash", "-c", "exec " + serve.replace("8099", port)],
        cwd=clone,
        env=env,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert fake.stdout is not None
        assert fake.stdout.readline().strip() == f"http://127.0.0.1:{port}/v1"
        [run, fresh] = [
            b.replace("8099", port)
            for b in fenced("sh", AGENT)
            if b.startswith("LOOKOUT_LLM_BASE_URL=http://127.0.0.1:8099/v1")
        ]
        assert fresh.strip().endswith("lookout run flights-carrier-integrity --fresh")
        first = sh(run)
        show = one(fenced("sh", AGENT), ".venv/bin/lookout show 16 --trace")
        trace = sh(show)
        again, asked = sh(run), sh(fresh)  # pinned, then the agent asked again
        trace_of_fresh = sh(show.replace("16", "18"))
    finally:
        fake.terminate()
        fake.wait(timeout=10)
        if fake.stdout is not None:
            fake.stdout.close()
    banner_start = "A pinned plan whose evidence holds decides a run, else the agent"
    shown = one(fenced("", AGENT), banner_start)
    banner, report = shown.replace("8099", port).split("\n\n", 1)
    # --fresh sets the plan aside: the agent alone, as the README quotes after the command
    alone = (
        "The agent decides each run (fake at http://127.0.0.1:8099/v1); a Clear never "
        "stands against a failed declared check, and the checks decide when it gives no "
        "valid report."
    )
    assert '"The agent decides each run (fake at\nhttp://127.0.0.1:8099/v1); …"' in AGENT
    for result, run_id, said in ((first, "16", banner), (asked, "18", alone)):
        assert result.returncode == 0, result.stdout + result.stderr  # Clear
        # the banner's words exactly (the port's digits may move where it wraps), then the report
        printed, rest = result.stdout.split("\n\n", 1)
        assert printed.split() == said.replace("8099", port).split()
        stamp = re.search(r"\d{4}-\d\d-\d\d \d\d:\d\d UTC", result.stdout)
        assert stamp is not None, result.stdout
        expected = report.replace("run 16", f"run {run_id}")
        assert rest.startswith(expected.replace("2026-12-01 15:10 UTC", stamp[0]))
    assert "runs 1 to 15 are the demo's, so this is run\n16" in AGENT
    assert again.returncode == 0, again.stdout + again.stderr
    # at 80 columns the line breaks before the date-time, never inside it
    assert "flights-carrier-integrity — Clear (decided by pinned) · run 17 ·" in (
        again.stdout.splitlines()
    )
    assert "(`Clear (decided by pinned)` ·\nrun 17)" in AGENT
    pinned = sh(".venv/bin/lookout show 17 --trace")
    assert (pinned.returncode, pinned.stdout) == (0, "")
    assert " ".join(pinned.stderr.split()) == (
        "run 17 has no trace: the agent was not asked: its pinned plan decided "
        "('lookout run flights-carrier-integrity --fresh' asks it)"
    )

    # 3. the trace of the run it printed, and of the run --fresh asked the agent for
    sql = yaml.safe_load(one(fenced("yaml", AGENT), "steps:\n"))["steps"][0]["tool_calls"][0]
    for shown_trace in (trace, trace_of_fresh):
        assert shown_trace.returncode == 0, shown_trace.stderr
        events = [json.loads(line) for line in shown_trace.stdout.splitlines()]
        assert [e["kind"] for e in events] == [
            "agent_start",
            *["model_request", "model_response", "tool_call", "tool_result"],
            *["model_request", "model_response", "tool_call", "report_accepted", "agent_end"],
        ]
        calls = [(e["name"], e["arguments"]) for e in events if e["kind"] == "tool_call"]
        assert calls[0] == ("execute_query", json.dumps(sql["arguments"]))
        assert calls[1][0] == "submit_report"
        assert (events[-2]["finding"], events[-2]["evidence"]) == ("clear", ["Q1"])
        assert (events[-1]["steps"], events[-1]["ended"]) == (2, "submitted")


def test_make_help_names_what_the_tests_need() -> None:
    shown = subprocess.run(
        ["make", "-s", "help"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    assert (
        "  test       run the test suite (needs PostgreSQL on 127.0.0.1:5432, Redis on "
        "127.0.0.1:6379 and chromium)"
    ) in shown.splitlines()
