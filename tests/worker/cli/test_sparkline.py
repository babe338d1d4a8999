"""``lookout show``'s sparklines: one line per check, failures as shapes, exact output."""

from __future__ import annotations

import datetime as dt
import io
import os
from pathlib import Path

import pytest

from checks.report import (
    CheckOutcome,
    CheckResult,
    Finding,
    FindingSource,
    RunReport,
    Status,
    outcome_of,
)
from checks.store.store import Store
from tests.cli_support import run_lookout
from tests.stored_reports import store_report
from worker.cli.safe_text import SafeConsole
from worker.cli.sparkline import print_histories, sparkline
from worker.review.history import CheckHistory, HistoryPoint

SLOT = dt.datetime(2026, 3, 2, 6, 0, tzinfo=dt.UTC)
# a volume judged against `between 90 and 110`: a spike, a drop, an error, the rest normal
VOLUMES: list[float | None] = [100, 101, 102, 100, 140, 101, 20, None, 102, 100]


def history(volumes: list[float | None], *, total: int, name: str = "volume") -> CheckHistory:
    points = []
    for i, value in enumerate(volumes):
        outcome = "error" if value is None else "passed" if 90 <= value <= 110 else "failed"
        slot = SLOT + dt.timedelta(days=i)
        current = i == len(volumes) - 1
        points.append(HistoryPoint(i + 1, slot, value, 90.0, 110.0, outcome, current))
    return CheckHistory(name, points, total)


def terminal(width: int) -> tuple[SafeConsole, io.StringIO]:
    buffer = io.StringIO()
    return SafeConsole(file=buffer, width=width, color_system=None, highlight=False), buffer


def test_each_run_is_one_character_and_a_failure_is_a_shape_not_a_height() -> None:
    line = sparkline(history(VOLUMES, total=10))
    # passing values 100–102 take the eight heights; the spike ▲, the drop ▼, the error ×
    assert line.plain == "▁▅█▁▲▅▼×█▁"
    styled = [(line.plain[s.start : s.end], str(s.style)) for s in line.spans if s.style]
    assert styled == [("▲", "bold red"), ("▼", "bold red"), ("×", "dim")]


def test_a_flat_series_is_mid_height_and_a_failure_without_a_side_is_a_square() -> None:
    flat = CheckHistory(
        "paid",
        [
            HistoryPoint(1, SLOT, 1.0, 1.0, 1.0, "passed"),
            HistoryPoint(2, SLOT, 1.0, 1.0, 1.0, "passed"),
            HistoryPoint(3, SLOT, 3.0, None, None, "failed"),  # `!= 3`: no band to leave
        ],
        3,
    )
    assert sparkline(flat).plain == "▄▄■"


def test_the_rows_give_name_sparkline_min_max_and_how_many_runs() -> None:
    console, buffer = terminal(100)
    print_histories(
        console,
        [
            history(VOLUMES, total=12),
            history([0.5, 0.25], total=2, name="late share"),
            CheckHistory("never stored", [], 0),
        ],
    )
    assert buffer.getvalue().splitlines() == [
        "  history, oldest first: ▲ ▼ failed above/below the band, ■ failed, × no value",
        "  check       history      min  max  of",
        "  volume      ▁▅█▁▲▅▼×█▁    20  140  the last 10 of 12 runs, 2 failed",
        "  late share  ▼▼          0.25  0.5  2 runs, 2 failed",
    ]


@pytest.mark.parametrize(
    ("unit", "values", "lines"),
    [
        # not "0.000913184  2.5": a percent check's value is the percent itself
        (
            "percent",
            [0.000913184, 2.5],
            [
                "  check  history       min     max  of",
                "  share  ▼▼       < 0.01 %  2.50 %  2 runs, 2 failed",
            ],
        ),
        # not "95  11520": a freshness check's value is an age in seconds
        (
            "duration",
            [95.0, 11520.0],
            [
                "  check  history     min     max  of",
                "  share  ▄▲       1m 35s  3h 12m  2 runs, 1 failed",
            ],
        ),
    ],
)
def test_min_and_max_carry_the_checks_unit(
    unit: str, values: list[float | None], lines: list[str]
) -> None:
    console, buffer = terminal(80)
    plain = history(values, total=2, name="share")
    print_histories(console, [CheckHistory(plain.check, plain.points, plain.total, unit)])
    assert buffer.getvalue().splitlines()[1:] == lines


def test_lookout_show_prints_a_sparkline_per_check(tmp_path: Path) -> None:
    store = Store(f"sqlite:///{tmp_path}/lookout.db")
    ids = []
    for day, volume in enumerate(VOLUMES):
        slot = SLOT + dt.timedelta(days=day)
        passed = None if volume is None else 90 <= volume <= 110
        ids.append(
            store_report(
                store,
                RunReport(
                    automation="orders",
                    scheduled_for=slot,
                    status=Status.ERROR if volume is None else Status.COMPLETED,
                    finding=None
                    if passed is None
                    else Finding.CLEAR
                    if passed
                    else Finding.NEEDS_ATTENTION,
                    finding_source=FindingSource.CHECKS,
                    summary=f"Orders on day {day}.",
                    checks=[
                        CheckResult(
                            "volume",
                            "SELECT count(*) FROM orders",
                            "between 90 and 110",
                            volume,
                            outcome_of(passed, "connection reset" if volume is None else None),
                            "connection reset" if volume is None else None,
                        ),
                        CheckResult(
                            "paid", "SELECT true", "is true", True, CheckOutcome.PASSED, None
                        ),
                    ],
                    started_at=slot,
                    finished_at=slot,
                ),
            )
        )
    store.close()
    env = {
        "PATH": "/usr/bin:/bin",
        "COLUMNS": "100",
        "LOOKOUT_STORE_URL": f"sqlite:///{tmp_path}/lookout.db",
        "HOME": os.environ.get("HOME", "/root"),
    }
    proc = run_lookout(["show", str(ids[-1])], env)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    start = lines.index(
        "  history, oldest first: ▲ ▼ failed above/below the band, ■ failed, × no value"
    )
    assert lines[start + 1 : start + 4] == [
        "  check   history     min  max  of",
        "  volume  ▁▅█▁▲▅▼×█▁   20  140  10 runs, 2 failed",
        "  paid    ▄▄▄▄▄▄▄▄▄▄    1    1  10 runs",
    ]
    earlier = run_lookout(["show", str(ids[4])], env)
    assert "  volume  ▁▅█▁▲    100  140  5 runs, 1 failed" in earlier.stdout.splitlines()
    as_json = run_lookout(["show", str(ids[4]), "--json"], env)
    assert as_json.returncode == 0 and "▁" not in as_json.stdout  # JSON stays the report's shape


def test_the_legend_wraps_to_a_narrow_terminal() -> None:
    console, buffer = terminal(50)
    print_histories(console, [history([100, 140], total=2)])
    assert buffer.getvalue().splitlines() == [
        "  history, oldest first: ▲ ▼ failed above/below",
        "  the band, ■ failed, × no value",
        "  check   history  min  max  of",
        "  volume  ▄▲       100  140  2 runs, 1 failed",
    ]


def test_an_anomaly_over_buckets_shows_its_buckets_and_the_one_filling() -> None:
    from tests.worker.review.test_history import ANOMALY, BUCKETS
    from worker.review.history import bucket_history

    daily = bucket_history("daily orders", ANOMALY, BUCKETS, "failed", 7)
    assert daily is not None
    console, buffer = terminal(120)
    print_histories(console, [daily])
    assert buffer.getvalue().splitlines() == [
        "  history, oldest first: ▲ ▼ failed above/below the band, ■ failed, × no value, "
        "░ a bucket still filling, not tested",
        "  check         history   min  max  of",
        "  daily orders  ▁▂▄▅▇█▼░   40  106  per day: 6 baseline days, the tested day and the day "
        "still filling, 1 failed",
    ]


def test_the_legend_is_one_line_at_80_columns() -> None:
    console, buffer = terminal(80)
    print_histories(console, [history([100, 140], total=2)])
    assert buffer.getvalue().splitlines()[0] == (
        "  history, oldest first: ▲ ▼ failed above/below the band, ■ failed, × no value"
    )


def registry_histories() -> list[CheckHistory]:
    """The checks of planes-registry-coverage after 35 runs: 30 points each, the last shown."""
    missing = [721.0] * 30
    share = [14.9864] * 30
    never = [0.0] * 30
    rows = []
    for name, values, low, high in (
        ("tail numbers missing from planes", missing, 0.0, 0.0),
        ("share of flights with an unknown plane", share, None, 5.0),
        ("registry planes that never flew", never, 0.0, 0.0),
    ):
        points = []
        for i, value in enumerate(values):
            failed = (high is not None and value > high) or (low is not None and value < low)
            slot = SLOT + dt.timedelta(days=i)
            outcome = "failed" if failed else "passed"
            points.append(HistoryPoint(i + 6, slot, value, low, high, outcome, i == 29))
        rows.append(CheckHistory(name, points, 35))
    return rows


def test_the_history_table_fits_80_columns_one_line_a_check() -> None:
    console, buffer = terminal(80)
    print_histories(console, registry_histories())
    # was a block per check: the name, then "history: ▲▲…  min: 721  max: 721", then "of: …"
    assert buffer.getvalue().splitlines() == [
        "  history, oldest first: ▲ ▼ failed above/below the band, ■ failed, × no value",
        "  check                                   last 20                   min      max",
        "  tail numbers missing from planes        ▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲      721      721",
        "  share of flights with an unknown plane  ▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲  14.9864  14.9864",
        "  registry planes that never flew         ▄▄▄▄▄▄▄▄▄▄▄▄▄▄▄▄▄▄▄▄        0        0",
    ]


def test_the_history_table_gives_way_counts_first_then_old_points_then_min_and_max() -> None:
    histories = registry_histories()
    wide, buffer = terminal(160)
    print_histories(wide, histories)
    assert buffer.getvalue().splitlines()[1:3] == [
        "  check                                   history                             min      max"
        "  of",
        "  tail numbers missing from planes        ▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲      721      721"
        "  the last 30 of 35 runs, 30 failed",
    ]
    at_120, buffer = terminal(120)  # the counts would wrap: they go, the 30 points stay
    print_histories(at_120, histories)
    assert buffer.getvalue().splitlines()[1:3] == [
        "  check                                   history                             "
        "min      max",
        "  tail numbers missing from planes        ▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲      "
        "721      721",
    ]
    at_60, buffer = terminal(60)  # even 10 points leave no room for min and max
    print_histories(at_60, histories)
    assert buffer.getvalue().splitlines()[2:4] == [
        "  check                                   last 18",
        "  tail numbers missing from planes        ▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲",
    ]
    at_48, buffer = terminal(48)  # no room beside the name for 10 points: stacked, never cut
    print_histories(at_48, histories[1:2])
    assert buffer.getvalue().splitlines()[2:] == [
        "  share of flights with an unknown plane",
        "      history: ▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲▲",
        "      min: 14.9864  max: 14.9864",
        "      of: the last 30 of 35 runs, 30 failed",
    ]
