"""The margins suggested bounds leave, and the numbers a goal may cite: exact values."""

from __future__ import annotations

import math

import pytest

from checks.suggest.margins import freshness_bound, null_bound, range_bounds, rows_floor
from checks.suggest.profile_numbers import unsupported
from checks.suggest.rules import check_name
from checks.suggest.yaml_writer import automation_name


@pytest.mark.parametrize(
    ("low", "high", "whole", "bounds"),
    [
        (17, 4983, True, (0, 5500)),  # never below 0 when nothing was
        (-43, 1301, True, (-180, 1500)),
        (1, 12, True, (0, 14)),
        (12.74, 100.0, False, (4, 110)),
        (-9.94, 78.08, False, (-19, 87)),
        (-50, -10, True, (-54, -6)),
        (-5, 0, True, (-6, 0)),  # never above 0 when nothing was
        (0.001, 0.002, False, (0.0009, 0.0021)),
        (2013, 2013, True, (1800, 2300)),  # no span: a tenth of the value
    ],
)
def test_range_bounds_widen_by_a_tenth_of_the_span_to_two_figures(
    low: float, high: float, whole: bool, bounds: tuple[float, float]
) -> None:
    assert range_bounds(low, high, whole=whole) == bounds


def test_null_share_row_floor_and_freshness_margins() -> None:
    assert [null_bound(p) for p in (0.0038, 2.45, 20.0, 83.9, 99.3)] == [0.6, 3.7, 30.0, 92.0, 99.7]
    assert [rows_floor(n) for n in (16, 3322, 336_776, 0)] == [14, 2900, 300_000, 0]
    assert freshness_bound(3600) == 86_400  # at least a day
    assert freshness_bound(200_000) == 403_200  # twice the age, whole hours


def test_a_goal_may_cite_only_the_profiles_numbers_and_dates() -> None:
    facts = {
        "rows": 336_776,
        "columns": [{"name": "dep_time", "null_percent": 2.4512, "min": "1", "max": "2400"}],
        "profiled_on": "2026-12-07 23:00",
        "values": {"9E": 18_460},
    }
    held = (
        "336,776 rows; dep_time NULL in 2.45 % (2.5 %), between 1 and 2400, on 2026-12-07 at 23:00"
    )
    assert unsupported(held, facts) == []
    assert unsupported("at most 3 % NULL, 42 carriers, 1.5x more on 2026-12-08, -1", facts) == [
        "2026-12-08",
        "3",
        "42",
        "1.5",
        "-1",
    ]
    assert unsupported("carrier 9E flew 18,460 flights", facts) == []


def test_names_from_the_data_become_valid_names() -> None:
    assert check_name('total € "x"\nnext present') == "total _ _x__next present"
    assert check_name("__x") == "x"
    assert check_name("€€") == "check"
    assert automation_name("flights", "Weather Hourly!") == "flights-weather-hourly-suggested"
    assert len(automation_name("s", "t" * 200)) == 64


def test_nan_and_infinity_among_the_facts_hold_no_number() -> None:
    facts = {"rows": 20, "null_percent": float("nan"), "max": float("inf"), "min": -math.inf}
    assert unsupported("20 rows, 0 NULL", facts) == ["0"]


def test_no_range_around_nan_or_infinity() -> None:
    for low, high, said in [(0.5, math.nan, "0.5 and nan"), (-math.inf, 19.0, "-inf and 19.0")]:
        with pytest.raises(ValueError) as raised:
            range_bounds(low, high, whole=False)
        assert str(raised.value) == f"no range around {said}: a bound needs finite numbers"
