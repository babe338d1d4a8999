"""Every kind of error maps to its documented exit status, through the real entry point."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from checks.settings.config import Settings
from tests.cli_support import run_lookout
from tests.paths import ROOT


@dataclass(frozen=True)
class Case:
    name: str
    args: list[str]
    code: int
    stderr: str = ""
    stdout: str = ""


CASES = [
    Case("unknown option", ["run", "--bogus"], 2, "No such option: --bogus"),
    Case("unknown command", ["nosuch"], 2, "No such command 'nosuch'"),
    Case(
        "missing config",
        ["--config", "nope.yaml", "validate"],
        2,
        "nope.yaml: config file not found",
    ),
    Case("nothing to run", ["run"], 2, "name at least one automation, or pass --all"),
    Case("unknown automation", ["run", "nope"], 2, "no valid automation named 'nope'"),
    Case(
        "broken files",
        ["validate", "tests/data/broken_automations"],
        2,
        stdout="six_field_cron.yaml:2:11: schedule: 6 fields: looks like a Quartz/seconds cron",
    ),
    Case("missing run", ["show", "999"], 2, "no run with id 999"),
    Case("bad finding filter", ["reports", "--finding", "red"], 2, "--finding must be clear or"),
    Case("skipped only", ["run", "carrier-december-delays"], 0, stdout="Skipped"),
    Case("clear", ["run", "flights-carrier-integrity"], 0, stdout="Clear"),
    Case("needs attention", ["run", "weather-plausible-readings"], 1, stdout="Needs attention"),
]


IN_A_PROCESS = frozenset({"unknown option", "clear", "needs attention"})
"""One case per exit status (2, 0, 1; 3 below) through a real process; the rest in this one."""


@pytest.mark.parametrize(
    "case",
    [pytest.param(c, marks=pytest.mark.slow) if c.name in IN_A_PROCESS else c for c in CASES],
    ids=lambda c: c.name,
)
def test_exit_status(case: Case, tmp_path: Path, flights_settings: Settings) -> None:
    env = {
        "PATH": "/usr/bin:/bin",
        "LOOKOUT_STORE_URL": f"sqlite:///{tmp_path}/lookout.db",
        "LOOKOUT_CACHE_DIR": flights_settings.cache_dir,
    }
    if case.name not in IN_A_PROCESS:  # main's SystemExit status is what the process exits with
        proc = run_lookout(case.args, env)
    else:
        proc = subprocess.run(
            [sys.executable, "-c", "from worker.cli.app import main; main()", *case.args],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert proc.returncode == case.code, proc.stdout + proc.stderr
    assert case.stderr in proc.stderr
    assert case.stdout in proc.stdout


@pytest.mark.slow
def test_run_error_exit_3_when_a_check_errors(tmp_path: Path, flights_settings: Settings) -> None:
    (tmp_path / "a.yaml").write_text(
        "name: null-check\nsource: flights\ngoal: g\nchecks:\n"
        "  - {name: n, sql: 'SELECT NULL', expect: '== 0'}\n"
        "  - {name: w, sql: 'DELETE FROM flights', expect: empty}\n",
        encoding="utf-8",
    )
    env = {
        "PATH": "/usr/bin:/bin",
        "LOOKOUT_STORE_URL": f"sqlite:///{tmp_path}/lookout.db",
        "LOOKOUT_CACHE_DIR": flights_settings.cache_dir,
        "LOOKOUT_AUTOMATIONS_DIR": str(tmp_path),
    }
    proc = subprocess.run(
        [sys.executable, "-c", "from worker.cli.app import main; main()", "run", "--all"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 3, proc.stdout + proc.stderr
    # each error said once, as Markdown rendered (no raw **), with no expectation tacked on
    assert "ERROR: n — returned NULL [C1]" in proc.stdout
    # an error is "in error": "not evaluated" is the outcome of a check that saw no data
    assert "Error — 2 of 2 checks in error." in proc.stdout.splitlines()
    assert "evaluated" not in proc.stdout
    assert proc.stdout.count("returned NULL") == 1
    assert proc.stdout.count("DELETE is not allowed") == 1
    assert "rejected (write)" in proc.stdout
    assert "**" not in proc.stdout and "(expected" not in proc.stdout
    assert proc.stdout.rstrip().splitlines()[-1].startswith("1 run: 1 in error · ")


def test_trace_of_a_run_without_agent_says_why_it_is_empty(
    tmp_path: Path, flights_settings: Settings
) -> None:
    env = {
        "PATH": "/usr/bin:/bin",
        "LOOKOUT_STORE_URL": f"sqlite:///{tmp_path}/lookout.db",
        "LOOKOUT_CACHE_DIR": flights_settings.cache_dir,
    }
    run_lookout(["run", "flights-carrier-integrity"], env).check_returncode()
    proc = run_lookout(["show", "1", "--trace"], env)
    assert proc.returncode == 0
    assert proc.stdout == ""
    assert "run 1 has no trace: no agent ran (the declared checks decided)" in proc.stderr


def test_run_now_refuses_a_hard_limit_over_half_the_visibility_timeout(
    tmp_path: Path, flights_settings: Settings
) -> None:
    (tmp_path / "long.yaml").write_text(
        "name: long-run\nsource: flights\ngoal: g\ntimeout_s: 600\nchecks:\n"
        "  - {name: n, sql: 'SELECT 1', expect: '== 1'}\n",
        encoding="utf-8",
    )
    import yaml

    from checks.settings.config import default_config_data

    config = tmp_path / "lookout.yaml"
    data = {**default_config_data(), "service": {"visibility_timeout_s": 900}}
    config.write_text(yaml.safe_dump(data), encoding="utf-8")
    env = {
        "PATH": "/usr/bin:/bin",
        "LOOKOUT_CONFIG": str(config),
        "LOOKOUT_STORE_URL": f"sqlite:///{tmp_path}/lookout.db",
        "LOOKOUT_CACHE_DIR": flights_settings.cache_dir,
        "LOOKOUT_AUTOMATIONS_DIR": str(tmp_path),
        "LOOKOUT_REDIS_URL": "redis://127.0.0.1:9/0",  # never reached: refused before sending
    }
    proc = run_lookout(["run-now", "long-run"], env)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert (
        "long-run cannot be sent to the workers: timeout_s 600 s: its hard limit (630 s) must"
        " stay under half of service.visibility_timeout_s (900 s)"
    ) in proc.stderr


def test_validate_escapes_a_newline_in_a_file_name(
    tmp_path: Path, flights_settings: Settings
) -> None:
    (tmp_path / "evil\nnot-a-line.yaml").write_text("name: x\nsource: nowhere\n", encoding="utf-8")
    env = {
        "PATH": "/usr/bin:/bin",
        "LOOKOUT_STORE_URL": f"sqlite:///{tmp_path}/lookout.db",
        "LOOKOUT_CACHE_DIR": flights_settings.cache_dir,
    }
    proc = run_lookout(["validate", str(tmp_path)], env)
    assert proc.returncode == 2
    lines = (proc.stdout + proc.stderr).splitlines()
    errors = [ln for ln in lines if "evil" in ln]
    assert len(errors) == 2 and all("evil\\nnot-a-line.yaml:" in ln for ln in errors)
    assert not any(ln.startswith("not-a-line.yaml") for ln in lines)
