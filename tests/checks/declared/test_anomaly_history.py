"""``expect: anomaly`` over the automation's past runs, through the real run path and store.

Each run reads a real DuckDB file rewritten between runs (the day's volume)
and is stored in a real store (SQLite and PostgreSQL); the baseline is the
check's values in the earlier completed runs (``check_series``). Expected
scores are computed here from the stated formulas, not with the code under test.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb
import pytest

from checks.automation.model import Automation
from checks.opinion.decision_model import read_untrusted_state
from checks.report import RunReport
from checks.run import SourcePool
from checks.run_lifecycle import run_and_store
from checks.settings.alerts import EventKind
from checks.settings.config import Settings
from checks.settings.decision import DecisionSettings
from checks.settings.sources import DuckDBSource
from checks.store.incidents import AlertEvent
from checks.store.store import Store
from tests.conftest import scratch_pg_database
from worker.alerts.delivery import build_alert

pytestmark = pytest.mark.slow  # every test here runs the anomaly path over weeks of runs

MONDAY = dt.datetime(2026, 11, 2, 6, 0, tzinfo=dt.UTC)
NORMAL = [100, 102, 98, 101, 99, 100, 103]


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    if request.param == "sqlite":
        opened = Store(f"sqlite:///{tmp_path}/lookout.db")
        yield opened
        opened.close()
        return
    with scratch_pg_database() as url:
        opened = Store(url)
        yield opened
        opened.close()


def automation(expect: Any = "anomaly", **extra: Any) -> Automation:
    return Automation.model_validate(
        {
            "name": "daily-orders",
            "source": "shop",
            "goal": "Orders arrive at their usual volume.",
            "checks": [
                {"name": "volume", "row_count": {"table": "orders"}, "expect": expect},
                {"name": "raw volume", "sql": "SELECT count(*) FROM orders", "expect": expect},
            ],
            "path": "inline.yaml",
            "line": 1,
            **extra,
        }
    )


class Days:
    """Runs one automation day after day over a DuckDB file holding that day's orders."""

    def __init__(self, tmp_path: Path, store: Store, auto: Automation) -> None:
        self.path = tmp_path / "shop.duckdb"
        self.store = store
        self.auto = auto
        self.day = 0
        self.settings = Settings(
            store_url="sqlite://",
            cache_dir=str(tmp_path / "cache"),
            sources={"shop": DuckDBSource(type="duckdb", database=str(self.path))},
        )

    def run(self, orders: int, settings: Settings | None = None) -> RunReport:
        with duckdb.connect(str(self.path)) as conn:
            conn.execute(
                "CREATE OR REPLACE TABLE orders AS SELECT range AS id FROM range(?)", [orders]
            )
        slot = MONDAY + dt.timedelta(days=self.day)
        self.day += 1
        with SourcePool(settings or self.settings) as pool:
            return run_and_store(
                self.auto, settings or self.settings, pool, self.store, scheduled_for=slot
            )

    def history(self, counts: list[int]) -> None:
        for count in counts:
            self.run(count)


def zscore(baseline: list[float], value: float) -> tuple[float, float, float]:
    """(score, low, high) at sensitivity 3, by the stated formula."""
    n = len(baseline)
    mean = sum(baseline) / n
    sd = math.sqrt(sum((x - mean) ** 2 for x in baseline) / (n - 1))
    return (value - mean) / sd, mean - 3 * sd, mean + 3 * sd


def test_a_spike_and_a_drop_need_attention_with_their_score(tmp_path: Path, store: Store) -> None:
    days = Days(tmp_path, store, automation())
    first = days.run(NORMAL[0])
    (volume, raw) = first.checks
    assert (volume.outcome, volume.reason) == ("not_evaluated", "0 of 7 points of history")
    assert (raw.outcome, raw.reason) == ("not_evaluated", "0 of 7 points of history")
    assert first.finding == "needs_attention"
    days.history(NORMAL[1:])

    spike = days.run(140)
    score, low, high = zscore([float(x) for x in NORMAL], 140)
    for check in spike.checks:
        assert check.outcome == "failed"
        found = check.anomaly
        assert found is not None
        assert found.score == pytest.approx(score, rel=1e-12)
        assert (found.low, found.high) == (pytest.approx(low), pytest.approx(high))
        assert [v for _, v in found.baseline] == NORMAL
        assert found.baseline[0][0] == MONDAY.isoformat()
        assert (found.source, found.method, found.value) == ("runs", "zscore", 140.0)
    assert spike.finding == "needs_attention"
    assert f"score {score:.2f} (zscore over 7 runs)" in spike.summary
    assert spike.run_id is not None
    stored = store.get_run(spike.run_id)
    assert stored is not None
    alert = build_alert(stored, AlertEvent(EventKind.NEEDS_ATTENTION), days.settings)
    line = f"value 140, expected {low:.2f}–{high:.2f}, baseline 7 runs, score {score:.2f}"
    assert alert.anomalies == (f"volume: {line}", f"raw volume: {line}")
    assert ("Anomaly", f"volume: {line}") in alert.facts()

    # the spike is now history: the next baseline is every earlier run (at most 28), the spike too
    drop = days.run(20)
    baseline = [float(x) for x in [*NORMAL, 140]]
    score, low, high = zscore(baseline, 20)
    (volume, _) = drop.checks
    assert volume.outcome == "failed"
    assert volume.anomaly is not None
    assert volume.anomaly.score == pytest.approx(score, rel=1e-12) and score < -1


def test_a_normal_day_is_clear_and_its_band_is_stored(tmp_path: Path, store: Store) -> None:
    days = Days(tmp_path, store, automation())
    days.history(NORMAL)
    normal = days.run(104)
    assert normal.finding == "clear"
    score, low, high = zscore([float(x) for x in NORMAL], 104)
    (volume, _) = normal.checks
    assert volume.anomaly is not None and volume.anomaly.score == pytest.approx(score)
    assert normal.run_id is not None
    stored = store.get_run(normal.run_id)
    assert stored is not None and stored.checks[0].anomaly == volume.anomaly
    (point,) = store.series("daily-orders", "volume", limit=1)
    assert (point.value, point.low, point.high) == (104.0, pytest.approx(low), pytest.approx(high))
    assert point.outcome == "passed"
    assert normal.to_dict()["checks"][0]["anomaly"]["baseline_size"] == 7


def test_a_constant_baseline_flags_any_change(tmp_path: Path, store: Store) -> None:
    days = Days(tmp_path, store, automation())
    days.history([50] * 7)
    same = days.run(50)
    (volume, _) = same.checks
    assert (volume.outcome, volume.anomaly and volume.anomaly.score) == ("passed", 0.0)
    assert volume.reason == "constant baseline (all 7 points are 50): any change is an anomaly"
    changed = days.run(51)
    (volume, _) = changed.checks
    assert volume.outcome == "failed"
    assert volume.anomaly is not None
    assert (volume.anomaly.low, volume.anomaly.high, volume.anomaly.score) == (50.0, 50.0, None)
    assert volume.anomaly.constant
    assert "value 51, expected 50, score —" in changed.summary


def test_too_little_history_is_not_evaluated(tmp_path: Path, store: Store) -> None:
    days = Days(tmp_path, store, automation())
    days.history([10, 11, 12])
    short = days.run(500)
    assert [c.outcome for c in short.checks] == ["not_evaluated", "not_evaluated"]
    assert [c.reason for c in short.checks] == ["3 of 7 points of history"] * 2
    assert "Not evaluated: **volume** — 3 of 7 points of history." in short.summary
    assert short.finding == "needs_attention"


def test_direction_and_mad(tmp_path: Path, store: Store) -> None:
    rule = {"anomaly": {"method": "mad", "direction": "down", "min_history": 5}}
    days = Days(tmp_path, store, automation(rule))
    days.history([100, 100, 100, 104, 90])
    # median 100; |x - 100| = 0, 0, 0, 4, 10: MAD 0 (more than half equal), so the
    # spread falls back to 1.2533 × mean absolute deviation = 1.2533 × 2.8
    up = days.run(400)
    (volume, _) = up.checks
    assert volume.outcome == "passed"  # a rise, and only drops are watched
    assert volume.anomaly is not None
    assert volume.anomaly.spread == pytest.approx(1.2533 * 2.8)
    assert volume.anomaly.high is None
    assert volume.anomaly.low == pytest.approx(100 - 3 * 1.2533 * 2.8)
    # baseline now 100, 100, 100, 104, 90, 400: median 100, deviations 0 0 0 4 10 300, MAD 2
    down = days.run(70)
    (volume, _) = down.checks
    assert volume.anomaly is not None
    assert volume.anomaly.spread == pytest.approx(1.4826 * 2)
    assert volume.anomaly.score == pytest.approx((70 - 100) / (1.4826 * 2))
    assert volume.outcome == "failed"


def test_weekly_seasonality_compares_the_same_weekday(tmp_path: Path, store: Store) -> None:
    rule = {"anomaly": {"seasonality": "weekly", "min_history": 3}}
    days = Days(tmp_path, store, automation(rule, timezone="Europe/Paris"))
    # three weeks: Mondays 500-ish, other days 100-ish
    for _week in range(3):
        days.history([500 + _week, 100, 101, 99, 100, 102, 98])
    monday = days.run(505)  # day 21 is a Monday
    (volume, _) = monday.checks
    assert volume.anomaly is not None
    assert [v for _, v in volume.anomaly.baseline] == [500.0, 501.0, 502.0]
    score, _, _ = zscore([500.0, 501.0, 502.0], 505)
    assert volume.anomaly.score == pytest.approx(score)
    assert volume.outcome == "failed"  # 505 is 4 standard deviations above these Mondays
    tuesday = days.run(100)
    (volume, _) = tuesday.checks
    assert volume.outcome == "passed"
    assert volume.anomaly is not None
    assert [v for _, v in volume.anomaly.baseline] == [100.0, 100.0, 100.0]
    assert volume.reason == "constant baseline (all 3 points are 100): any change is an anomaly"


def test_the_second_opinion_gets_the_computed_anomaly(tmp_path: Path, store: Store) -> None:
    from checks.fakes.decision_server import FakeDecision

    calm = {"nothing_to_do": 0.7, "worth_a_look": 0.2, "act_soon": 0.05, "act_now": 0.05}
    days = Days(tmp_path, store, automation())
    days.history(NORMAL)
    script = [{"answers": {"goal_met": 0.2, "urgency": {"probabilities": calm}}}]
    with FakeDecision("systemone", script=script) as fake:
        settings = days.settings.model_copy(
            update={
                "decision": DecisionSettings(
                    backend="systemone", base_url=fake.base_url, model="jev"
                )
            }
        )
        days.run(140, settings)
        state = read_untrusted_state(fake.bodies[0]["state"])
    (volume, _) = state["this_run"]["checks"]
    score, _low, high = zscore([float(x) for x in NORMAL], 140)
    assert volume["outcome"] == "failed"
    assert volume["anomaly"]["score"] == pytest.approx(score)
    assert volume["anomaly"]["high"] == pytest.approx(high)
    assert volume["anomaly"]["baseline_size"] == 7
    assert [v for _, v in volume["anomaly"]["baseline"]] == NORMAL
