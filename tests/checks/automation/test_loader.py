from __future__ import annotations

import json
import os
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

import pytest

from checks.automation.check import Check
from checks.automation.loader import LoadResult, load_automations
from checks.automation.model import Automation
from checks.fields.expectation import Expectation
from checks.fields.schedule import (
    check_computable,
    cron_fields,
    needs_day_match,
    parse_duration,
    validate_cron,
)
from tests.paths import DATA

BROKEN = DATA / "broken_automations"
SOURCES = {"flights", "warehouse"}
FIVE = "Lookout takes 5 fields: minute hour day-of-month month day-of-week"
SLUG = (
    "a name is lowercase letters, digits, '_' and '-', starting with a letter or digit, "
    "at most 64 characters"
)
FORMS = (
    "'== N', '!= N', '< N', '<= N', '> N', '>= N', 'between A and B' (N may be a percent "
    "like '1%' or a duration like '3h'), 'is true', 'is false', 'empty', 'not empty' or 'anomaly'"
)

GOOD = """\
name: late-flights
description: Departures should mostly leave on time.
schedule: "0 6 * * 1-5"
timezone: Europe/Paris
source: flights
goal: Yesterday's departures look complete and mostly on time.
instructions: Compare with the same weekday last week.
checks:
  - name: no negative distance
    sql: SELECT count(*) FROM flights WHERE distance < 0
    expect: == 0
  - name: late share
    sql: SELECT avg(CASE WHEN dep_delay > 15 THEN 1 ELSE 0 END) FROM flights
    expect: "<= 0.25"
severity: high
owner: data-platform
tags: [flights, daily]
notify: [ops-slack]
timeout_s: 60
model: gpt-4.1-mini
catchup: all
catchup_window: 30m
overlap: buffer_one
repeat_interval: 2d
"""


def messages(result: LoadResult) -> list[str]:
    """Error strings with the broken-files folder left out of the path."""
    return [e.location_message().replace(f"{BROKEN}/", "") for e in result.errors]


@dataclass(frozen=True)
class Broken:
    file: str
    errors: tuple[str, ...]
    loads: tuple[str, ...] = ()


BROKEN_FILES = [
    Broken(
        "unknown_key.yaml",
        ("unknown_key.yaml:4:1: chekcs: unknown field 'chekcs' (did you mean 'checks'?)",),
    ),
    Broken(
        "six_field_cron.yaml",
        (
            "six_field_cron.yaml:2:11: schedule: 6 fields: looks like a Quartz/seconds cron; "
            + FIVE,
        ),
    ),
    Broken(
        "invalid_cron.yaml",
        (
            "invalid_cron.yaml:2:11: schedule: invalid cron expression: "
            "the hour field '25' is out of range: hour takes 0-23",
        ),
    ),
    Broken(
        "day_match_missing.yaml",
        (
            "day_match_missing.yaml:3:11: schedule: day-of-month (1) and day-of-week (mon) are "
            "both restricted, and cron runs on days matching EITHER; add day_match: any "
            "(either, as cron does) or day_match: all (both)",
        ),
    ),
    Broken(
        "bad_timezone.yaml",
        (
            "bad_timezone.yaml:3:11: timezone: unknown time zone 'Europe/Pariss' "
            "(did you mean 'Europe/Paris'?)",
        ),
    ),
    Broken(
        "bad_expect.yaml",
        (f"bad_expect.yaml:7:13: checks.0.expect: cannot read expect '= 0'; use {FORMS}",),
    ),
    Broken(
        "duplicate_name",
        (
            "duplicate_name/b.yaml:2:7: name: duplicate automation name 'daily-flights': "
            "first defined at duplicate_name/a.yaml:1",
        ),
        loads=("daily-flights",),
    ),
    Broken("missing_goal.yaml", ("missing_goal.yaml:1:1: goal: required field is missing",)),
    Broken(
        "yaml_syntax.yaml",
        ("yaml_syntax.yaml:4:9: not valid YAML: mapping values are not allowed here",),
    ),
    Broken(
        "duplicate_key.yaml",
        (
            "duplicate_key.yaml:5:1: goal: duplicate key 'goal' (first on line 3); "
            "YAML would keep only the last",
        ),
    ),
    Broken("bad_slug.yaml", (f"bad_slug.yaml:1:7: name: {SLUG} (got 'Late Flights')",)),
    Broken(
        "unknown_source.yaml",
        (
            "unknown_source.yaml:2:9: source: unknown source 'flight' (did you mean 'flights'?); "
            "known: flights, warehouse",
        ),
    ),
    Broken(
        "list_one_bad.yaml",
        (
            "list_one_bad.yaml:12:15: automations.1.severity: input should be 'low', 'medium' "
            "or 'high' (got 'urgent')",
        ),
        loads=("list-good",),
    ),
    Broken("not_utf8.yaml", ("not_utf8.yaml:3:10: not UTF-8 text: byte 0xe9 cannot be decoded",)),
    Broken(
        "empty.yaml",
        ("empty.yaml: the file is empty; expected an automation or 'automations:' with a list",),
    ),
    Broken(
        "top_level_scalar.yaml",
        (
            "top_level_scalar.yaml:1:1: expected an automation (a mapping of fields) or "
            "'automations:' with a list, got text",
        ),
    ),
    Broken(
        "unquoted_greater.yaml",
        (
            "unquoted_greater.yaml:7:15: not valid YAML: expected a comment or a line break, "
            "but found '0' (while scanning a block scalar); quote a value that starts with "
            "'>' or '|', e.g. expect: \"> 0\"",
        ),
    ),
    Broken(
        "loader_fields.yaml",
        (
            "loader_fields.yaml:4:1: path: unknown field 'path' (set by the loader)",
            "loader_fields.yaml:5:1: line: unknown field 'line' (set by the loader)",
        ),
    ),
    Broken(
        "several_errors.yaml",
        (
            "several_errors.yaml:3:7: goal: must not be empty",
            "several_errors.yaml:4:12: timeout_s: input should be greater than 0 (got -5)",
            "several_errors.yaml:5:17: catchup_window: expected a duration: seconds as a "
            "number, or a string like '90s', '30m', '1h', '2d' (got '1 hour')",
            "several_errors.yaml:6:10: overlap: input should be 'skip', 'buffer_one' or 'allow' "
            "(got 'queue')",
            "several_errors.yaml:7:12: tags.1: input should be a valid string (got 3)",
            "several_errors.yaml:13:10: checks.1.sql: must not be empty",
            "several_errors.yaml:14:13: checks.1.expect: between 5 and 1: the first bound is "
            "above the second",
            "several_errors.yaml:15:5: checks.1.expct: unknown field 'expct' "
            "(did you mean 'expect'?)",
        ),
    ),
]


@pytest.mark.parametrize("case", BROKEN_FILES, ids=lambda c: c.file)
def test_broken_file(case: Broken) -> None:
    result = load_automations(BROKEN / case.file, known_sources=SOURCES)
    assert messages(result) == list(case.errors)
    assert [a.name for a in result.automations] == list(case.loads)


def test_every_broken_file_has_a_case() -> None:
    on_disk = {p.name for p in BROKEN.iterdir()}
    assert on_disk == {case.file for case in BROKEN_FILES}


def test_broken_folder_reports_every_file_and_keeps_the_good_entry() -> None:
    result = load_automations(BROKEN, known_sources=SOURCES)  # not recursive: no duplicate_name/
    expected = [e for case in BROKEN_FILES if case.file.endswith(".yaml") for e in case.errors]
    assert sorted(messages(result)) == sorted(expected)
    assert [a.name for a in result.automations] == ["list-good"]
    assert result.by_name("list-good").line == 2


def test_good_file_loads_every_field(tmp_path: Path) -> None:
    (tmp_path / "late.yaml").write_text(GOOD)
    result = load_automations(tmp_path, known_sources=SOURCES)
    assert result.errors == []
    assert not any("no automation files" in w for w in result.warnings)
    automation = result.by_name("late-flights")
    assert automation.path == str(tmp_path / "late.yaml")
    assert automation.line == 1
    assert automation.schedule == "0 6 * * 1-5"
    assert automation.zone.key == "Europe/Paris"
    assert automation.checks[0] == Check(
        name="no negative distance",
        sql="SELECT count(*) FROM flights WHERE distance < 0",
        expect=Expectation("==", Decimal(0)),
    )
    assert automation.checks[1].expect.text == "<= 0.25"
    assert (automation.timeout_s, automation.catchup_window_s) == (60.0, 1800.0)
    assert automation.repeat_interval_s == 2 * 86400
    assert (automation.catchup, automation.overlap, automation.severity) == (
        "all",
        "buffer_one",
        "high",
    )


def test_definition_is_json_and_keyed_as_yaml(tmp_path: Path) -> None:
    (tmp_path / "late.yaml").write_text(GOOD)
    definition = load_automations(tmp_path).by_name("late-flights").definition()
    assert json.loads(json.dumps(definition)) == definition
    assert definition["checks"][0] == {
        "name": "no negative distance",
        "sql": "SELECT count(*) FROM flights WHERE distance < 0",
        "expect": "== 0",
    }
    assert definition["catchup_window"] == 1800.0
    assert definition["repeat_interval"] == 172800.0
    assert "path" not in definition
    assert "line" not in definition


def test_defaults_and_goal_only_warning(tmp_path: Path) -> None:
    (tmp_path / "a.yml").write_text("name: goal-only\nsource: flights\ngoal: Look around.\n")
    result = load_automations(tmp_path / "a.yml")
    automation = result.by_name("goal-only")
    assert automation.definition() == {
        "name": "goal-only",
        "description": None,
        "enabled": True,
        "schedule": None,
        "day_match": None,
        "timezone": "UTC",
        "source": "flights",
        "goal": "Look around.",
        "instructions": None,
        "checks": [],
        "severity": "medium",
        "owner": None,
        "tags": [],
        "notify": [],
        "timeout_s": 300.0,
        "model": None,
        "catchup": "latest",
        "catchup_window": 3600.0,
        "overlap": "skip",
        "repeat_interval": 86400.0,
        "repin_after": None,
    }
    assert result.warnings == [
        f"{tmp_path / 'a.yml'}:1:1: goal-only: no checks: needs an LLM to run; "
        "without one it is skipped"
    ]


def test_a_goal_only_automation_in_a_list_is_warned_at_its_line_and_column(
    tmp_path: Path,
) -> None:
    (tmp_path / "x.yaml").write_text(
        "automations:\n"
        "  - name: first-goal\n    source: flights\n    goal: Every flight has a plane.\n"
        "  - name: second-goal\n    source: flights\n    goal: Every plane flew.\n"
    )
    result = load_automations(tmp_path, known_sources={"flights"})
    why = "no checks: needs an LLM to run; without one it is skipped"
    assert result.warnings == [
        f"{tmp_path / 'x.yaml'}:2:5: first-goal: {why}",
        f"{tmp_path / 'x.yaml'}:5:5: second-goal: {why}",
    ]


def test_mixed_folder_loads_the_good_files_in_order(tmp_path: Path) -> None:
    (tmp_path / "b_good.yaml").write_text(GOOD)
    (tmp_path / "a_good.yml").write_text(
        "automations:\n"
        "  - name: first\n    source: warehouse\n    goal: One.\n"
        "  - name: second\n    source: flights\n    goal: Two.\n    enabled: false\n"
    )
    (tmp_path / "c_bad.yaml").write_text("name: bad\nsource: flights\ngoal: x\nsevrity: low\n")
    (tmp_path / ".hidden.yaml").write_text("not: [valid")
    (tmp_path / "notes.txt").write_text("not: [valid")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "x.yaml").write_text("not: [valid")
    result = load_automations(tmp_path, known_sources=SOURCES)
    assert [a.name for a in result.automations] == ["first", "second", "late-flights"]
    assert [a.line for a in result.automations] == [2, 5, 1]
    assert [e.location_message() for e in result.errors] == [
        f"{tmp_path / 'c_bad.yaml'}:4:1: sevrity: unknown field 'sevrity' "
        "(did you mean 'severity'?)"
    ]
    assert len(result.warnings) == 2
    with pytest.raises(KeyError):
        result.by_name("bad")


def test_error_fields_are_set(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text(
        "automations:\n  - name: x\n    source: flights\n    goal: y\n    checks: 3\n"
    )
    [error] = load_automations(tmp_path).errors
    assert (error.path, error.line, error.column, error.field) == (
        str(tmp_path / "a.yaml"),
        5,
        13,
        "automations.0.checks",
    )
    assert error.message == "input should be a valid list (got 3)"


def test_a_problem_names_the_automation_it_is_in(tmp_path: Path) -> None:
    (tmp_path / "pair.yaml").write_text(
        "automations:\n  - {name: good-one, source: flights, goal: g}\n"
        "  - {name: bad-one, source: flights, goal: g, checks: 3}\n"
    )
    (tmp_path / "syntax.yaml").write_text("name: [\n")
    problems = load_automations(tmp_path, known_sources={"flights"}).errors
    assert [(p.automation, Path(p.path or "").name) for p in problems] == [
        ("bad-one", "pair.yaml"),
        (None, "syntax.yaml"),
    ]
    assert problems[0].concerns(["bad-one"]) and not problems[0].concerns(["good-one"])
    assert problems[1].concerns(["syntax"])  # no name could be read: the file's name counts


@dataclass(frozen=True)
class Text:
    name: str
    text: str
    errors: tuple[str, ...]
    loads: tuple[str, ...] = ()


BASE = "source: flights\ngoal: g\n"
TEXTS = [
    Text(
        "unknown source skipped without a list", "name: a\nsource: nowhere\ngoal: g\n", (), ("a",)
    ),
    Text(
        "day_match given",
        f"name: a\n{BASE}schedule: 0 6 1 * mon\nday_match: all\n",
        (),
        ("a",),
    ),
    Text(
        "day_match given though not needed",
        f"name: a\n{BASE}schedule: 0 6 * * mon\nday_match: any\n",
        (),
        ("a",),
    ),
    Text("alias schedule", f"name: a\n{BASE}schedule: '@Hourly'\n", (), ("a",)),
    Text(
        "impossible date",
        f"name: a\n{BASE}schedule: 0 0 31 2 *\n",
        (
            "4:11: schedule: invalid cron expression: [0 0 31 2 *] is not acceptable. "
            "Day(s) [31] can never occur in month(s) [2]",
        ),
    ),
    Text(
        "croniter finds no date",
        f"name: a\n{BASE}schedule: 0 0 1 * 1#2\nday_match: any\n",
        (
            "4:11: schedule: croniter cannot compute any date for '0 0 1 * 1#2' with day_match: "
            "any (failed to find next date), so it would never run; write the days another way "
            "(e.g. without '#' or 'L' beside a day of the month)",
        ),
    ),
    Text(
        "the first of January is never a fifth Monday",
        f"name: a\n{BASE}schedule: 0 0 1 1 1#5\nday_match: all\n",
        (
            "4:11: schedule: croniter cannot compute any date for '0 0 1 1 1#5' with day_match: "
            "all (failed to find next date), so it would never run; write the days another way "
            "(e.g. without '#' or 'L' beside a day of the month)",
        ),
    ),
    Text(
        "a rare date still runs",
        f"name: a\n{BASE}schedule: 0 0 29 2 1\nday_match: all\n",
        (),
        ("a",),
    ),
    Text(
        "seven fields",
        f"name: a\n{BASE}schedule: 0 0 6 * * ? 2030\n",
        (f"4:11: schedule: 7 fields: looks like a Quartz cron with seconds and year; {FIVE}",),
    ),
    Text(
        "bad day_match",
        f"name: a\n{BASE}schedule: 0 6 1 * mon\nday_match: both\n",
        ("5:12: day_match: input should be 'any' or 'all' (got 'both')",),
    ),
    Text(
        "two documents",
        f"name: a\n{BASE}---\nname: b\n{BASE}",
        (
            "4:1: not valid YAML: but found another document (expected a single document in "
            "the stream); one YAML document per file: list several under 'automations:'",
        ),
    ),
    Text(
        "other keys beside automations",
        "automations:\n  - name: a\n    source: flights\n    goal: g\nowner: me\n",
        ("5:1: owner: a file with 'automations:' holds nothing else",),
        ("a",),
    ),
    Text(
        "automations not a list",
        "automations: {name: a}\n",
        ("1:14: automations: expected a list of automations, got a mapping",),
    ),
    Text(
        "entry not a mapping",
        f"automations:\n  - just text\n  - name: b\n    {BASE.replace(chr(10), chr(10) + '    ')}",
        ("2:5: automations.0: expected an automation (a mapping of fields), got text",),
        ("b",),
    ),
    Text(
        "check not a mapping",
        f"name: a\n{BASE}checks:\n  - SELECT 1\n",
        ("5:5: checks.0: expected a mapping of fields, got text",),
    ),
    Text(
        "check missing expect",
        f"name: a\n{BASE}checks:\n  - name: c\n    sql: SELECT 1\n",
        ("5:5: checks.0.expect: required field is missing",),
    ),
    Text(
        "duplicate check names",
        f"name: a\n{BASE}checks:\n"
        "  - {name: c, sql: SELECT 1, expect: == 1}\n"
        "  - {name: c, sql: SELECT 2, expect: == 2}\n",
        ("6:12: checks.1.name: duplicate check name 'c' (also checks.0)",),
    ),
    Text(
        "bad check name",
        f"name: a\n{BASE}checks:\n  - {{name: '-c', sql: SELECT 1, expect: == 1}}\n",
        (
            "5:12: checks.0.name: a check name is letters, digits, spaces and '_.-', starting "
            "with a letter or digit, at most 100 characters (got '-c')",
        ),
    ),
    Text(
        "expect not text",
        f"name: a\n{BASE}checks:\n  - {{name: c, sql: SELECT 1, expect: 0}}\n",
        ("5:38: checks.0.expect: expect must be text such as '== 0' (got 0)",),
    ),
    Text(
        "expect read as a tag",
        f"name: a\n{BASE}checks:\n  - name: c\n    sql: SELECT 1\n    expect: !=0\n",
        (
            "7:13: checks.0.expect: YAML reads '!=0' as a tag; quote a value that starts with "
            "'!', e.g. expect: \"!= 0\"",
        ),
    ),
    Text(
        "string enabled",
        f"name: a\n{BASE}enabled: 'no'\n",
        ("4:10: enabled: input should be a valid boolean (got 'no')",),
    ),
    Text(
        "localtime zone",
        f"name: a\n{BASE}timezone: localtime\n",
        ("4:11: timezone: unknown time zone 'localtime'; use an IANA name such as 'Europe/Paris'",),
    ),
    Text(
        "anchors and merge keys",
        "automations:\n"
        "  - &base {name: a, source: flights, goal: g, tags: [x]}\n"
        "  - <<: *base\n    name: b\n    goal: overridden, not a duplicate key\n",
        (),
        ("a", "b"),
    ),
    Text(
        "recursive alias",
        "automations: &a\n  - *a\n",
        ("1:14: automations.0: nested too deep, or a recursive alias",),
    ),
    Text(
        "recursive merge key",
        "automations:\n  - &a {name: a, source: flights, goal: g, <<: *a}\n",
        ("2:5: automations.0: nested too deep, or a recursive alias",),
    ),
]


@pytest.mark.parametrize("case", TEXTS, ids=lambda c: c.name)
def test_text(case: Text, tmp_path: Path) -> None:
    path = tmp_path / "a.yaml"
    path.write_text(case.text)
    result = load_automations(path, known_sources=None if "skipped" in case.name else SOURCES)
    assert [m.replace(f"{path}:", "") for m in map(str, result.errors)] == list(case.errors)
    assert [a.name for a in result.automations] == list(case.loads)


def test_missing_path(tmp_path: Path) -> None:
    result = load_automations(tmp_path / "nowhere")
    assert [str(e) for e in result.errors] == [f"{tmp_path / 'nowhere'}: no such file or folder"]


def test_empty_folder_warns(tmp_path: Path) -> None:
    result = load_automations(tmp_path)
    assert (result.automations, result.errors) == ([], [])
    assert result.warnings == [f"{tmp_path}: no automation files (*.yaml, *.yml)"]


def test_automation_built_in_code() -> None:
    automation = Automation.model_validate(
        {
            "name": "x",
            "source": "flights",
            "goal": "g",
            "checks": [{"name": "c", "sql": "SELECT 1", "expect": "between 0 and 2"}],
            "catchup_window": "90s",
            "path": "t.yaml",
            "line": 1,
        }
    )
    assert automation.checks[0].expect == Expectation("between", Decimal(0), Decimal(2))
    assert automation.catchup_window_s == 90.0
    same = Check(name="c", sql="SELECT 1", expect=Expectation("between", Decimal(0), Decimal(2)))
    assert automation.checks[0] == same


@dataclass(frozen=True)
class Cron:
    expression: str
    valid: bool
    day_match: bool = False


CRONS = [
    Cron("*/15 * * * *", True),
    Cron("0 6 * * 1-5", True),
    Cron("0 6 1 * mon", True, day_match=True),
    Cron("0 6 L * fri", True, day_match=True),
    Cron("0 6 1-31 * mon", True, day_match=True),  # croniter ORs: every day
    Cron("0 6 1-31 * *", True),  # croniter reads 1-31 as '*' here
    Cron("0 6 ? * mon", True),
    Cron("@daily", True),
    Cron("@weekly", True),
    Cron("@reboot", False),
    Cron("0 0 31 2 *", False),
    Cron("0 0 * * * *", False),
    Cron("0 0 * *", False),
    Cron("H * * * *", False),
    Cron("60 * * * *", False),
]


@pytest.mark.parametrize("case", CRONS, ids=lambda c: c.expression)
def test_cron(case: Cron) -> None:
    if not case.valid:
        with pytest.raises(ValueError):
            validate_cron(case.expression)
        return
    assert validate_cron(f" {case.expression} ") == case.expression
    assert needs_day_match(case.expression) is case.day_match
    assert len(cron_fields(case.expression)) == 5


def test_cron_messages() -> None:
    with pytest.raises(ValueError, match=r"^4 fields; Lookout takes 5 fields"):
        validate_cron("0 0 * *")
    with pytest.raises(ValueError, match=r"^unknown cron alias '@reboot'; the aliases are @mid"):
        validate_cron("@reboot")


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("0 25 * * *", "the hour field '25' is out of range: hour takes 0-23"),
        ("60 * * * *", "the minute field '60' is out of range: minute takes 0-59"),
        ("0 0 0 * *", "the day-of-month field '0' is out of range: day-of-month takes 1-31"),
        ("0 0 * 13 *", "the month field '13' is out of range: month takes 1-12 or JAN-DEC"),
        (
            "0 0 * * 8",
            "the day-of-week field '8' is out of range: "
            "day-of-week takes 0-7 (0 and 7 are Sunday) or SUN-SAT",
        ),
        (
            "*/0 * * * *",
            "the minute field '*/0' has a step of 0, which is not acceptable: minute takes 0-59",
        ),
        (
            "0 0 * * 5L",
            "the day-of-week field '5L' is not acceptable: "
            "day-of-week takes 0-7 (0 and 7 are Sunday) or SUN-SAT",
        ),
        # each field is fine alone: croniter's reason, which names the clash
        (
            "0 0 31 2 *",
            "[0 0 31 2 *] is not acceptable. Day(s) [31] can never occur in month(s) [2]",
        ),
    ],
)
def test_a_cron_field_out_of_range_is_named_with_its_range(expression: str, message: str) -> None:
    with pytest.raises(ValueError) as caught:
        validate_cron(expression)
    assert str(caught.value) == f"invalid cron expression: {message}"


@dataclass(frozen=True)
class Duration:
    value: object
    seconds: float | None


DURATIONS = [
    Duration(90, 90.0),
    Duration(1.5, 1.5),
    Duration("90s", 90.0),
    Duration("30m", 1800.0),
    Duration("1h", 3600.0),
    Duration("1.5h", 5400.0),
    Duration("2d", 172800.0),
    Duration(" 2 d ", 172800.0),
    Duration("1 hour", None),
    Duration("3600", None),
    Duration("", None),
    Duration(0, None),
    Duration("0s", None),
    Duration(-1, None),
    Duration(True, None),
    Duration(float("inf"), None),
    Duration(None, None),
    Duration("3650d", 315_360_000.0),
    Duration(315_360_000, 315_360_000.0),
    Duration("3651d", None),
    Duration("99999999999999d", None),
    Duration(1e300, None),
]


@pytest.mark.parametrize("case", DURATIONS, ids=lambda c: repr(c.value))
def test_duration(case: Duration) -> None:
    if case.seconds is None:
        with pytest.raises(ValueError):
            parse_duration(case.value)
    else:
        assert parse_duration(case.value) == case.seconds


def test_a_duration_past_ten_years_is_refused_with_its_bound() -> None:
    # A timedelta holds at most 999,999,999 days: an unbounded catchup_window made every
    # dispatch tick raise OverflowError, for every automation of the folder.
    with pytest.raises(ValueError) as caught:
        parse_duration("99999999999999d")
    assert str(caught.value) == "a duration is at most 3650 days (got '99999999999999d')"


def test_alias_bomb_is_cut_short(tmp_path: Path) -> None:
    lines = ['a0: &a0 ["x","x","x","x","x","x","x","x","x"]']
    for level in range(1, 8):
        items = ",".join([f"*a{level - 1}"] * 9)
        lines.append(f"a{level}: &a{level} [{items}]")
    (tmp_path / "bomb.yaml").write_text("\n".join(lines) + "\n")
    result = load_automations(tmp_path / "bomb.yaml")
    too_big = [e for e in result.errors if "values once aliases are expanded" in e.message]
    assert len(too_big) == 1
    assert too_big[0].message == "more than 20000 values once aliases are expanded"


NOT_OF_ITS_TYPE = [
    (
        "2024-13-45",
        "YAML reads '2024-13-45' as a timestamp, and it is not a valid one "
        "(month must be in 1..12)",
    ),
    (
        "2024-02-30 10:00:00",
        "YAML reads '2024-02-30 10:00:00' as a timestamp, and it is not "
        "a valid one (day is out of range for month)",
    ),
    ("!!int x", "YAML reads 'x' as an integer, and it is not a valid one"),
    ("!!float x", "YAML reads 'x' as a number, and it is not a valid one"),
    ("!!bool maybe", "YAML reads 'maybe' as a boolean, and it is not a valid one"),
    ("!!timestamp x", "YAML reads 'x' as a timestamp, and it is not a valid one"),
]


@pytest.mark.parametrize(("written", "problem"), NOT_OF_ITS_TYPE)
def test_a_value_that_is_not_what_its_tag_says_is_a_located_problem(
    tmp_path: Path, written: str, problem: str
) -> None:
    # SafeConstructor raised ValueError, KeyError or AttributeError here: the whole load
    # (and every dispatcher tick) failed on one typo instead of skipping that file.
    (tmp_path / "a.yaml").write_text(f"name: a\nsource: flights\ngoal: g\nowner: {written}\n")
    (tmp_path / "b.yaml").write_text("name: b\nsource: flights\ngoal: g\n")
    result = load_automations(tmp_path, known_sources=SOURCES)
    assert [e.location_message() for e in result.errors] == [
        f"{tmp_path / 'a.yaml'}:4:8: owner: {problem}; quote the value to keep it as text"
    ]
    assert [a.name for a in result.automations] == ["b"]


def test_merge_chain_is_cut_at_the_depth_limit(tmp_path: Path) -> None:
    # Each mapping merges the one before: 500 merges deep, built without recursing 500 times.
    lines = ["x-0: &a0 {k0: 1}"]
    lines += [f"x-{i}: &a{i} {{<<: *a{i - 1}, k{i}: 1}}" for i in range(1, 500)]
    (tmp_path / "chain.yaml").write_text("\n".join(lines) + "\n")
    result = load_automations(tmp_path / "chain.yaml")
    assert any(e.message == "nested too deep, or a recursive alias" for e in result.errors)


def test_folder_entries_that_are_not_files_are_errors(tmp_path: Path) -> None:
    good = "name: {}\nsource: flights\ngoal: g\n"
    (tmp_path / "a.yaml").write_text(good.format("a"))
    (tmp_path / "B.YAML").write_text(good.format("b"))  # extensions in any case are loaded
    (tmp_path / "c.Yml").write_text(good.format("c"))
    (tmp_path / "dir.yaml").mkdir()
    (tmp_path / "gone.yml").symlink_to(tmp_path / "missing" / "gone.yml")
    (tmp_path / "loop.yaml").symlink_to(tmp_path / "loop.yaml")
    os.mkfifo(tmp_path / "pipe.yaml")  # never opened: reading would block
    (tmp_path / "link.yaml").symlink_to(tmp_path / "a.yaml")
    (tmp_path / ".hidden.yaml").symlink_to(tmp_path / "nowhere")  # editor lock files
    (tmp_path / "notes.txt").write_text("not an automation")
    result = load_automations(tmp_path, known_sources=SOURCES)
    assert sorted(a.path.rsplit("/", 1)[1] for a in result.automations) == [
        "B.YAML",
        "a.yaml",
        "c.Yml",
    ]
    by_file = {Path(e.path or "").name: e.message for e in result.errors}
    assert by_file["dir.yaml"] == "a folder, not an automation file"
    assert by_file["gone.yml"].startswith("a symbolic link to ")
    assert "does not exist" in by_file["loop.yaml"]
    assert "not a regular file" in by_file["pipe.yaml"]
    assert "duplicate automation name 'a'" in by_file["link.yaml"]
    assert set(by_file) == {"dir.yaml", "gone.yml", "loop.yaml", "pipe.yaml", "link.yaml"}
    assert not any("no automation files" in w for w in result.warnings)


def test_check_computable() -> None:
    for expression, day_match in [("0 9 * * 1", None), ("0 0 29 2 1", "all"), ("@daily", None)]:
        check_computable(expression, day_match)
    for day_match in ("any", "all"):
        with pytest.raises(ValueError, match=r"^croniter cannot compute any date for '0 0 1 "):
            check_computable(" 0 0 1 * 1#2 ", day_match)


def test_a_link_out_of_the_folder_and_an_oversized_file_are_not_read(tmp_path: Path) -> None:
    folder, outside = tmp_path / "automations", tmp_path / "secrets"
    folder.mkdir()
    outside.mkdir()
    (outside / "x.yaml").write_text("name: x\nsource: flights\ngoal: g\n")
    (folder / "out.yaml").symlink_to(outside / "x.yaml")
    (folder / "big.yaml").write_bytes(b"# " + b"x" * (1 << 20) + b"\nname: big\n")
    (folder / "ok.yaml").write_text("name: ok\nsource: flights\ngoal: g\n")
    result = load_automations(folder, known_sources=SOURCES)
    assert [a.name for a in result.automations] == ["ok"]
    by_file = {Path(e.path or "").name: e.message for e in result.errors}
    assert by_file == {
        "out.yaml": f"a symbolic link to {outside / 'x.yaml'}, outside the automations folder;"
        " it is not read",
        "big.yaml": "cannot read: the file is over 1,048,576 bytes, the most an automation file"
        " may hold; split it",
    }
