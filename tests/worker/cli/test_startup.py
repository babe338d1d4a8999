"""The cycle collector in a command's start-up: paused by the console script, resumed before work.

Each probe runs the real entry point (``worker.cli.main``) in a fresh
interpreter and prints, from inside the command, whether the collector was on
when the work began; the figures of what it saves are in the README's
Benchmarks (``bench/main_job.sh``), never here.
"""

from __future__ import annotations

import gc
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.paths import ROOT
from worker.cli import startup

PROBE = """
import atexit, gc, sys
import checks.run_lifecycle, checks.declared.validation as validation

def spy(module, name):
    real = getattr(module, name)
    def call(*args, **kwargs):
        print(f"{name}: collector {'on' if gc.isenabled() else 'off'}", file=sys.stderr)
        return real(*args, **kwargs)
    setattr(module, name, call)

spy(checks.run_lifecycle, "run_and_store")
spy(validation, "validate_checks")
atexit.register(lambda: print(
    f"at exit: collector {'on' if gc.isenabled() else 'off'}, "
    f"frozen {'yes' if gc.get_freeze_count() else 'no'}", file=sys.stderr))
sys.argv = ["lookout", *sys.argv[1:]]
from worker.cli import main
main()
"""


def probe(tmp_path: Path, *args: str) -> list[str]:
    """The probe's lines for ``lookout ARGS``: one per run or validation, then the one at exit."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("LOOKOUT_")}
    env |= {
        "LOOKOUT_STORE_URL": f"sqlite:///{tmp_path / 'store.db'}",
        "LOOKOUT_CACHE_DIR": str(ROOT / ".lookout" / "cache"),
    }
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=env,
    )
    lines = [x for x in done.stderr.splitlines() if "collector" in x]
    assert lines, done.stderr
    return lines


@pytest.mark.slow
def test_run_resumes_the_collector_before_the_first_automation_runs(tmp_path: Path) -> None:
    lines = probe(tmp_path, "run", "planes-build-year", "flights-origin-airports")
    assert lines == [
        "run_and_store: collector on",
        "run_and_store: collector on",
        "at exit: collector on, frozen yes",
    ]


@pytest.mark.slow
def test_validate_resumes_it_before_the_checks_sql_is_checked(tmp_path: Path) -> None:
    lines = probe(tmp_path, "validate", "automations/planes-build-year.yaml")
    assert lines == ["validate_checks: collector on", "at exit: collector on, frozen yes"]


@pytest.mark.slow
def test_every_other_command_resumes_it_before_its_body(tmp_path: Path) -> None:
    # ``reports`` reads the store; the long-running ones (worker, beat, serve) go the same way
    assert probe(tmp_path, "reports") == ["at exit: collector on, frozen yes"]


def test_over_without_pause_changes_nothing() -> None:
    # a command invoked in-process (a test's CliRunner) never paused the collector
    frozen = gc.get_freeze_count()
    startup.over()
    assert gc.isenabled()
    assert gc.get_freeze_count() == frozen
    assert not startup.paused()


def test_pause_then_over_freezes_and_resumes_once() -> None:
    startup.pause()
    try:
        assert not gc.isenabled()
        assert startup.paused()
        startup.over()
        assert gc.isenabled()
        assert gc.get_freeze_count() > 0
        assert not startup.paused()
        startup.over()  # a second call is a no-op
        assert gc.isenabled()
    finally:
        gc.enable()
        gc.unfreeze()
