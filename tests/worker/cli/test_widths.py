"""Every command's output is readable at 80 and at 120 columns: nothing cut, nothing too wide.

Each command runs in-process through the real Typer app with ``COLUMNS`` set
(the consoles read it at each print), on a folder of real example
automations, one with a name as long as a name may be, a broken file, and a
store filled by ``lookout run``.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from rich.cells import cell_len
from typer.testing import CliRunner

from checks.errors import ConfigError
from checks.report import Finding
from checks.settings.config import Settings, default_config_data
from checks.store.store import Store
from tests.paths import ROOT
from worker.alerts.fake_chat import FakeChat
from worker.cli.app import app

LONG = "registry-coverage-of-every-aircraft-flown-from-the-new-york-area"  # 64: the longest
assert len(LONG) == 64
EXAMPLES = ("flights-carrier-integrity", "weather-plausible-readings", "carrier-december-delays")
WIDTHS = (80, 120)


@dataclass
class Env:
    env: dict[str, str]
    names: tuple[str, ...]
    labelled: dict[str, str]  # the environment of a store with runs ops labelled


def labelled_store(tmp: Path, data: dict[str, object]) -> dict[str, str]:
    """A config whose store holds 24 runs ops resolved, each with a second opinion."""
    from tests.worker.review.test_calibrate import URGENCY_ACT, URGENCY_CALM, labelled_run, opinion
    from worker.review.vocabulary import ResolveReason

    store = Store(f"sqlite:///{tmp / 'labelled.db'}")
    try:
        for i in range(24):
            calm = i % 2 == 0
            op = opinion(0.9 if calm else 0.1, URGENCY_CALM if calm else URGENCY_ACT, [])
            wrong = i % 6 == 0
            reason = ResolveReason.FALSE_POSITIVE if calm != wrong else ResolveReason.FIXED
            labelled_run(store, i, Finding.NEEDS_ATTENTION, op, reason)
    finally:
        store.close()
    config = tmp / "labelled.yaml"
    labelled = {**data, "store_url": f"sqlite:///{tmp / 'labelled.db'}"}
    config.write_text(yaml.safe_dump(labelled), encoding="utf-8")
    return {"LOOKOUT_CONFIG": str(config), "COLUMNS": "100"}


@pytest.fixture(scope="module")
def cli(tmp_path_factory: pytest.TempPathFactory, flights_settings: Settings) -> Iterator[Env]:
    tmp = tmp_path_factory.mktemp("widths")
    folder = tmp / "automations"
    folder.mkdir()
    for name in EXAMPLES:
        shutil.copy(ROOT / "automations" / f"{name}.yaml", folder)
    (folder / "long.yaml").write_text(
        f"name: {LONG}\nsource: flights\nschedule: '20 7 * * *'\n"
        "timezone: America/Argentina/ComodRivadavia\nseverity: high\n"
        "goal: Every tail number on a flight has a row in planes.\nchecks:\n"
        "  - name: tail numbers missing from the planes registry by carrier and count\n"
        "    sql: SELECT tailnum, carrier, count(*) AS flights FROM flights WHERE tailnum "
        "NOT IN (SELECT tailnum FROM planes) GROUP BY ALL ORDER BY 3 DESC, 1\n"
        "    expect: empty\n"
        "  - {name: a value that is NULL, sql: 'SELECT NULL', expect: '== 0'}\n",
        encoding="utf-8",
    )
    (folder / "broken.yaml").write_text("name: broken\nsource: [\n", encoding="utf-8")
    with FakeChat("slack") as fake:
        config = tmp / "lookout.yaml"
        data = {
            **default_config_data(),
            "store_url": f"sqlite:///{tmp / 'lookout.db'}",
            "cache_dir": flights_settings.cache_dir,
            "automations_dir": str(folder),
            "channels": {"ops": fake.channel()},
            "alerts": {"rate_limiter": "memory"},
        }
        config.write_text(yaml.safe_dump(data), encoding="utf-8")
        env = {"LOOKOUT_CONFIG": str(config), "COLUMNS": "100"}
        first = CliRunner().invoke(app, ["run", "--all"], env=env)
        assert first.exit_code == 3, first.output  # the NULL check is in error
        sent = CliRunner().invoke(app, ["notify", "test", "ops"], env=env)
        assert sent.exit_code == 0, sent.output
        yield Env(env, (*EXAMPLES, LONG), labelled_store(tmp, data))


COMMANDS: dict[str, list[str]] = {
    "validate": ["validate"],
    "run named": ["run", "weather-plausible-readings", LONG],
    "run all": ["run", "--all"],
    "reports": ["reports"],
    "show": ["show", "2"],
    "show long": ["show", "4"],
    "schedule": ["schedule", "--next", "2"],
    "eval": ["eval", "--cases", "empty-table,not-in-over-null,test-accounts-excepted"],
    "notify test": ["notify", "test", "ops"],
    "notify flush": ["notify", "flush"],
    "notify log": ["notify", "log", "--attempts"],
    "calibrate, nothing labelled": ["calibrate", "--no-fit"],
    "calibrate": ["calibrate", "--min-reviews", "10"],  # on the labelled store
}

# What each command must show, each text whole on one line, at every width.
SHOWS: dict[str, tuple[str, ...]] = {
    "validate": (
        "broken.yaml:3:1: not valid YAML",
        "4 automations valid in 4 files; 1 error, 3 warnings",
    ),
    "run named": (
        "weather-plausible-readings — Needs attention",
        LONG,
        "FAILED: wind speeds in range",
        "wind_gust: NULL",
        "2 runs: 1 Needs attention, 1 in error · ",
    ),
    "run all": (
        "flights-carrier-integrity — Clear",
        "carrier-december-delays — Skipped",
        LONG,
        "4 runs: 1 Clear, 1 Needs attention, 1 in error, 1 skipped · ",
    ),
    "reports": (*EXAMPLES, LONG, "Needs attention", "Skipped", "Clear"),
    "show": ("flights-carrier-integrity — Clear", "passed: orphan carriers", "336776"),
    "show long": ("weather-plausible-readings — Needs attention", "wind_speed: 1048.36058"),
    "schedule": (LONG, "America/Argentina/ComodRivadavia", "flights-carrier-integrity"),
    "eval": (
        "empty-table",
        "not-in-over-null",
        "test-accounts-excepted",
        "Finding accuracy: 2/2 runs (100%); 1 skipped (need an LLM), 0 in error.",
        "overconfident-goal-met (goal_met, 240 labelled): ECE 0.235 → 0.071,",
    ),
    "notify test": ("ops (slack) HTTP 200",),
    "notify flush": ("0 deliveries handled",),
    "notify log": ("test -> ops (slack) HTTP 200", "#1 message sent HTTP 200"),
    "calibrate, nothing labelled": ("nothing to score yet: no run has been resolved",),
    "calibrate": (
        "systemone jev: 24 labelled run(s) (8 false_positive, 16 fixed)",
        "goal_met",
        "stored",
        "double_check_disagrees: raised 0, right 0",
    ),
}

# Lines that are one message each and stay whole for grep (the terminal wraps them).
ONE_LINE = re.compile(r"^(error: |warning: |note: |Reliability diagram: )")


@pytest.mark.slow
@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("command", COMMANDS, ids=str)
def test_every_command_fits_the_width(cli: Env, command: str, width: int) -> None:
    env = cli.labelled if command == "calibrate" else cli.env
    result = CliRunner().invoke(app, COMMANDS[command], env={**env, "COLUMNS": str(width)})
    assert result.exit_code in (0, 1, 2, 3), result.output
    text = result.stdout + result.stderr
    assert result.stdout.strip(), text
    assert "…" not in text, text  # nothing cut
    lines = text.splitlines()
    for line in lines:
        if not ONE_LINE.match(line):
            assert cell_len(line) <= width, f"{cell_len(line)} > {width}: {line!r}"
        assert line == line.rstrip(), f"trailing blanks: {line!r}"
    for shown in SHOWS[command]:
        assert any(shown in line for line in lines), f"{shown!r} not whole on a line:\n{text}"


@pytest.mark.parametrize("width", WIDTHS)
def test_names_are_never_cut_in_the_tables(cli: Env, width: int) -> None:
    env = {**cli.env, "COLUMNS": str(width)}
    reports = CliRunner().invoke(app, ["reports"], env=env).stdout
    schedule = CliRunner().invoke(app, ["schedule", "--next", "1"], env=env).stdout
    for name in cli.names:
        assert name in reports, name
    assert LONG in schedule and "America/Argentina/ComodRivadavia" in schedule


def test_the_note_is_a_column_when_there_is_room_and_a_stacked_line_when_not(cli: Env) -> None:
    narrow = CliRunner().invoke(app, ["reports"], env={**cli.env, "COLUMNS": "80"}).stdout
    wide = CliRunner().invoke(app, ["reports"], env={**cli.env, "COLUMNS": "160"}).stdout
    skipped = "needs an LLM: set LOOKOUT_LLM_BASE_URL"
    # at 80 the 64-character name leaves no room for columns: each run is a block
    below = [line for line in narrow.splitlines() if skipped in line]
    assert below and below[0].startswith("    note: needs an LLM")
    assert any(line.endswith(f"  {LONG}") for line in narrow.splitlines())
    beside = [line for line in wide.splitlines() if skipped in line]
    assert beside and "carrier-december-delays" in beside[0] and "Skipped" in beside[0]


def test_run_says_once_what_decides_and_ends_with_the_totals(cli: Env) -> None:
    result = CliRunner().invoke(app, ["run", "--all"], env={**cli.env, "COLUMNS": "80"})
    out = result.stdout
    assert out.count("No LLM is configured: a pinned plan whose evidence holds decides") == 1
    assert "Decided by the declared checks alone" not in out
    assert "(decided by checks)" not in out  # said once, above
    assert "**" not in out and "None" not in out
    assert "wind_gust: NULL" in out  # a NULL cell of the evidence, at 80 columns stacked
    assert re.search(
        r"\n4 runs: 1 Clear, 1 Needs attention, 1 in error, 1 skipped · "
        r"(< 1 ms|\d{1,3} ms|\d{1,2}\.\d s|\d{1,2} min \d\d s)\n$",
        out,
    )
    assert "broken.yaml" in result.stderr  # --all: every file problem counts


def test_run_of_named_automations_prints_only_their_file_problems(cli: Env) -> None:
    result = CliRunner().invoke(app, ["run", "flights-carrier-integrity"], env=cli.env)
    assert result.exit_code == 0, result.output
    assert "broken.yaml" not in result.stderr
    assert "note: 1 problem in 1 other file; 'lookout validate' lists them" in result.stderr
    broken = CliRunner().invoke(app, ["run", "broken"], env=cli.env)
    assert isinstance(broken.exception, ConfigError)  # exit 2 through main()
    folder = str(Path(cli.env["LOOKOUT_CONFIG"]).parent / "automations")
    assert str(broken.exception) == (
        f"no valid automation named 'broken' in {folder}"
        " (run 'lookout validate' to see file errors)"
    )
    assert "broken.yaml:3:1: not valid YAML" in broken.stderr and "note:" not in broken.stderr


def test_the_hint_to_validate_names_the_folder_and_config_the_run_was_given(cli: Env) -> None:
    config = Path(cli.env["LOOKOUT_CONFIG"])
    folder = config.parent / "automations"
    env = {"COLUMNS": "100"}
    given = ["--config", str(config), "--automations", str(folder)]
    result = CliRunner().invoke(app, [*given, "run", "flights-carrier-integrity"], env=env)
    assert result.exit_code == 0, result.output
    validate = f"lookout --config {config} --automations {folder} validate"
    assert f"note: 1 problem in 1 other file; '{validate}' lists them" in result.stderr
    missing = CliRunner().invoke(app, [*given, "run", "nope"], env=env)
    assert str(missing.exception) == (
        f"no valid automation named 'nope' in {folder} (run '{validate}' to see file errors)"
    )


def test_run_json_keeps_stdout_to_json_lines(cli: Env) -> None:
    result = CliRunner().invoke(app, ["run", "flights-carrier-integrity", "--json"], env=cli.env)
    docs = [json.loads(line) for line in result.stdout.splitlines()]
    assert [d["automation"] for d in docs] == ["flights-carrier-integrity"]
    assert "1 run: 1 Clear · " in result.stderr


def test_a_schedule_line_breaks_before_the_zone_name_and_utc_is_not_said_twice(cli: Env) -> None:
    two = ["schedule", "flights-carrier-integrity", "weather-plausible-readings", "--next", "1"]
    narrow = CliRunner().invoke(app, two, env={**cli.env, "COLUMNS": "72"}).stdout.splitlines()
    wide = CliRunner().invoke(app, two, env={**cli.env, "COLUMNS": "160"}).stdout.splitlines()

    def line_of(lines: list[str], name: str) -> int:
        return next(n for n, line in enumerate(lines) if line.startswith(name))

    assert len(narrow) == 4 and narrow[0].split() == ["automation", "UTC", "local", "time"]
    new_york = line_of(narrow, "flights-carrier-integrity")
    assert re.search(r" E[SD]T$", narrow[new_york])  # the zone's name on the next line, whole
    assert narrow[new_york + 1].strip() == "(America/New_York)"
    assert narrow[line_of(narrow, "weather-plausible")].endswith(" UTC")
    assert re.search(r" E[SD]T \(America/New_York\)$", wide[line_of(wide, "flights-carrier")])
    assert wide[line_of(wide, "weather-plausible")].endswith(" UTC")  # its zone: said once
