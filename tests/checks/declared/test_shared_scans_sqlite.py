"""Shared statements on SQLite (not in the shop's engines): the same results as run apart."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from checks.report import CheckOutcome
from checks.settings.limits import Limits
from checks.settings.sources import SQLAlchemySource
from checks.sources import Source, SQLQuerySource
from tests.checks.declared.test_shared_scans import held, recorded, run, shown

CHECKS: list[dict[str, Any]] = [
    {"name": "rows", "row_count": {"table": "orders"}},
    {"name": "status set", "missing": {"table": "orders", "column": "status"}},
    {
        "name": "known statuses",
        "accepted_values": {"table": "orders", "column": "status", "values": ["paid"]},
    },
    {"name": "amounts", "range": {"table": "orders", "column": "amount", "min": 0}},
    {"name": "raw named", "sql": "SELECT sum(amount) AS total FROM orders", "expect": "> 0"},
    {"name": "raw unnamed", "sql": "SELECT count(*) FROM orders", "expect": "== 4"},
    {"name": "ids once", "duplicates": {"table": "orders", "columns": ["id"]}},
    {
        "name": "customers exist",
        "relationships": {"table": "orders", "column": "customer_id", "to": "customers.id"},
    },
    {"name": "empty", "missing": {"table": "empty_t", "column": "id"}},
    {"name": "empty raw", "sql": "SELECT count(*) AS n FROM empty_t", "expect": "== 0"},
]


@pytest.fixture
def lite(tmp_path: Path) -> Iterator[Source]:
    path = tmp_path / "shop.db"
    with sqlite3.connect(path) as conn:
        conn.executescript(
            "CREATE TABLE orders (id INTEGER, amount REAL, status TEXT, customer_id INTEGER);"
            "INSERT INTO orders VALUES (1, 10.5, 'paid', 1), (2, -1, NULL, 2),"
            " (2, 5, 'lost', 9), (4, 7.25, 'paid', NULL);"
            "CREATE TABLE customers (id INTEGER); INSERT INTO customers VALUES (1), (2);"
            "CREATE TABLE empty_t (id INTEGER);"
        )
    url = f"sqlite:///{path}"
    with SQLQuerySource("shop", SQLAlchemySource(type="sqlalchemy", url=url), Limits()) as source:
        yield source


def test_sqlite_shared_and_apart_give_the_same_results(
    lite: Source, monkeypatch: pytest.MonkeyPatch
) -> None:
    sent = recorded(monkeypatch, lite)
    apart, apart_evidence, _ = run(lite, CHECKS, shared=False)
    statements_apart = len(sent)
    sent.clear()
    together, evidence, told = run(lite, CHECKS, shared=True)

    assert [shown(r) for r in together] == [shown(r) for r in apart]
    assert sorted(map(held, evidence.values())) == sorted(map(held, apart_evidence.values()))
    assert [t["checks"] for t in told] == [
        ["rows", "status set", "known statuses", "amounts", "raw named", "raw unnamed"],
        ["empty", "empty raw"],
    ]
    unnamed = evidence[together[5].evidence_id or ""]
    assert unnamed.columns == ["COUNT(*)"]  # SQLite names it by its text, shared or not
    assert [r.outcome for r in together[:6]] == [
        CheckOutcome.PASSED,
        CheckOutcome.FAILED,
        CheckOutcome.FAILED,
        CheckOutcome.FAILED,
        CheckOutcome.PASSED,
        CheckOutcome.PASSED,
    ]
    samples = sum(1 for e in evidence if e.startswith("S"))
    # 2 shared, duplicates and relationships alone, and the failed checks' samples;
    # apart: 6 + 1 counts, the probes of orders and empty_t (the empty raw check not run).
    assert len(sent) == 2 + 2 + samples
    assert statements_apart == 2 + samples + 6 + 1 + 2
