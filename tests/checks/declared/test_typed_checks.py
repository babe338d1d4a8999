"""Every typed kind on every shop engine, with the exact numbers it reports."""

from __future__ import annotations

import pytest

from checks.kinds.accepted_values import AcceptedValues
from checks.report import CheckOutcome
from checks.sources import Source
from tests.checks.declared.shop import one, run


def test_row_count(shop: Source) -> None:
    result = one(shop, {"row_count": {"table": "orders"}})
    assert (result.outcome, result.value, result.expect) == (CheckOutcome.PASSED, 5, "> 0")
    assert result.metrics == {"rows_in_scope": 5, "compared": "rows_in_scope"}
    assert result.sample_id is None
    exact = one(
        shop, {"row_count": {"table": "orders", "filter": "name = 'Bob'"}, "expect": "== 2"}
    )
    assert (exact.outcome, exact.value) == (CheckOutcome.PASSED, 2)


def test_missing_counts_nulls_over_every_row_in_scope(shop: Source) -> None:
    results, evidence = run(
        shop,
        {"name": "email", "missing": {"table": "customers", "column": "email"}},
        {
            "name": "share",
            "missing": {"table": "customers", "column": "email"},
            "expect": "<= 25%",
        },
        {
            "name": "stricter",
            "missing": {"table": "customers", "column": "email"},
            "expect": "< 25%",
        },
    )
    count, share, stricter = results
    # 1 NULL email of 4 rows: the row whose id is NULL counts in the denominator too.
    assert count.metrics == {
        "rows_in_scope": 4,
        "missing": 1,
        "missing_percent": 25.0,
        "compared": "missing",
    }
    assert (count.outcome, count.value) == (CheckOutcome.FAILED, 1)
    assert (share.outcome, share.value) == (CheckOutcome.PASSED, 25.0)
    assert (stricter.outcome, stricter.value) == (CheckOutcome.FAILED, 25.0)
    assert share.sample_id is None  # passed: no sample read
    sample = evidence[count.sample_id or ""]
    assert (sample.columns, sample.rows, sample.row_count) == (["id", "email"], [[2, None]], 1)
    assert count.sql.startswith("SELECT COUNT(*) AS rows_in_scope")


def test_missing_values_listed_count_as_missing(shop: Source) -> None:
    result = one(
        shop,
        {"missing": {"table": "orders", "column": "status", "missing_values": ["lost", "gone"]}},
    )
    assert result.metrics["missing"] == 2  # the NULL and 'lost'


@pytest.mark.parametrize(
    ("options", "metrics", "value"),
    [
        (
            {},
            {"duplicate_groups": 2, "surplus_rows": 3, "rows_in_duplicate_groups": 5},
            3,
        ),
        (
            {"nulls": "equal"},
            {"duplicate_groups": 3, "surplus_rows": 4, "rows_in_duplicate_groups": 7},
            4,
        ),
        (
            {"count": "duplicate_groups"},
            {"duplicate_groups": 2, "surplus_rows": 3, "rows_in_duplicate_groups": 5},
            2,
        ),
        (
            {"count": "rows_in_duplicate_groups", "nulls": "equal"},
            {"duplicate_groups": 3, "surplus_rows": 4, "rows_in_duplicate_groups": 7},
            7,
        ),
    ],
    ids=["distinct", "equal", "groups", "rows in groups"],
)
def test_duplicates_groups_of_two_and_three_with_null_keys(
    shop: Source, options: dict[str, str], metrics: dict[str, int], value: int
) -> None:
    result = one(shop, {"duplicates": {"table": "pairs", "columns": ["a", "b"], **options}})
    compared = options.get("count", "surplus_rows")
    assert result.metrics == {
        "rows_in_scope": 9,
        **metrics,
        "rows_with_null_key": 3,  # (NULL, 'n') twice and (4, NULL)
        "compared": compared,
    }
    assert (result.outcome, result.value) == (CheckOutcome.FAILED, value)


def test_duplicates_sample_holds_the_groups_largest_first(shop: Source) -> None:
    result, evidence = run(
        shop, {"name": "c", "duplicates": {"table": "pairs", "columns": ["a", "b"]}}
    )
    sample = evidence[result[0].sample_id or ""]
    assert sample.columns == ["a", "b", "rows"]
    assert sample.rows == [[2, "y", 3], [1, "x", 2]]
    assert sample.row_count == 2 and not sample.truncated
    equal, evidence = run(
        shop,
        {"name": "c", "duplicates": {"table": "pairs", "columns": ["a", "b"], "nulls": "equal"}},
    )
    assert evidence[equal[0].sample_id or ""].rows == [[2, "y", 3], [1, "x", 2], [None, "n", 2]]


def test_duplicates_percent_of_rows(shop: Source) -> None:
    result = one(shop, {"duplicates": {"table": "pairs", "columns": ["a"]}, "expect": "< 50%"})
    # a: 1,1 | 2,2,2 | 3 | NULL,NULL | 4 -> surplus 1 + 2 = 3 of 9 rows (NULLs distinct)
    assert result.metrics["surplus_rows"] == 3
    assert (result.outcome, result.value) == (CheckOutcome.PASSED, 100 * 3 / 9)


def test_accepted_values_counts_invalid_values_and_nulls_apart(shop: Source) -> None:
    results, evidence = run(
        shop,
        {
            "name": "violation",
            "accepted_values": {
                "table": "orders",
                "column": "status",
                "values": ["paid", "refunded"],
            },
        },
        {
            "name": "allowed",
            "accepted_values": {
                "table": "orders",
                "column": "status",
                "values": ["paid", "refunded"],
                "null": "allowed",
            },
        },
    )
    strict, lenient = results
    assert strict.metrics == {
        "rows_in_scope": 5,
        "invalid_values": 1,
        "null_values": 1,
        "distinct_invalid_values": 1,
        "violations": 2,
        "compared": "violations",
    }
    assert (strict.outcome, strict.value) == (CheckOutcome.FAILED, 2)
    assert (lenient.value, lenient.metrics["violations"]) == (1, 1)
    assert evidence[strict.sample_id or ""].rows == [["lost", 1], [None, 1]]
    assert evidence[lenient.sample_id or ""].rows == [["lost", 1]]


def test_accepted_values_counts_distinct_invalid_values_as_dbt_does(shop: Source) -> None:
    result = one(
        shop,
        {
            "accepted_values": {
                "table": "orders",
                "column": "status",
                "values": ["paid"],
                "null": "allowed",
                "count": "distinct_invalid_values",
            }
        },
    )
    # orders.status: paid, paid, refunded, lost, NULL -> 2 distinct values not listed
    assert result.metrics["compared"] == "distinct_invalid_values"
    assert (result.outcome, result.value) == (CheckOutcome.FAILED, 2)
    assert result.metrics["violations"] == 2


def test_accepted_values_distinct_count_refuses_null_as_a_violation() -> None:
    with pytest.raises(ValueError, match="give null: allowed, or count: violations"):
        AcceptedValues.model_validate(
            {"table": "t", "column": "c", "values": ["a"], "count": "distinct_invalid_values"}
        )


def test_accepted_values_on_a_number_column(shop: Source) -> None:
    result = one(
        shop,
        {"accepted_values": {"table": "customers", "column": "id", "values": [1, 2, 3]}},
    )
    assert (result.metrics["invalid_values"], result.metrics["null_values"]) == (0, 1)


def test_relationships_finds_the_orphan_a_null_parent_key_hides(shop: Source) -> None:
    results, evidence = run(
        shop,
        {
            "name": "typed",
            "relationships": {"table": "orders", "column": "customer_id", "to": "customers.id"},
        },
        {
            "name": "not in",
            "sql": "SELECT count(*) FROM orders "
            "WHERE customer_id NOT IN (SELECT id FROM customers)",
            "expect": "== 0",
        },
    )
    typed, trap = results
    assert typed.metrics == {
        "rows_in_scope": 5,
        "orphans": 1,
        "orphan_keys": 1,
        "null_keys": 1,
        "compared": "orphans",
    }
    assert (typed.outcome, typed.value) == (CheckOutcome.FAILED, 1)
    assert evidence[typed.sample_id or ""].rows == [[9, 1]]
    assert "NOT IN" not in typed.sql and "LEFT JOIN (SELECT DISTINCT" in typed.sql
    if shop.dialect == "clickhouse":
        # ClickHouse's NOT IN counts a NULL in the set as no match (its docs, "NULL
        # processing"): the raw query finds the orphan, and there is no trap to warn of.
        assert (trap.outcome, trap.value, trap.warnings) == (CheckOutcome.FAILED, 1, [])
        return
    # The raw NOT IN reads 0 on both engines (customers.id holds a NULL) ... and the lint says why.
    assert (trap.outcome, trap.value) == (CheckOutcome.PASSED, 0)
    assert len(trap.warnings) == 1 and "use NOT EXISTS" in trap.warnings[0]


def test_freshness_of_naive_utc_and_zoned_timestamps(shop: Source) -> None:
    results, _ = run(
        shop,
        {"name": "naive", "freshness": {"table": "loads", "column": "loaded_at", "max_age": "1h"}},
        {"name": "zoned", "freshness": {"table": "loads", "column": "loaded_tz", "max_age": "1h"}},
        {
            "name": "in new york",
            "freshness": {
                "table": "loads",
                "column": "loaded_at",
                "timezone": "America/New_York",
            },
            "expect": "<= 3h",
        },
    )
    naive, zoned, new_york = results
    # Naive 2024-01-10 05:00 read as UTC is 2h in the future of 03:00 UTC.
    assert naive.metrics == {
        "rows_in_scope": 3,
        "rows_with_value": 2,
        "compared": "age_s",
        "latest": "2024-01-10T05:00:00+00:00",
        "age_s": -7200.0,
        "future_rows": 1,  # counted only when the newest is past the tolerance
    }
    # in the future beyond the 5m tolerance: never fresh (it passed before)
    assert (naive.outcome, naive.value) == (CheckOutcome.FAILED, -7200.0)
    assert naive.reason == (
        "the newest loaded_at is 2h in the future (beyond the 5m tolerance): a mistyped row,"
        " or a local time read as UTC (timezone:)"
    )
    # timestamptz 01:30 UTC is 1h30m before 03:00 UTC: over the 1h limit.
    assert (zoned.outcome, zoned.value) == (CheckOutcome.FAILED, 5400.0)
    assert zoned.metrics["latest"] == "2024-01-10T01:30:00+00:00"
    # 05:00 in New York (EST) is 10:00 UTC: 7h ahead.
    assert new_york.metrics["latest"] == "2024-01-10T10:00:00+00:00"
    assert (new_york.outcome, new_york.value) == (CheckOutcome.FAILED, -25200.0)
    assert new_york.metrics["future_rows"] == 1  # 05:00 in New York, past 22:05 there
    assert "future_rows" not in zoned.metrics


def test_freshness_tolerates_a_little_clock_skew(shop: Source) -> None:
    lenient = one(
        shop,
        {
            "freshness": {
                "table": "loads",
                "column": "loaded_at",
                "max_age": "1h",
                "future_tolerance": "3h",
            }
        },
    )
    assert (lenient.outcome, lenient.value) == (CheckOutcome.PASSED, -7200.0)


def test_range_inclusive_bounds_and_nulls(shop: Source) -> None:
    results, evidence = run(
        shop,
        {
            "name": "amount",
            "range": {"table": "orders", "column": "amount", "min": 0, "max": 99.99},
        },
        {
            "name": "with nulls",
            "range": {
                "table": "orders",
                "column": "created_at",
                "min": "2024-01-01",
                "null": "violation",
            },
        },
    )
    amount, created = results
    assert amount.metrics == {
        "rows_in_scope": 5,
        "below_min": 1,
        "above_max": 0,  # 99.99 is the bound: inclusive
        "null_values": 0,
        "violations": 1,
        "compared": "violations",
    }
    sample = evidence[amount.sample_id or ""]
    # SQLite has no DECIMAL: its NUMERIC affinity stores -1.00 as the integer -1.
    amount_shown = -1 if shop.dialect == "sqlite" else "-1.00"
    assert sample.rows[0][:3] == [2, amount_shown, "refunded"]
    assert (created.metrics["null_values"], created.value) == (1, 1)


def test_schema_reports_missing_columns_and_wrong_types(shop: Source) -> None:
    good = one(
        shop,
        {
            "schema": {
                "table": "orders",
                "columns": {
                    "order_id": "integer",
                    "amount": "decimal(10,2)",
                    "status": "text",
                    "price": "float",
                    "created_at": "timestamp",
                    "name": "any",
                },
            }
        },
    )
    assert (good.outcome, good.value, good.reason) == (CheckOutcome.PASSED, 0, None)
    bad = one(
        shop,
        {"schema": {"table": "orders", "columns": {"order_id": "text", "shipped_at": "date"}}},
    )
    assert bad.metrics == {
        "rows_in_scope": 5,
        "columns_expected": 2,
        "missing_columns": 1,
        "wrong_types": 1,
        "problems": 2,
        "compared": "problems",
    }
    # The type as the engine names it in its catalog (Spark: int; Snowflake: NUMBER(38,0)).
    stored = {"clickhouse": "Int32", "snowflake": "DECIMAL(38, 0)", "spark": "int"}
    integer = stored.get(shop.dialect, "INTEGER")
    assert bad.reason == f"missing column: shipped_at; order_id is {integer}, not text"
    assert (bad.outcome, bad.value) == (CheckOutcome.FAILED, 2)


def test_an_unknown_column_is_an_error_naming_the_closest(shop: Source) -> None:
    result = one(shop, {"missing": {"table": "customers", "column": "emial"}})
    assert result.outcome is CheckOutcome.ERROR
    assert result.error == "no column 'emial' in customers (did you mean 'email'?)"
    table = one(shop, {"row_count": {"table": "order"}})
    assert table.error == "no table 'order' in this source (did you mean 'orders'?)"


def test_a_filter_runs_through_the_guard(shop: Source) -> None:
    result = one(
        shop,
        {"row_count": {"table": "orders", "filter": "order_id IN (SELECT 1 FROM secrets)"}},
    )
    assert result.outcome is CheckOutcome.ERROR
    assert result.error == "rejected (unknown-table): secrets is not a data set of this source"
    closing = one(shop, {"row_count": {"table": "orders", "filter": "1 = 1) OR (1 = 1"}})
    assert closing.error == (
        "the filter is not one SQL condition (e.g. amount > 0 AND status = 'paid')"
    )
