"""``warn:`` beside ``expect:``: refused at load unless stricter; ``warned`` when broken alone."""

from __future__ import annotations

import time
from pathlib import Path

import duckdb
import pytest

from checks.automation.loader import load_automations
from checks.declared.check import run_checks
from checks.finding import decide_from_checks
from checks.report import CheckOutcome, Finding, Status
from checks.settings.limits import Limits
from checks.sources import DuckDBQuerySource, Source
from tests.checks.declared.shop import automation, one, run

EMAILS = {
    "name": "emails",
    "missing": {"table": "customers", "column": "email"},
    "warn": "<= 1%",
    "expect": "<= 5%",
}


def _customers(tmp_path: Path, rows: int, missing: int) -> Source:
    path = tmp_path / f"customers_{rows}_{missing}.duckdb"
    with duckdb.connect(str(path)) as conn:
        conn.execute(
            "CREATE TABLE customers AS SELECT range AS id, "
            f"CASE WHEN range < {missing} THEN NULL ELSE 'c' || range || '@x.org' END AS email "
            f"FROM range({rows})"
        )
    return DuckDBQuerySource("shop", path, Limits())


@pytest.mark.parametrize(
    ("rows", "missing", "outcome", "reason", "line"),
    [
        (
            100,
            3,
            CheckOutcome.WARNED,
            "beyond the warning level <= 1%",
            "- WARNED: **emails** — 3 of 100 rows missing (3.00 %); "
            "beyond the warning level <= 1% (expected <= 5%) [C1]",
        ),
        (
            200,
            1,
            CheckOutcome.PASSED,
            None,
            "- passed: **emails** — 1 of 200 rows missing (0.50 %) (expected <= 5%) [C1]",
        ),
        (
            100,
            7,
            CheckOutcome.FAILED,
            None,
            "- FAILED: **emails** — 7 of 100 rows missing (7.00 %) (expected <= 5%) [C1, S1]",
        ),
    ],
    ids=["3% warned", "0.5% passed", "7% failed"],
)
def test_the_emails_example_warns_between_its_two_levels(
    tmp_path: Path,
    rows: int,
    missing: int,
    outcome: CheckOutcome,
    reason: str | None,
    line: str,
) -> None:
    source = _customers(tmp_path, rows, missing)
    results, _ = run_checks(automation(EMAILS), source, Limits(), deadline=time.monotonic() + 60)
    result = results[0]
    assert (result.outcome, result.reason, result.warn) == (outcome, reason, "<= 1%")
    assert result.metrics["missing"] == missing
    assert result.to_dict()["outcome"] == str(outcome)
    assert result.to_dict()["warn"] == "<= 1%"
    decision = decide_from_checks(results)
    first = decision.summary.splitlines()[0]
    if outcome is CheckOutcome.WARNED:
        assert (decision.status, decision.finding) == (Status.COMPLETED, Finding.CLEAR)
        assert first == "**Clear** — the check passed; 1 warning (on **emails**)."
    elif outcome is CheckOutcome.PASSED:
        assert first == "**Clear** — the check passed."
    else:
        assert decision.finding is Finding.NEEDS_ATTENTION
        assert first == "**Needs attention** — 1 failed of 1 check."
    assert decision.summary.splitlines()[-1] == line


def test_the_percent_is_judged_exactly_from_the_counts(tmp_path: Path) -> None:
    # 1 of 3 is 33.333…%: a float would meet '< 33.333333333334%' within its tolerance
    source = _customers(tmp_path, 3, 1)
    check = {**EMAILS, "warn": "<= 33.3333333333%", "expect": "<= 50%"}
    assert one(source, check).outcome is CheckOutcome.WARNED
    assert one(source, {**check, "warn": "<= 33.3333333334%"}).outcome is CheckOutcome.PASSED


def test_a_raw_sql_check_warns_and_keeps_its_failures(tmp_path: Path) -> None:
    source = _customers(tmp_path, 100, 3)
    query = "SELECT count(*) FROM customers WHERE email IS NULL"
    share = "SELECT count(*) FILTER (WHERE email IS NULL), count(*) FROM customers"
    results, _ = run(
        source,
        {"name": "nulls", "sql": query, "warn": "== 0", "expect": "<= 5"},
        {"name": "share", "sql": share, "warn": "< 2%", "expect": "<= 3%"},
        {"name": "fine", "sql": query, "warn": "<= 3", "expect": "<= 5"},
        {"name": "broken", "sql": query, "warn": "== 0", "expect": "<= 2"},
    )
    nulls, share_result, fine, broken = results
    assert (nulls.outcome, nulls.value, nulls.reason) == (
        CheckOutcome.WARNED,
        3,
        "beyond the warning level == 0",
    )
    assert (share_result.outcome, share_result.value) == (CheckOutcome.WARNED, 3.0)
    assert (fine.outcome, fine.reason) == (CheckOutcome.PASSED, None)
    assert (broken.outcome, broken.reason) == (CheckOutcome.FAILED, None)  # never softened
    decision = decide_from_checks(results)
    assert decision.summary.splitlines()[0] == (
        "**Needs attention** — 1 failed of 4 checks; 2 warnings (on **nulls**, **share**)."
    )


def test_an_anomaly_check_is_left_as_it_is(tmp_path: Path) -> None:
    source = _customers(tmp_path, 100, 3)
    result = one(
        source,
        {"missing": {"table": "customers", "column": "email"}, "expect": "anomaly"},
    )
    assert (result.outcome, result.warn) == (CheckOutcome.NOT_EVALUATED, None)
    assert result.reason == "0 of 7 points of history"  # judged as before: warn plays no part


def test_the_shop_warns_on_every_engine(shop: Source) -> None:
    results, _ = run(
        shop,
        {**EMAILS, "warn": "<= 20%", "expect": "<= 30%"},  # 1 of 4 emails missing: 25 %
        {"name": "orders", "row_count": {"table": "orders"}, "warn": ">= 10", "expect": ">= 1"},
        {
            "name": "fresh",
            "freshness": {"table": "loads", "column": "loaded_tz", "max_age": "3h"},
            "warn": "<= 1h",  # the newest is 1h30m old
        },
        {
            "name": "no status",
            "sql": "SELECT count(*) FROM orders WHERE status IS NULL",
            "warn": "== 0",
            "expect": "<= 2",
        },
        {"name": "calm", "row_count": {"table": "orders"}, "warn": "== 5", "expect": ">= 1"},
    )
    outcomes = [(r.name, r.outcome, r.value) for r in results]
    assert outcomes == [
        ("emails", CheckOutcome.WARNED, 25.0),
        ("orders", CheckOutcome.WARNED, 5),
        ("fresh", CheckOutcome.WARNED, 5400.0),
        ("no status", CheckOutcome.WARNED, 1),
        ("calm", CheckOutcome.PASSED, 5),
    ]
    decision = decide_from_checks(results)
    assert (decision.status, decision.finding) == (Status.COMPLETED, Finding.CLEAR)
    assert decision.summary.splitlines()[0] == (
        "**Clear** — all 5 checks passed; 4 warnings "
        "(on **emails**, **orders**, **fresh**, **no status**)."
    )


def _load(tmp_path: Path, check: str) -> list[str]:
    path = tmp_path / "warn.yaml"
    path.write_text(
        "name: warn-levels\nsource: shop\ngoal: Emails are there.\nchecks:\n" + check,
        encoding="utf-8",
    )
    result = load_automations(path, known_sources={"shop"})
    return [e.location_message().replace(f"{tmp_path}/", "") for e in result.errors]


GOOD_LINE = (
    '  - {name: emails, missing: {table: customers, column: email}, warn: "<= 1%", '
    'expect: "<= 5%"}\n'
)


@pytest.mark.parametrize(
    ("check", "message"),
    [
        (
            "  - name: emails\n    missing: {table: customers, column: email}\n"
            '    warn: "<= 5%"\n    expect: "<= 1%"\n',
            "warn.yaml:7:11: checks.0.warn: warn: '<= 5%' is looser than expect: '<= 1%'; "
            "expect is the stricter one, so every value breaking warn fails first and none "
            "would warn. warn is the stricter bound: swap them (warn: '<= 1%', expect: '<= 5%')",
        ),
        (
            '  - name: same\n    sql: SELECT 1\n    warn: "<= 5"\n    expect: "<= 5"\n',
            "warn.yaml:7:11: checks.0.warn: warn: '<= 5' allows the same values as expect: "
            "'<= 5', so it would never warn; make warn the stricter bound",
        ),
        (
            '  - name: wide\n    sql: SELECT 1\n    warn: between 2 and 8\n    expect: "<= 5"\n',
            "warn.yaml:7:11: checks.0.warn: warn: 'between 2 and 8' allows values that expect: "
            "'<= 5' fails, so it is not stricter; a warning level allows only values expect "
            "allows",
        ),
        (
            "  - name: units\n    missing: {table: customers, column: email}\n"
            '    warn: "== 0"\n    expect: "<= 5%"\n',
            "warn.yaml:7:11: checks.0.warn: warn: '== 0' compares a number but expect: "
            "'<= 5%' compares a percent; warn takes the same kind of bound as expect",
        ),
        (
            "  - name: history\n    row_count: {table: customers}\n"
            '    warn: "> 10"\n    expect: anomaly\n',
            "warn.yaml:7:11: checks.0.warn: warn: does not go with an anomaly (warn: '> 10', "
            "expect: 'anomaly'); an anomaly is judged against the check's history with "
            "one band, so use fixed bounds in both, or leave warn out",
        ),
        (
            '  - name: typo\n    sql: SELECT 1\n    warn: "= 0"\n    expect: "<= 5"\n',
            "warn.yaml:7:11: checks.0.warn: cannot read warn '= 0'; use '== N', '!= N', '< N', "
            "'<= N', '> N', '>= N', 'between A and B' (N may be a percent like '1%' or a "
            "duration like '3h'), 'is true', 'is false', 'empty', 'not empty' or 'anomaly'",
        ),
        (
            "  - name: flag\n    sql: SELECT true\n    warn: is true\n    expect: is false\n",
            "warn.yaml:7:11: checks.0.warn: warn: 'is true' cannot be stricter than expect: "
            "'is false': a boolean has no warning level",
        ),
    ],
    ids=["looser", "same", "overlapping", "units", "anomaly", "unreadable", "boolean"],
)
def test_a_warn_that_is_not_stricter_is_refused_at_its_place(
    tmp_path: Path, check: str, message: str
) -> None:
    assert _load(tmp_path, check) == [message]


def test_a_stricter_warn_loads_and_dumps_back(tmp_path: Path) -> None:
    assert _load(tmp_path, GOOD_LINE) == []
    loaded = automation(EMAILS)
    check = (loaded.checks or [])[0]
    assert check.warn is not None and check.warn.text == "<= 1%"
    dumped = check.model_dump()
    assert list(dumped) == ["name", "expect", "warn", "missing"]
    assert dumped["warn"] == "<= 1%"
    assert (
        "warn"
        not in automation({"name": "x", "sql": "SELECT 1", "expect": "== 1"}).model_dump()[
            "checks"
        ][0]
    )
