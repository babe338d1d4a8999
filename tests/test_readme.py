"""The README tells the truth: its example runs, every command it lists exists and has help."""

from __future__ import annotations

import re
from fractions import Fraction
from pathlib import Path

from typer.testing import CliRunner

from checks.automation.loader import load_automations
from checks.run import SourcePool, run_automation
from checks.settings.config import ENV_OVERRIDES, Settings
from worker.cli.app import app

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_readme_automation_example_runs(tmp_path: Path, flights_settings: Settings) -> None:
    block = re.search(r"```yaml\n(name: planes-registry-coverage.*?)```", README, re.S)
    assert block is not None
    (tmp_path / "example.yaml").write_text(block.group(1), encoding="utf-8")
    loaded = load_automations(tmp_path, known_sources={"flights"})
    assert loaded.errors == []
    with SourcePool(flights_settings) as pool:
        report = run_automation(loaded.automations[0], flights_settings, pool)
    assert report.finding == "needs_attention"
    assert [c.value for c in report.checks] == [721, float(Fraction(50094, 334264) * 100)]
    assert report.checks[1].metrics["orphans"] == 50094
    assert "50,094 of the 334,264" in README and "14.99 %" in README
    assert report.evidence[0].rows[0] == ["N725MQ", "MQ", 575]


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
