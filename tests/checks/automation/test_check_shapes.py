from __future__ import annotations

from pathlib import Path

import pytest

from checks.automation import check_shapes
from checks.automation.check import Check
from checks.automation.check_shapes import validated_checks
from checks.automation.loader import load_automations

FILE = "name: {name}\nsource: flights\ngoal: g\nchecks:\n{checks}"
ROWS = "  - {name: rows, row_count: {table: orders}}\n"


def test_the_same_written_check_is_one_shared_check(tmp_path: Path) -> None:
    for name in ("a", "b"):
        (tmp_path / f"{name}.yaml").write_text(FILE.format(name=name, checks=ROWS))
    first, second = load_automations(tmp_path).automations
    assert first.checks[0] is second.checks[0]
    assert first.checks[0].expectation.text == "> 0"
    assert first.definition()["checks"] == second.definition()["checks"]


def test_checks_written_differently_are_not_shared() -> None:
    # 1, 1.0 and true compare equal in Python; their repr tells them apart.
    written = [
        {"name": "n", "sql": "SELECT 1", "expect": "== 1", "allow_empty": value}
        for value in (True, 1, 1.0)
    ]
    checks = validated_checks(written)
    assert isinstance(checks[0], Check) and checks[0].allow_empty is True
    assert checks[1] is written[1] and checks[2] is written[2]  # strict: not validated alone


def test_a_check_that_fails_alone_keeps_its_error_at_its_place(tmp_path: Path) -> None:
    bad = "  - {name: odd, row_count: {table: orders}, expect: '== x'}\n"
    (tmp_path / "a.yaml").write_text(FILE.format(name="a", checks=ROWS + bad))
    (tmp_path / "b.yaml").write_text(FILE.format(name="b", checks=ROWS))
    result = load_automations(tmp_path)
    assert [e.location_message() for e in result.errors] == [
        f"{tmp_path / 'a.yaml'}:6:53: checks.1.expect: cannot read expect '== x'; use "
        "'== N', '!= N', '< N', '<= N', '> N', '>= N', 'between A and B' (N may be a "
        "percent like '1%' or a duration like '3h'), 'is true', 'is false', 'empty', "
        "'not empty' or 'anomaly'"
    ]
    assert [a.name for a in result.automations] == ["b"]


def test_anything_but_a_list_of_mappings_is_left_as_written() -> None:
    assert validated_checks("rows") == "rows"
    assert validated_checks([None, "x"]) == [None, "x"]


def test_the_kept_checks_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(check_shapes, "_KEPT", 2)
    monkeypatch.setattr(check_shapes, "_known", {})
    for index in range(5):
        validated_checks([{"name": f"c{index}", "sql": "SELECT 1", "expect": "== 1"}])
    assert 1 <= len(check_shapes._known) <= 2
