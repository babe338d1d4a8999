"""``expect: anomaly`` and ``over:`` in YAML: defaults, round trips, errors at their line."""

from __future__ import annotations

from pathlib import Path

import pytest

from checks.automation.loader import load_automations
from checks.automation.model import Automation

BASE = "name: a\nsource: flights\ngoal: g\nchecks:\n"


def load(tmp_path: Path, checks: str) -> tuple[list[str], list[Automation]]:
    path = tmp_path / "a.yaml"
    path.write_text(BASE + checks)
    result = load_automations(path, known_sources=["flights"])
    return [str(e).replace(f"{path}:", "") for e in result.errors], result.automations


def test_anomaly_forms_load_and_their_definition_loads_again(tmp_path: Path) -> None:
    errors, (auto,) = load(
        tmp_path,
        """\
  - {name: a, row_count: {table: t}, expect: anomaly}
  - name: b
    missing: {table: t, column: c}
    over: {column: created_at, bucket: day, lookback: 28d}
    expect: {anomaly: {method: mad, sensitivity: 2.5, direction: down, seasonality: weekly}}
  - {name: c, sql: SELECT count(*) FROM t, expect: {anomaly: {runs: 14, min_history: 3}}}
""",
    )
    assert errors == []
    texts = [c.expectation.text for c in auto.checks]
    assert texts == [
        "anomaly",
        "anomaly: mad, sensitivity 2.5, direction down, seasonality weekly",
        "anomaly: min_history 3, runs 14",
    ]
    over = auto.checks[1].over
    assert over is not None and (over.bucket, over.lookback_s, over.baseline_buckets) == (
        "day",
        28 * 86400.0,
        28,
    )
    definition = auto.definition()
    assert definition["checks"][1]["over"] == {
        "column": "created_at",
        "bucket": "day",
        "lookback": 2419200.0,
        "timezone": "UTC",
    }
    assert "over" not in definition["checks"][0]
    again = Automation.model_validate({**definition, "path": "stored", "line": 1})
    assert [c.expectation for c in again.checks] == [c.expectation for c in auto.checks]
    assert again.checks[1].over == over


@pytest.mark.parametrize(
    ("checks", "error"),
    [
        (
            "  - {name: c, row_count: {table: t}, expect: {anomaly: {sensitivity: 0}}}\n",
            "5:70: checks.0.expect.anomaly.sensitivity: Input should be greater than 0",
        ),
        (
            "  - {name: c, row_count: {table: t}, expect: {anomaly: {window: 3}}}\n",
            "5:65: checks.0.expect.anomaly.window: unknown key; anomaly takes method, "
            "sensitivity, min_history, direction, seasonality, runs",
        ),
        (
            "  - {name: c, freshness: {table: t, column: c}, expect: anomaly}\n",
            "5:57: checks.0.expect: freshness is compared with a duration ('< 3h'); "
            "'anomaly' compares against its history",
        ),
        (
            "  - {name: c, duplicates: {table: t, columns: [a]}, expect: anomaly,"
            " over: {column: d, bucket: day, lookback: 7d}}\n",
            "5:76: checks.0.over: over: is for the count kinds (row_count, missing, "
            "accepted_values, relationships, range, validity), not duplicates",
        ),
        (
            "  - {name: c, row_count: {table: t}, over: {column: d, bucket: day, lookback: 36h}}\n",
            "5:44: checks.0.over: lookback is a whole number of days (a day is 86400 s; "
            "got 129600 s)",
        ),
        (
            "  - {name: c, row_count: {table: t}, expect: {anomaly: {runs: 5}},"
            " over: {column: d, bucket: day, lookback: 7d}}\n",
            "5:46: checks.0.expect: runs is the baseline of an anomaly over past runs; with "
            "over: the lookback sets the baseline",
        ),
        (
            "  - {name: c, row_count: {table: t}, expect: {anomaly: {seasonality: weekly}},"
            " over: {column: d, bucket: week, lookback: 28d}}\n",
            "5:46: checks.0.expect: seasonality: weekly compares a day (or hour) with the same "
            "weekday; weekly buckets have none",
        ),
    ],
)
def test_bad_anomaly_and_over(tmp_path: Path, checks: str, error: str) -> None:
    errors, automations = load(tmp_path, checks)
    assert errors == [error]
    assert automations == []
