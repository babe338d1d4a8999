"""The shared edge cases, on every shop engine with the same expected values.

NULL rules of every kind, an empty scope for every kind, percents from counts, time
zones, counts past 2^31, DECIMAL(38,10) sums and bounds, names in capitals, and the
lint, in each engine's own dialect. Where an engine cannot hold a value (SQLite has no
DECIMAL), the test says so in a strict xfail.
"""

from __future__ import annotations

import re
from decimal import Decimal
from fractions import Fraction
from typing import Any

import pytest

from checks.report import CheckOutcome
from checks.sources import Source
from tests.checks.declared.shop import one, run

EMPTY = "0 rows in scope: {table} where {filter}"
TRUNCATES = re.compile(
    re.escape("COUNT(CASE WHEN status IS NULL THEN 1 END) / COUNT(*) divides an integer by an")
    + r" integer: [A-Za-z]+ "
    + re.escape(
        "drops the fraction (3 / 1000000 is 0); make one side a decimal, e.g. CAST(... AS"
        " NUMERIC) / count(*), or 100.0 * count(...) / count(*)"
    )
)
"""The integer-division warning, the engine's name in it (``PostgreSQL drops the fraction``)."""


def test_null_rules_of_every_kind(shop: Source) -> None:
    results, _ = run(
        shop,
        {
            "name": "range allows NULL",
            "range": {"table": "orders", "column": "customer_id", "min": 1, "max": 3},
        },
        {
            "name": "range counts NULL",
            "range": {
                "table": "orders",
                "column": "customer_id",
                "min": 1,
                "max": 3,
                "null": "violation",
            },
        },
        {
            "name": "values allow NULL",
            "accepted_values": {
                "table": "customers",
                "column": "email",
                "values": ["a@x.org", "c@x.org", "d@x.org"],
                "null": "allowed",
            },
        },
        {
            "name": "values count NULL",
            "accepted_values": {
                "table": "customers",
                "column": "email",
                "values": ["a@x.org", "c@x.org", "d@x.org"],
            },
        },
        {
            "name": "a NULL key is no orphan",
            "relationships": {"table": "customers", "column": "id", "to": "orders.customer_id"},
        },
        {"name": "missing counts NULL", "missing": {"table": "pairs", "column": "b"}},
    )
    assert [(r.outcome, r.value) for r in results] == [
        (CheckOutcome.FAILED, 1),  # 9 is above 3; the NULL is allowed
        (CheckOutcome.FAILED, 2),  # 9, and the NULL
        (CheckOutcome.PASSED, 0),
        (CheckOutcome.FAILED, 1),  # the NULL email
        (CheckOutcome.PASSED, 0),  # customers.id NULL: not an orphan, counted apart
        (CheckOutcome.FAILED, 1),  # (4, NULL)
    ]
    assert results[0].metrics == {
        "rows_in_scope": 5,
        "below_min": 0,
        "above_max": 1,
        "null_values": 1,
        "violations": 1,
        "compared": "violations",
    }
    assert results[4].metrics == {
        "rows_in_scope": 4,
        "orphans": 0,
        "orphan_keys": 0,
        "null_keys": 1,
        "compared": "orphans",
    }


def test_a_scope_of_only_nulls_is_not_evaluated_where_nulls_are_allowed(shop: Source) -> None:
    results, _ = run(
        shop,
        {
            "name": "range",
            "range": {
                "table": "orders",
                "column": "customer_id",
                "min": 1,
                "filter": "order_id = 4",
            },
        },
        {
            "name": "range NULL counted",
            "range": {
                "table": "orders",
                "column": "customer_id",
                "min": 1,
                "filter": "order_id = 4",
                "null": "violation",
            },
        },
        {
            "name": "values",
            "accepted_values": {
                "table": "customers",
                "column": "email",
                "values": ["a@x.org"],
                "null": "allowed",
                "filter": "id = 2",
            },
        },
        {
            "name": "duplicates",
            "duplicates": {"table": "pairs", "columns": ["a"], "filter": "a IS NULL"},
        },
        {"name": "missing", "missing": {"table": "pairs", "column": "a", "filter": "a IS NULL"}},
    )
    assert [(r.outcome, r.value) for r in results] == [
        (CheckOutcome.NOT_EVALUATED, None),
        (CheckOutcome.FAILED, 1),
        (CheckOutcome.NOT_EVALUATED, None),
        (CheckOutcome.NOT_EVALUATED, None),
        (CheckOutcome.FAILED, 2),  # missing is what counts NULLs: 2 of 2
    ]
    assert [r.reason for r in results[:4:2]] == [
        "customer_id is NULL in all 1 rows in scope: orders where order_id = 4",
        "email is NULL in all 1 rows in scope: customers where id = 2",
    ]
    assert results[3].reason == (
        "the key (a) holds a NULL in all 2 rows in scope: pairs where a IS NULL"
    )


@pytest.mark.parametrize(
    ("check", "table", "where"),
    [
        ({"row_count": {"table": "orders"}}, "orders", "order_id < 0"),
        ({"missing": {"table": "orders", "column": "status"}}, "orders", "order_id < 0"),
        ({"duplicates": {"table": "pairs", "columns": ["a"]}}, "pairs", "a < 0"),
        (
            {"accepted_values": {"table": "orders", "column": "status", "values": ["paid"]}},
            "orders",
            "order_id < 0",
        ),
        (
            {"relationships": {"table": "orders", "column": "customer_id", "to": "customers.id"}},
            "orders",
            "order_id < 0",
        ),
        (
            {"freshness": {"table": "loads", "column": "loaded_tz", "max_age": "1h"}},
            "loads",
            "id < 0",
        ),
        ({"range": {"table": "orders", "column": "amount", "min": 0}}, "orders", "order_id < 0"),
        (
            {"validity": {"table": "orders", "column": "name", "max_length": 3}},
            "orders",
            "order_id < 0",
        ),
        (
            {
                "aggregate": {"table": "orders", "column": "amount", "function": "sum"},
                "expect": "== 0",
            },
            "orders",
            "order_id < 0",
        ),
    ],
    ids=lambda v: next(iter(v)) if isinstance(v, dict) else "",
)
def test_an_empty_scope_is_not_evaluated_for_every_kind(
    shop: Source, check: dict[str, Any], table: str, where: str
) -> None:
    kind = next(iter(check))
    result = one(shop, {**check, kind: {**check[kind], "filter": where}})
    assert (result.outcome, result.passed, result.value) == (CheckOutcome.NOT_EVALUATED, None, None)
    assert result.reason == EMPTY.format(table=table, filter=where)


def test_a_percent_is_the_exact_fraction_of_its_counts(shop: Source) -> None:
    scope = {"table": "customers", "column": "email", "filter": "id IS NOT NULL"}
    results, _ = run(
        shop,
        {"name": "at most 33.33", "missing": scope, "expect": "<= 33.33%"},
        {"name": "at most 33.34", "missing": scope, "expect": "<= 33.34%"},
        {"name": "a third", "missing": scope, "expect": "<= 33.333333333%"},
    )
    # 1 NULL email of the 3 customers with an id: 100/3 %, never a rounded 33.33.
    assert [(r.outcome, r.value) for r in results] == [
        (CheckOutcome.FAILED, float(Fraction(100, 3))),
        (CheckOutcome.PASSED, float(Fraction(100, 3))),
        (CheckOutcome.FAILED, float(Fraction(100, 3))),
    ]
    assert results[0].metrics["missing"] == 1 and results[0].metrics["rows_in_scope"] == 3


def test_an_automation_in_another_zone_reads_instants_as_instants(shop: Source) -> None:
    results, _ = run(
        shop,
        {"name": "zoned", "freshness": {"table": "loads", "column": "loaded_tz", "max_age": "1h"}},
        {"name": "naive", "freshness": {"table": "loads", "column": "loaded_at", "max_age": "1h"}},
        {
            "name": "days before today",
            "sql": "SELECT count(*) FROM loads WHERE day < CURRENT_DATE",
            "expect": "== 2",
        },
        timezone="Asia/Tokyo",
    )
    zoned, naive, today = results
    # The automation's zone moves no instant: 01:30 UTC is 1h30m before 03:00 UTC anywhere,
    # and a naive timestamp is read as UTC unless the check names its own timezone:.
    assert (zoned.outcome, zoned.value) == (CheckOutcome.FAILED, 5400.0)
    assert zoned.metrics["latest"] == "2024-01-10T01:30:00+00:00"
    assert (naive.outcome, naive.value) == (CheckOutcome.FAILED, -7200.0)
    assert (today.outcome, today.value) == (CheckOutcome.PASSED, 2)
    assert today.warnings == [
        "CURRENT_DATE is read in UTC (sessions run in UTC), not in Asia/Tokyo, this"
        " automation's time zone; for its local time write (now() AT TIME ZONE 'Asia/Tokyo'),"
        " and ::date for its local date"
    ]


def test_counts_past_two_to_the_31_come_back_as_exact_python_ints(shop: Source) -> None:
    results, _ = run(
        shop,
        {"name": "sum", "sql": "SELECT sum(id) FROM tiny", "expect": "== 499999500000"},
        {"name": "product", "sql": "SELECT count(*) * 4096 FROM tiny", "expect": "> 2147483647"},
        {"name": "rows", "row_count": {"table": "tiny"}, "expect": "== 1000000"},
    )
    assert [(r.outcome, r.value) for r in results] == [
        (CheckOutcome.PASSED, 499_999_500_000),
        (CheckOutcome.PASSED, 4_096_000_000),
        (CheckOutcome.PASSED, 1_000_000),
    ]
    assert [type(r.value) for r in results] == [int, int, int]


TOP = "12345678901234567890.1234567890"
BOTTOM = "-12345678901234567890.1234567889"
NEXT = "12345678901234567890.1234567891"
"""``TOP`` and the next DECIMAL(38,10) value: one double, within any float tolerance."""


def test_decimal_38_10_sums_and_bounds_are_exact(
    shop: Source, request: pytest.FixtureRequest
) -> None:
    if shop.dialect == "sqlite":
        request.applymarker(
            pytest.mark.xfail(
                strict=True,
                reason="SQLite has no DECIMAL: NUMERIC affinity stores each value as a double"
                " (about 16 digits), so the sum of ledger is not 0.0000000002 there",
            )
        )
    results, _ = run(
        shop,
        {"name": "sum", "sql": "SELECT sum(amount) FROM ledger", "expect": "== 0.0000000002"},
        {"name": "max", "sql": "SELECT max(amount) FROM ledger", "expect": f"== {TOP}"},
        {"name": "below max", "sql": "SELECT max(amount) FROM ledger", "expect": f"< {TOP}"},
        {"name": "below next", "sql": "SELECT max(amount) FROM ledger", "expect": f"< {NEXT}"},
        {"name": "next", "sql": "SELECT max(amount) FROM ledger", "expect": f"== {NEXT}"},
        {
            "name": "in range",
            "range": {"table": "ledger", "column": "amount", "min": BOTTOM, "max": TOP},
        },
        {
            "name": "one digit over",
            "range": {
                "table": "ledger",
                "column": "amount",
                "min": BOTTOM,
                "max": "12345678901234567890.1234567889",
            },
        },
    )
    # Compared exactly as the engine's decimals; the value shown is JSON's double.
    top = float(Decimal(TOP))
    assert [(r.outcome, r.value) for r in results] == [
        (CheckOutcome.PASSED, 2e-10),
        (CheckOutcome.PASSED, top),
        (CheckOutcome.FAILED, top),
        (CheckOutcome.PASSED, top),  # as doubles TOP and NEXT are one number
        (CheckOutcome.FAILED, top),
        (CheckOutcome.PASSED, 0),
        (CheckOutcome.FAILED, 1),
    ]
    assert results[6].metrics["above_max"] == 1


def test_names_in_capitals_are_found_whatever_the_case_written(shop: Source) -> None:
    results, _ = run(
        shop,
        {"name": "lower table", "row_count": {"table": "refunds"}, "expect": "== 2"},
        {"name": "capital table", "row_count": {"table": "Orders"}, "expect": "== 5"},
        {"name": "lower column", "missing": {"table": "REFUNDS", "column": "amount"}},
        {"name": "as created", "range": {"table": "Refunds", "column": "Amount", "min": 0}},
    )
    assert [(r.outcome, r.value) for r in results] == [
        (CheckOutcome.PASSED, 2),
        (CheckOutcome.PASSED, 5),
        (CheckOutcome.FAILED, 1),
        (CheckOutcome.PASSED, 0),
    ]


def test_the_lint_in_each_dialect(shop: Source) -> None:
    results, _ = run(
        shop,
        {
            "name": "not in",
            "sql": "SELECT count(*) FROM orders WHERE status NOT IN ('paid', 'refunded')",
            "expect": "== 1",
        },
        {
            "name": "ratio",
            "sql": "SELECT count(CASE WHEN status IS NULL THEN 1 END) / count(*) FROM orders",
            "expect": "< 1",
        },
        {
            "name": "safe ratio",
            "sql": "SELECT CAST(count(CASE WHEN status IS NULL THEN 1 END) AS DECIMAL(10,4))"
            " / count(*) FROM orders",
            "expect": "< 1",
        },
    )
    not_in, ratio, safe = results
    # 'lost' only: NOT IN is never true for the NULL status, which the lint says.
    assert (not_in.outcome, not_in.value) == (CheckOutcome.PASSED, 1)
    assert not_in.warnings == [
        "status NOT IN (...) is never true where status is NULL, so those rows are skipped;"
        " say what a NULL means: (status IS NULL OR status NOT IN (...)), or status IS NOT"
        " NULL AND ..."
    ]
    # The lint warns exactly where the engine truncates: 1 / 5 is 0 there, 0.2 elsewhere.
    if ratio.value == 0:
        (warning,) = ratio.warnings
        assert TRUNCATES.fullmatch(warning), warning
    else:
        assert (ratio.value, ratio.warnings) == (0.2, [])
    assert safe.warnings == []
