"""``validity`` and ``aggregate`` on every shop engine, with the same exact values.

``contacts`` holds each format's traps: a trailing space, a final newline, lower case,
a leap day and a day that does not exist, non-ASCII letters, empty texts and a row of
NULLs. ``orders.amount`` is 10.50, -1.00, 5.00, 7.25, 99.99; ``orders.customer_id`` 1,
2, 9, NULL, 3.
"""

from __future__ import annotations

import statistics
from decimal import Decimal
from pathlib import Path
from typing import Any

import duckdb
import pytest

from checks.report import CheckOutcome
from checks.settings.limits import Limits
from checks.sources import DuckDBQuerySource, Source
from tests.checks.declared.shop import one, run

FORMATS = [
    ("email", "email", 5),  # no @, a trailing space, '', non-ASCII, a final newline
    ("ref", "uuid", 4),  # one digit short, '', a g, no hyphens (upper case is one)
    ("site", "url", 3),  # ftp, '', a space in the host
    ("ip", "ipv4", 5),  # 256, ::1, '', a leading zero, an IPv6
    ("ip", "ipv6", 4),  # the three IPv4 texts and ''
    ("phone", "e164_phone", 4),  # no +, a country code 0, '', 16 digits
    ("day", "iso_date", 5),  # 2023-02-29, 2024-04-31, '', two date-times
    ("day", "iso_datetime", 4),  # the three dates and ''
    ("country", "iso_country", 3),  # us, XX, ''
    ("currency", "iso_currency", 3),  # usd, '', EURO (XTS, the test code, is one)
]
AMOUNTS = [Decimal("10.50"), Decimal("-1.00"), Decimal("5.00"), Decimal("7.25"), Decimal("99.99")]


def _check(name: str, kind: str, **spec: Any) -> dict[str, Any]:
    table = spec.pop("table", "contacts" if kind == "validity" else "orders")
    extra = {k: spec.pop(k) for k in ("expect", "warn", "allow_empty") if k in spec}
    return {"name": name, kind: {"table": table, **spec}, **extra}


def test_each_format_counts_its_invalid_values(shop: Source) -> None:
    checks = [
        _check(f"{column} {form}", "validity", column=column, format=form)
        for column, form, _ in FORMATS
    ]
    results, _ = run(shop, *checks)
    assert [(r.name, r.outcome, r.value) for r in results] == [
        (f"{column} {form}", CheckOutcome.FAILED, invalid) for column, form, invalid in FORMATS
    ]
    assert results[0].metrics == {
        "rows_in_scope": 7,
        "invalid": 5,
        "null_values": 1,
        "distinct_invalid": 5,
        "violations": 5,
        "invalid_percent": pytest.approx(500 / 7),
        "compared": "violations",
    }


def test_regex_matches_the_whole_value_case_sensitively(shop: Source) -> None:
    results, _ = run(
        shop,
        # only a@x.org: 'c@x.org' + newline is not matched by the end anchor, B@X.ORG by case
        _check("lower", "validity", column="email", regex="[a-z]+@x[.]org"),
        _check("escaped", "validity", column="email", regex=r"[a-z]+@x\.org"),
        _check("either case", "validity", column="email", regex="[A-Za-z]+@[A-Za-z]+[.][a-z]+"),
        # 9 characters: no-at.org and zoë@x.org (10 bytes, 9 characters)
        _check("nine", "validity", column="email", min_length=9, max_length=9),
        _check("with NULLs", "validity", column="email", max_length=40, null="violation"),
        _check("both", "validity", column="country", format="iso_country", max_length=1),
    )
    assert [(r.outcome, r.value) for r in results] == [
        (CheckOutcome.FAILED, 5),
        (CheckOutcome.FAILED, 5),
        (CheckOutcome.FAILED, 5),  # a@x.org is its only match: zoë has a non-ASCII letter
        (CheckOutcome.FAILED, 4),
        (CheckOutcome.FAILED, 1),  # every text fits; the NULL is the violation
        (CheckOutcome.FAILED, 6),  # every rule must hold: no code is 1 character
    ]
    assert (results[4].metrics["invalid"], results[4].metrics["null_values"]) == (0, 1)


def test_validity_nulls_and_empty_scopes(shop: Source) -> None:
    results, _ = run(
        shop,
        _check("only NULLs", "validity", column="email", format="email", filter="id = 3"),
        _check(
            "NULL counted",
            "validity",
            column="email",
            format="email",
            filter="id = 3",
            null="violation",
        ),
        _check("empty", "validity", column="email", format="email", filter="id < 0"),
        _check(
            "empty allowed",
            "validity",
            column="email",
            format="email",
            filter="id < 0",
            allow_empty=True,
        ),
        _check("valid ones", "validity", column="email", format="email", filter="id = 1"),
    )
    assert [(r.outcome, r.value) for r in results] == [
        (CheckOutcome.NOT_EVALUATED, None),
        (CheckOutcome.FAILED, 1),
        (CheckOutcome.NOT_EVALUATED, None),
        (CheckOutcome.PASSED, 0),
        (CheckOutcome.PASSED, 0),
    ]
    assert [r.reason for r in results[:4]] == [
        "email is NULL in all 1 rows in scope: contacts where id = 3",
        None,
        "0 rows in scope: contacts where id < 0",
        "0 rows in scope: contacts where id < 0 (allowed: allow_empty)",
    ]


def test_a_failed_validity_samples_its_invalid_values(shop: Source) -> None:
    results, evidence = run(
        shop, _check("codes", "validity", column="country", format="iso_country")
    )
    (result,) = results
    assert result.sample_id == "S1"
    sample = evidence["S1"]
    assert sample.columns == ["country", "rows"]
    assert sorted(tuple(row) for row in sample.rows) == [("", 1), ("XX", 1), ("us", 1)]
    assert result.sql is not None and "contacts" in result.sql


def test_a_percent_and_a_warning_level_on_validity(shop: Source) -> None:
    results, _ = run(
        shop,
        _check("half", "validity", column="ref", format="uuid", expect="<= 60%", warn="<= 50%"),
        _check("strict", "validity", column="ref", format="uuid", expect="<= 50%"),
    )
    # 4 invalid of 7 rows in scope: 57.14 %, within 60 % but beyond the warning's 50 %
    assert [(r.outcome, r.value) for r in results] == [
        (CheckOutcome.WARNED, pytest.approx(400 / 7)),
        (CheckOutcome.FAILED, pytest.approx(400 / 7)),
    ]


def _p(values: list[Decimal], level: float) -> float:
    """R7 (PERCENTILE_CONT): the value at 1 + (n - 1) * level, interpolated."""
    ordered = sorted(float(v) for v in values)
    h = (len(ordered) - 1) * level
    low = int(h)
    nxt = ordered[min(low + 1, len(ordered) - 1)]
    return ordered[low] + (h - low) * (nxt - ordered[low])


def test_every_aggregate_function_on_amount(shop: Source) -> None:
    functions = ["avg", "sum", "min", "max", "stddev", "variance", "median", "count_distinct"]
    checks = [
        _check(f, "aggregate", column="amount", function=f, expect="> -1000") for f in functions
    ]
    checks.append(
        _check(
            "p95",
            "aggregate",
            column="amount",
            function="percentile",
            percentile=0.95,
            expect="> 0",
        )
    )
    checks.append(
        _check(
            "p25 of four",
            "aggregate",
            column="amount",
            function="percentile",
            percentile=0.25,
            filter="order_id <= 4",
            expect="> 0",
        )
    )
    results, _ = run(shop, *checks)
    floats = [float(a) for a in AMOUNTS]
    expected = [
        statistics.mean(floats),
        float(sum(AMOUNTS)),
        -1,
        99.99,
        statistics.stdev(floats),
        statistics.variance(floats),
        7.25,
        5,
        _p(AMOUNTS, 0.95),  # 10.5 + 0.8 * 89.49: 82.092, not the DECIMAL's 82.09
        _p(AMOUNTS[:4], 0.25),  # -1 + 0.75 * 6: 3.5
    ]
    assert [r.outcome for r in results] == [CheckOutcome.PASSED] * 9 + [CheckOutcome.PASSED]
    assert [r.value for r in results] == [pytest.approx(v, rel=1e-12) for v in expected]
    assert expected[8:] == [pytest.approx(82.092), pytest.approx(3.5)]
    assert results[0].metrics == {
        "rows_in_scope": 5,
        "rows_with_value": 5,
        "avg": pytest.approx(24.348),
        "compared": "avg",
    }


def test_aggregates_ignore_nulls_and_judge_nothing_without_values(shop: Source) -> None:
    results, _ = run(
        shop,
        _check("avg", "aggregate", column="customer_id", function="avg", expect="== 3.75"),
        _check(
            "distinct", "aggregate", column="customer_id", function="count_distinct", expect="== 4"
        ),
        _check("median", "aggregate", column="customer_id", function="median", expect="== 2.5"),
        _check(
            "only NULLs",
            "aggregate",
            column="customer_id",
            function="count_distinct",
            filter="order_id = 4",
            expect="== 0",
        ),
        _check(
            "one value",
            "aggregate",
            table="Refunds",
            column="Amount",
            function="stddev",
            expect="< 1",
        ),
        _check(
            "empty",
            "aggregate",
            column="amount",
            function="sum",
            filter="order_id < 0",
            expect="== 0",
            allow_empty=True,
        ),
        _check("outside", "aggregate", column="amount", function="max", expect="< 99"),
    )
    assert [(r.outcome, r.value) for r in results] == [
        (CheckOutcome.PASSED, 3.75),
        (CheckOutcome.PASSED, 4),
        (CheckOutcome.PASSED, 2.5),
        (CheckOutcome.NOT_EVALUATED, None),
        (CheckOutcome.NOT_EVALUATED, None),
        (CheckOutcome.NOT_EVALUATED, None),  # a sum of no rows is no 0, allow_empty or not
        (CheckOutcome.FAILED, 99.99),
    ]
    # the scope names the table as the catalog does (Spark's is lower case: refunds)
    assert [(r.reason or "").lower() for r in results[3:6]] == [
        "customer_id is null in all 1 rows in scope: orders where order_id = 4",
        "the stddev of 1 value is undefined (it needs at least 2): refunds",
        "0 rows in scope: orders where order_id < 0",
    ]


def test_an_aggregate_with_a_warning_level(shop: Source) -> None:
    result = one(
        shop,
        _check(
            "avg",
            "aggregate",
            column="amount",
            function="avg",
            expect="between 0 and 100",
            warn="between 0 and 20",
        ),
    )
    assert (result.outcome, result.value) == (CheckOutcome.WARNED, pytest.approx(24.348))


def test_validity_and_aggregates_share_the_scan_of_their_table(
    shop: Source, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.checks.declared.test_shared_scans import recorded, shown
    from tests.checks.declared.test_shared_scans import run as run_shared

    checks = [
        {"name": "status set", "missing": {"table": "orders", "column": "status"}},
        _check("names", "validity", table="orders", column="name", regex="[A-Z][a-z]+"),
        _check("mean", "aggregate", column="amount", function="avg", expect="> 0"),
        _check("middle", "aggregate", column="amount", function="median", expect="> 0"),
    ]
    sent = recorded(monkeypatch, shop)
    together, _, told = run_shared(shop, checks, shared=True)
    statements = len(sent)
    apart, _, _ = run_shared(shop, checks, shared=False)
    assert [shown(r) for r in together] == [shown(r) for r in apart]
    assert [(r.outcome, r.value) for r in together] == [
        (CheckOutcome.FAILED, 1),
        (CheckOutcome.PASSED, 0),
        (CheckOutcome.PASSED, pytest.approx(24.348)),
        (CheckOutcome.PASSED, 7.25),
    ]
    ranked = shop.dialect in ("mysql", "sqlite")  # the median: a statement of its own
    shared = ["status set", "names", "mean"] + ([] if ranked else ["middle"])
    assert [t["checks"] for t in told] == [shared]
    assert statements == (2 if ranked else 1) + 1  # and the failed missing check's sample


def test_validity_over_day_buckets_judges_the_last_complete_day(
    shop: Source, request: pytest.FixtureRequest
) -> None:
    if shop.dialect in ("sqlite", "spark"):  # over:'s known gap there (test_scope_and_thresholds)
        request.applymarker(
            pytest.mark.xfail(strict=True, reason=f"over: day buckets on {shop.dialect}")
        )
    import datetime as dt

    over = {"column": "created_at", "bucket": "day", "lookback": "7d"}
    check = _check("statuses", "validity", table="orders", column="status", regex="paid|refunded")
    results, _ = run(
        shop, {**check, "over": over}, clock=dt.datetime(2024, 1, 4, 3, 0, tzinfo=dt.UTC)
    )
    (result,) = results
    # the 3rd of January, complete at 03:00 on the 4th, holds one order: 'lost'
    assert (result.outcome, result.value) == (CheckOutcome.FAILED, 1)
    assert result.buckets is not None and result.buckets.tested_start.startswith("2024-01-03")


def test_an_aggregate_over_nan_or_infinity_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "odd.duckdb"
    with duckdb.connect(str(path)) as db:
        db.execute("CREATE TABLE odd (id INTEGER, v DOUBLE)")
        db.execute("INSERT INTO odd VALUES (1, 'NaN'), (2, 'inf'), (3, '-inf'), (4, -0.0)")
    functions = ["avg", "min", "max", "percentile", "stddev", "count_distinct"]
    with DuckDBQuerySource("odd", path, Limits()) as odd:
        results, _ = run(
            odd,
            *(
                _check(f, "aggregate", table="odd", column="v", function=f, expect="> -1000")
                for f in functions[:3]
            ),
            _check(
                "p90",
                "aggregate",
                table="odd",
                column="v",
                function="percentile",
                percentile=0.9,
                expect="> -1000",
            ),
            *(
                _check(f, "aggregate", table="odd", column="v", function=f, expect="> -1000")
                for f in functions[4:]
            ),
        )
    said = "v holds NaN or infinite values, so there is no number to compare: odd"
    assert [(r.outcome, r.value, r.error) for r in results] == [
        (CheckOutcome.ERROR, None, f"avg is NaN: {said}"),
        (CheckOutcome.ERROR, None, f"min is -Infinity: {said}"),
        (CheckOutcome.ERROR, None, f"max is NaN: {said}"),  # DuckDB orders NaN above inf
        (CheckOutcome.ERROR, None, f"percentile is NaN: {said}"),
        (CheckOutcome.ERROR, None, f"stddev is NaN: {said}"),
        (CheckOutcome.PASSED, 4, None),  # four distinct values, NaN among them
    ]
    assert results[0].metrics["avg"] is None
