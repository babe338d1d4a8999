"""Segments (``by:``) on every shop engine: each kind judged per segment, the same values on each.

The shop's ``orders.status`` has four segments (``lost``, ``paid`` ×2, ``refunded``, and
NULL, its own segment named ``NULL``, sorted last); ``pairs.b`` five. Every kind that takes
``by:`` is run on each engine, its segments, values, failing segments and the sample of
the failing segments' rows asserted exactly.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from checks.declared.compile import compile_check
from checks.declared.scan_plan import shape
from checks.declared.wording import describe_value
from checks.report import CheckOutcome, CheckResult
from checks.settings.limits import Limits
from checks.sources import Source
from tests.checks.declared.shop import CLOCK, automation, build_duckdb, duckdb_opener, one, run

F, P, N = CheckOutcome.FAILED, CheckOutcome.PASSED, CheckOutcome.NOT_EVALUATED


def segments(result: CheckResult) -> list[tuple[str, CheckOutcome, Any, int]]:
    """Each segment as (name, outcome, value, rows in scope)."""
    assert result.segments is not None
    return [(s.name, s.outcome, s.value, s.rows_in_scope) for s in result.segments.items]


def test_missing_per_segment_fails_on_the_null_segment_and_samples_it_alone(shop: Source) -> None:
    results, evidence = run(
        shop, {"name": "c", "missing": {"table": "orders", "column": "created_at", "by": "status"}}
    )
    result = results[0]
    assert (result.outcome, result.value) == (F, 1)
    assert segments(result) == [
        ("lost", P, 0, 1),
        ("paid", P, 0, 2),
        ("refunded", P, 0, 1),
        ("NULL", F, 1, 1),
    ]
    assert result.segments is not None
    assert [s.values for s in result.segments.failed] == [{"status": None}]
    assert result.metrics == {
        "compared": "missing",
        "rows_in_scope": 5,
        "segments": 4,
        "segments_failed": 1,
        "segments_warned": 0,
        "segments_not_evaluated": 0,
        "segments_in_error": 0,
    }
    assert describe_value(result) == (
        "1 of 4 segments by status failed: `NULL`: 1 of 1 row missing (100.00 %)"
    )
    assert result.to_dict()["failed_segments"][0]["metrics"] == {
        "rows_in_scope": 1,
        "missing": 1,
        "missing_percent": 100.0,
        "compared": "missing",
    }
    sample = evidence[result.sample_id or ""]
    assert [row[0] for row in sample.rows] == [3]  # order 3, the NULL status's only row
    assert "GROUP BY" in result.sql.upper()


def test_every_kind_per_segment(shop: Source) -> None:
    results, evidence = run(
        shop,
        {
            "name": "range",
            "range": {"table": "orders", "column": "amount", "min": 0, "by": ["status"]},
        },
        {"name": "dups", "duplicates": {"table": "pairs", "columns": ["a"], "by": ["b"]}},
        {
            "name": "orphans",
            "relationships": {
                "table": "orders",
                "column": "customer_id",
                "to": "customers.id",
                "by": ["status"],
            },
        },
        {
            "name": "fresh",
            "freshness": {
                "table": "orders",
                "column": "created_at",
                "max_age": "7d",
                "by": ["status"],
            },
        },
        {
            "name": "values",
            "accepted_values": {
                "table": "orders",
                "column": "status",
                "values": ["paid", "refunded"],
                "by": ["name"],
            },
        },
        {"name": "rows", "row_count": {"table": "orders", "by": ["status"]}, "expect": ">= 2"},
    )
    by_name = {r.name: r for r in results}
    assert segments(by_name["range"]) == [
        ("lost", P, 0, 1),
        ("paid", P, 0, 2),
        ("refunded", F, 1, 1),
        ("NULL", P, 0, 1),
    ]
    assert segments(by_name["dups"]) == [
        ("n", N, None, 2),  # its key a is NULL in both rows: nothing compared
        ("x", F, 1, 2),
        ("y", F, 2, 3),
        ("z", P, 0, 1),
        ("NULL", P, 0, 1),
    ]
    dups = evidence[by_name["dups"].sample_id or ""]
    assert sorted(map(tuple, dups.rows)) == [("x", 1, 2), ("y", 2, 3)]
    assert segments(by_name["orphans"]) == [
        ("lost", N, None, 1),  # its one customer_id is NULL
        ("paid", P, 0, 2),
        ("refunded", P, 0, 1),
        ("NULL", F, 1, 1),  # order 3's customer 9 is no customer
    ]
    fresh = by_name["fresh"]
    assert [(name, outcome) for name, outcome, _, _ in segments(fresh)] == [
        ("lost", P),
        ("paid", P),
        ("refunded", F),  # newest 2024-01-02 10:00, 7 d 17 h before the clock
        ("NULL", N),
    ]
    assert fresh.segments is not None
    assert [s.metrics["age_s"] for s in fresh.segments.items] == [
        6 * 86400 + 17 * 3600,
        5 * 86400 + 17 * 3600,
        7 * 86400 + 17 * 3600,
        None,
    ]
    assert segments(by_name["values"]) == [
        ("Ann", P, 0, 1),
        ("Bob", F, 1, 2),  # a NULL status is a violation by default
        ("Cy", F, 1, 1),  # lost
        ("Di", P, 0, 1),
    ]
    values = evidence[by_name["values"].sample_id or ""]
    assert sorted(map(tuple, values.rows), key=str) == [("Bob", None, 1), ("Cy", "lost", 1)]
    assert segments(by_name["rows"]) == [
        ("lost", F, 1, 1),
        ("paid", P, 2, 2),
        ("refunded", F, 1, 1),
        ("NULL", F, 1, 1),
    ]
    assert describe_value(by_name["rows"]) == (
        "3 of 4 segments by status failed: `lost`: 1 row in scope; `refunded`: 1 row in"
        " scope; `NULL`: 1 row in scope"
    )


def test_a_percent_and_a_warning_level_apply_per_segment(shop: Source) -> None:
    block = {"table": "orders", "column": "created_at", "by": ["name"]}
    failed = one(shop, {"missing": block, "expect": "<= 40%"})
    assert segments(failed) == [
        ("Ann", P, 0.0, 1),
        ("Bob", F, 50.0, 2),  # 1 of Bob's 2 rows: the value compared is the percent
        ("Cy", P, 0.0, 1),
        ("Di", P, 0.0, 1),
    ]
    warned = one(shop, {"missing": block, "expect": "<= 60%", "warn": "<= 10%"})
    assert warned.outcome is CheckOutcome.WARNED
    assert warned.segments is not None
    assert [s.name for s in warned.segments.having(CheckOutcome.WARNED)] == ["Bob"]
    assert describe_value(warned) == (
        "4 segments by name: 1 warned: `Bob`: 1 of 2 rows missing (50.00 %)"
    )


def test_two_columns_make_one_segment_per_pair_of_values(shop: Source) -> None:
    result = one(
        shop, {"missing": {"table": "orders", "column": "created_at", "by": ["status", "name"]}}
    )
    assert segments(result) == [
        ("lost / Cy", P, 0, 1),
        ("paid / Ann", P, 0, 1),
        ("paid / Di", P, 0, 1),
        ("refunded / Bob", P, 0, 1),
        ("NULL / Bob", F, 1, 1),
    ]
    assert result.segments is not None
    assert result.segments.failed[0].values == {"status": None, "name": "Bob"}


def test_more_segments_than_the_limit_is_not_evaluated(shop: Source) -> None:
    block = {"missing": {"table": "orders", "column": "created_at", "by": ["status"]}}
    three = one(shop, block, limits=Limits(max_segments=3))
    assert (three.outcome, three.value) == (N, None)
    assert three.reason == (
        "4 segments by status in scope: orders; at most 3 are judged (limits.max_segments):"
        " segment by fewer values, or raise the limit"
    )
    two = one(shop, block, limits=Limits(max_segments=2))
    assert two.outcome is N
    assert (two.reason or "").startswith("more than 2 segments by status in scope: orders;")


def test_an_empty_scope_is_not_evaluated_unless_allowed(shop: Source) -> None:
    block = {"table": "orders", "column": "created_at", "by": ["status"], "filter": "order_id > 9"}
    empty = one(shop, {"missing": block})
    assert (empty.outcome, empty.reason) == (N, "0 rows in scope: orders where order_id > 9")
    allowed = one(shop, {"missing": block, "allow_empty": True})
    assert (allowed.outcome, allowed.value) == (P, 0)
    assert allowed.segments is not None and allowed.segments.items == []


def test_a_segmented_check_never_joins_a_shared_scan(shop: Source) -> None:
    statements: list[dict[str, Any]] = []
    checks = automation(
        {"name": "a", "missing": {"table": "orders", "column": "status"}},
        {"name": "b", "row_count": {"table": "orders"}},
        {"name": "c", "missing": {"table": "orders", "column": "status", "by": ["name"]}},
    )
    from checks.declared.check import run_checks

    results, _ = run_checks(
        checks, shop, shop.limits, deadline=1e18, on_statement=statements.append
    )
    assert [r.outcome for r in results] == [F, P, F]
    shared = [s for s in statements if s.get("checks")]
    assert [sorted(s["checks"]) for s in shared] == [["a", "b"]]
    spec = checks.checks[2].spec
    assert spec is not None
    counts = compile_check(spec, shop.catalog(), shop.dialect, sample_rows=5).counts_sql
    assert shape(counts, shop.dialect) is None
    assert shape(counts, shop.dialect, grouped=True) is not None  # why run_checks leaves it out


def test_a_segment_label_is_a_code_span_nothing_inside_can_break() -> None:
    from checks.declared.segments import segment_label, value_name

    assert segment_label("EU") == "`EU`"
    assert segment_label("a``b") == "```a``b```"
    assert segment_label("`x") == "`` `x ``"
    assert segment_label("line\nbreak") == "`line\\x0abreak`"
    assert segment_label("x" * 70) == "`" + "x" * 59 + "…`"
    assert [value_name(v) for v in (None, True, "NULL")] == ["NULL", "true", "NULL"]


def test_the_decision_model_sees_the_failing_segments(tmp_path: Path) -> None:
    from checks.opinion.decision_model import read_untrusted_state
    from checks.opinion.opinion_state import StateLimits, opinion_state
    from checks.report import RunReport, Status

    with duckdb_opener(build_duckdb(tmp_path / "shop.duckdb"))(Limits()) as shop:
        result = one(shop, {"row_count": {"table": "orders", "by": ["status"]}, "expect": ">= 2"})
    report = RunReport(
        automation="shop-checks", scheduled_for=CLOCK, status=Status.COMPLETED, checks=[result]
    )
    state = read_untrusted_state(opinion_state(report, None, "goal", None, StateLimits(max_rows=2)))
    entry = state["this_run"]["checks"][0]
    assert entry["failed_segments"] == [
        {"name": "lost", "value": 1, "rows_in_scope": 1},
        {"name": "refunded", "value": 1, "rows_in_scope": 1},
    ]
    assert entry["failed_segments_left_out"] == 1
