"""``lookout suggest flights``: the files it writes validate, load and run; run again, the diff;
an edited file kept unless ``--force``; bad input as a configuration error."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from checks.automation.loader import load_automations
from checks.settings.config import Settings
from checks.sources import Source
from checks.suggest.yaml_writer import edited
from tests.cli_support import run_cli

STAMP = re.compile(r"\d{4}-\d{2}-\d{2}( \d{2}:\d{2})?|\d+d( \d+[hms])? old")
NAMES = ["airlines", "airports", "flights", "planes", "weather"]


def _lines(out: str, folder: Path) -> list[str]:
    return [STAMP.sub("DATE", line.replace(str(folder), "OUT")) for line in out.splitlines()]


@pytest.mark.slow  # over 2 s: make test runs it, make test-fast leaves it out
def test_suggest_flights_writes_files_that_validate_and_says_what_fails_today(
    flights_source: Source,
    flights_settings: Settings,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    env = {"LOOKOUT_CACHE_DIR": flights_settings.cache_dir}
    out_dir = tmp_path / "suggested"
    code, out, err = run_cli(
        monkeypatch, capsys, ["suggest", "flights", "--out", str(out_dir)], env
    )
    assert (code, err) == (1, "")  # two of its checks reveal real problems
    assert (
        _lines(out, out_dir)
        == [
            "OUT/flights-airlines-suggested.yaml: new, 6 checks",
            "OUT/flights-airports-suggested.yaml: new, 17 checks",
            "OUT/flights-flights-suggested.yaml: new, 40 checks",
            "  fails today: 721 of 4,043 values of flights.tailnum (50,094 rows) have no row in"
            " planes.tailnum: rows point at nothing",
            "  fails today: 4 of 105 values of flights.dest (7,602 rows) have no row in"
            " airports.faa: rows point at nothing",
            "  note: flights.time_hour: newest value DATE:00+00:00 is DATE (more than a week):"
            " history, or loading stopped; no freshness or volume check suggested",
            "OUT/flights-planes-suggested.yaml: new, 18 checks",
            "OUT/flights-weather-suggested.yaml: new, 31 checks",
            "  note: weather.time_hour: newest value DATE:00+00:00 is DATE (more than a week):"
            " history, or loading stopped; no freshness or volume check suggested",
        ]
        or out
    )
    loaded = load_automations(out_dir, known_sources={"flights"})
    assert loaded.errors == []
    assert [a.name for a in loaded.automations] == [f"flights-{n}-suggested" for n in NAMES]
    assert all(a.owner == "unassigned" and a.schedule == "0 6 * * *" for a in loaded.automations)
    code, out, _ = run_cli(monkeypatch, capsys, ["--automations", str(out_dir), "validate"], env)
    assert (code, out.splitlines()[-1]) == (
        0,
        "5 automations valid in 5 files; 0 errors, 0 warnings",
    )
    text = (out_dir / "flights-flights-suggested.yaml").read_text()
    assert "  # 2.45 % NULL (8,255) in 336,776 rows on DATE\n  - name: dep_time present\n" in (
        STAMP.sub("DATE", text)
    )
    assert "  # fails today: 4 of 105 values of flights.dest (7,602 rows) have no row in" in text
    assert not edited(text)
    store = f"sqlite:///{tmp_path / 'store.db'}"
    code, out, _ = run_cli(
        monkeypatch,
        capsys,
        ["--automations", str(out_dir), "run", "--all"],
        {**env, "LOOKOUT_STORE_URL": store},
    )
    failed = [line.strip() for line in out.splitlines() if "FAILED" in line]
    assert code == 1
    assert [line.split(" — ")[0] for line in failed] == [
        "• FAILED: tailnum in planes",
        "• FAILED: dest in airports",
    ]
    assert out.splitlines()[-1].startswith("5 runs: 4 Clear, 1 Needs attention · ")


def test_run_again_a_diff_an_edited_file_kept_unless_force(
    flights_source: Source,
    flights_settings: Settings,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    env = {"LOOKOUT_CACHE_DIR": flights_settings.cache_dir}
    args = ["suggest", "flights", "--tables", "airlines", "--out", str(tmp_path)]
    assert run_cli(monkeypatch, capsys, args, env)[:2] == (
        0,
        f"{tmp_path}/flights-airlines-suggested.yaml: new, 6 checks\n",
    )
    path = tmp_path / "flights-airlines-suggested.yaml"
    first = path.read_text()
    code, out, _ = run_cli(monkeypatch, capsys, args, env)
    assert code == 0
    assert out.splitlines()[0] in {
        f"{path}: unchanged, 6 checks",
        f"{path}: updated, 6 checks",  # the minute turned: only the dates differ
    }
    path.write_text(first.replace("owner: unassigned", "owner: data-platform"))
    code, out, _ = run_cli(monkeypatch, capsys, args, env)
    lines = out.splitlines()
    assert code == 1
    assert lines[0] == f"{path}: kept, 6 checks"
    assert "-owner: data-platform" in lines and "+owner: unassigned" in lines
    assert lines[-1] == "  kept: edited since it was written; --force overwrites it"
    assert "owner: data-platform" in path.read_text()
    code, out, _ = run_cli(monkeypatch, capsys, [*args, "--force"], env)
    assert (code, out.splitlines()[0]) == (0, f"{path}: overwritten, 6 checks")
    assert "owner: unassigned" in path.read_text() and not edited(path.read_text())


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["suggest", "flight"],
            "error: source 'flight' is not configured (configured: flights)",
        ),
        (
            ["suggest", "flights", "--tables", "plane"],
            "error: source flights has no table 'plane' (did you mean 'planes'?) (it has:"
            " airlines, airports, flights, planes, weather)",
        ),
        (
            ["suggest", "flights", "--goals"],
            "error: --goals needs an LLM: set LOOKOUT_LLM_BASE_URL and LOOKOUT_LLM_MODEL",
        ),
    ],
)
def test_bad_input_is_a_configuration_error(
    args: list[str],
    message: str,
    flights_settings: Settings,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    env = {"LOOKOUT_CACHE_DIR": flights_settings.cache_dir}
    code, out, err = run_cli(monkeypatch, capsys, [*args, "--out", str(tmp_path)], env)
    assert (code, out, " ".join(err.split())) == (2, "", message)
    assert list(tmp_path.iterdir()) == []
