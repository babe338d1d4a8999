"""Identical statements of one run execute once; every check is still evaluated and reported."""

from __future__ import annotations

from typing import Any

import pytest

from checks.report import CheckOutcome
from checks.sources import Source
from checks.sources.base import QueryResult
from tests.checks.declared.shop import run

NEGATIVE = "SELECT count(*) FROM orders WHERE amount < 0"
BAD_CAST = "SELECT CAST(status AS INTEGER) FROM orders WHERE status = 'paid'"
OVERFLOW = "SELECT abs(-9223372036854775807 - 1) FROM orders WHERE status = 'paid'"
FAILING = {"sqlite": OVERFLOW, "mysql": OVERFLOW}
"""A statement the engine fails at run time where ``BAD_CAST`` is not one: SQLite and
MySQL cast 'paid' to 0, and fail an integer overflow instead."""


def counted(monkeypatch: pytest.MonkeyPatch, source: Source) -> list[str]:
    """Record every statement ``source`` executes (below the run, on the real engine)."""
    executed: list[str] = []
    execute = source._execute

    def counting(sql: str, *, max_rows: int, timeout_s: float) -> QueryResult:
        executed.append(sql)
        return execute(sql, max_rows=max_rows, timeout_s=timeout_s)

    monkeypatch.setattr(source, "_execute", counting)
    return executed


def test_identical_statements_run_once_and_each_check_is_reported(
    shop: Source, monkeypatch: pytest.MonkeyPatch
) -> None:
    executed = counted(monkeypatch, shop)
    bad = FAILING.get(shop.dialect, BAD_CAST)
    checks: list[dict[str, Any]] = [
        {"name": "no refunds", "sql": NEGATIVE, "expect": "== 0"},
        {
            "name": "one refund",
            "sql": "select COUNT(*)\n  from orders   where amount<0",
            "expect": "== 1",
        },
        {"name": "no refunds again", "sql": NEGATIVE, "expect": "== 0"},
        {"name": "five orders", "sql": "SELECT count(*) FROM orders", "expect": "== 5"},
        {"name": "bad cast", "sql": bad, "expect": "== 0"},
        {"name": "bad cast again", "sql": bad, "expect": "== 0"},
    ]
    results, evidence = run(shop, *checks)

    # One statement for the count of orders (the probe of orders folds into it) and the
    # refunds once (their count filtered to amount < 0), the failing cast once, and where
    # the engine names a column by its text, the names statement (LIMIT 0). ClickHouse's
    # function names are case-sensitive, so "select COUNT(*)" stays a query of its own
    # there, in the same shared statement.
    statements = 2 if shop.dialect == "postgres" else 3
    assert len(executed) == statements, executed
    assert len(set(executed)) == statements
    assert [r.name for r in results] == [c["name"] for c in checks]
    assert [r.value for r in results[:4]] == [1, 1, 1, 5]
    assert [r.outcome for r in results] == [
        CheckOutcome.FAILED,
        CheckOutcome.PASSED,
        CheckOutcome.FAILED,
        CheckOutcome.PASSED,
        CheckOutcome.ERROR,
        CheckOutcome.ERROR,
    ]
    assert results[4].error is not None and results[4].error == results[5].error
    assert [r.evidence_id for r in results] == ["C1", "C2", "C3", "C4", None, None]
    assert evidence["C1"].fingerprint == evidence["C3"].fingerprint
    if shop.dialect == "clickhouse":  # its result column is named as written: COUNT()
        assert (evidence["C2"].columns, evidence["C2"].rows) == (["COUNT()"], [[1]])
    else:
        assert evidence["C1"].fingerprint == evidence["C2"].fingerprint
    assert evidence["C1"].rows == evidence["C3"].rows == [[1]]
    assert evidence["C1"].sql == NEGATIVE and evidence["C2"].sql.startswith("select COUNT(*)")


def test_each_run_executes_its_statements_again(
    shop: Source, monkeypatch: pytest.MonkeyPatch
) -> None:
    executed = counted(monkeypatch, shop)
    check = {"name": "five orders", "sql": "SELECT count(*) FROM orders", "expect": "== 5"}
    first, _ = run(shop, check)
    second, _ = run(shop, check)
    assert [first[0].value, second[0].value] == [5, 5]
    assert len(executed) == 2  # the count (the probe folded in), in each run: nothing kept
