"""Segments over time: an anomaly per segment (its own history), ``over:`` with ``by:``, the store.

Runs go through the real run path into a real SQLite store; each segment's value is kept
in ``check_series`` under its own metric and read back as that segment's baseline.
"""

from __future__ import annotations

import datetime as dt
import math
from pathlib import Path

import duckdb

from checks.automation.model import Automation
from checks.declared.wording import describe_value
from checks.report import CheckOutcome, RunReport, Segment
from checks.run import SourcePool
from checks.run_lifecycle import run_and_store
from checks.settings.config import Settings
from checks.settings.sources import DuckDBSource
from checks.store.store import Store
from tests.checks.declared.shop import build_duckdb, duckdb_opener, one

MONDAY = dt.datetime(2026, 11, 2, 6, 0, tzinfo=dt.UTC)


def per_region(tmp_path: Path) -> tuple[Automation, Settings]:
    auto = Automation.model_validate(
        {
            "name": "orders-per-region",
            "source": "shop",
            "goal": "Each region's orders arrive at their usual volume.",
            "checks": [
                {
                    "name": "volume",
                    "row_count": {"table": "orders", "by": ["region"]},
                    "expect": {"anomaly": {"min_history": 5}},
                }
            ],
            "path": "inline.yaml",
            "line": 1,
        }
    )
    settings = Settings(
        store_url="sqlite://",
        cache_dir=str(tmp_path / "cache"),
        sources={"shop": DuckDBSource(type="duckdb", database=str(tmp_path / "shop.duckdb"))},
    )
    return auto, settings


def day(
    tmp_path: Path, auto: Automation, settings: Settings, store: Store, n: int, eu: int, us: int
) -> RunReport:
    with duckdb.connect(str(tmp_path / "shop.duckdb")) as conn:
        conn.execute(
            "CREATE OR REPLACE TABLE orders AS SELECT range AS id, 'EU' AS region FROM range(?)"
            " UNION ALL SELECT range, 'US' FROM range(?)",
            [eu, us],
        )
    with SourcePool(settings) as pool:
        return run_and_store(
            auto, settings, pool, store, scheduled_for=MONDAY + dt.timedelta(days=n)
        )


def test_each_segment_is_judged_against_its_own_history(tmp_path: Path) -> None:
    auto, settings = per_region(tmp_path)
    store = Store(f"sqlite:///{tmp_path}/lookout.db")
    eu, us = [100, 102, 98, 101, 99], [50, 51, 49, 50, 52]
    for n, (a, b) in enumerate(zip(eu, us, strict=True)):
        first = day(tmp_path, auto, settings, store, n, a, b)
        if n == 0:
            assert first.checks[0].outcome is CheckOutcome.NOT_EVALUATED
            assert first.checks[0].reason == (
                "no segment was judged (2 segments); `EU`: 0 of 5 points of history"
            )
    report = day(tmp_path, auto, settings, store, 5, 100, 90)  # the US jumps, the EU holds
    check = report.checks[0]
    assert (check.outcome, check.value) == (CheckOutcome.FAILED, 1)
    assert check.segments is not None
    eu_seg, us_seg = check.segments.items
    assert (eu_seg.name, eu_seg.outcome, us_seg.name, us_seg.outcome) == (
        "EU",
        CheckOutcome.PASSED,
        "US",
        CheckOutcome.FAILED,
    )
    assert us_seg.anomaly is not None
    mean = sum(us) / 5
    sd = math.sqrt(sum((x - mean) ** 2 for x in us) / 4)
    assert us_seg.anomaly.baseline_size == 5
    assert math.isclose(us_seg.anomaly.score or 0, (90 - mean) / sd)
    assert describe_value(check).startswith(
        "1 of 2 segments by region failed: `US`: 90 rows in scope, value 90, expected "
    )
    # The stored report holds the same segments; the series each segment's values.
    stored = store.get_run(report.run_id or 0)
    assert stored is not None and stored.checks[0].segments == check.segments
    assert "lookout__segments" not in stored.checks[0].metrics
    points = store.series(auto.name, "volume", us_seg.series_metric)
    assert [p.value for p in points] == [50.0, 51.0, 49.0, 50.0, 52.0, 90.0]
    assert us_seg.series_metric == Segment("US", {"region": "US"}, "failed").series_metric
    assert us_seg.series_metric != Segment("NULL", {"region": None}, "failed").series_metric
    store.close()


def test_over_with_by_tests_each_segments_latest_complete_bucket(tmp_path: Path) -> None:
    source = duckdb_opener(build_duckdb(tmp_path / "shop.duckdb"))
    with source(__import__("checks.settings.limits", fromlist=["Limits"]).Limits()) as shop:
        result = one(
            shop,
            {
                "row_count": {"table": "orders", "by": ["status"]},
                "over": {"column": "created_at", "bucket": "day", "lookback": "2d"},
            },
            clock=dt.datetime(2024, 1, 4, 12, 0, tzinfo=dt.UTC),
        )
    # Tested: 2024-01-03, when only the lost order came; the NULL status has no created_at.
    assert result.segments is not None
    assert [(s.name, s.outcome, s.value) for s in result.segments.items] == [
        ("lost", CheckOutcome.PASSED, 1),
        ("paid", CheckOutcome.FAILED, 0),
        ("refunded", CheckOutcome.FAILED, 0),
    ]
    assert result.buckets is not None and result.buckets.tested_start.startswith("2024-01-03")
