"""A run's duration on the terminal: one scheme, a fast run never reads as nothing."""

from __future__ import annotations

import math

import pytest

from worker.cli.durations import duration_text


@pytest.mark.parametrize(
    ("seconds", "shown"),
    [
        (0.0, "0 ms"),
        (0.0004, "< 1 ms"),  # not nothing: less than a millisecond
        (0.0006, "1 ms"),
        (0.012, "12 ms"),
        (0.4, "400 ms"),
        (0.9994, "999 ms"),
        (0.9996, "1.0 s"),  # never 1000 ms
        (3.24, "3.2 s"),
        (59.94, "59.9 s"),
        (59.96, "1 min 00 s"),  # never 60.0 s
        (125.0, "2 min 05 s"),
        (548.4, "9 min 08 s"),  # as the README writes the suite's time
        (3599.4, "59 min 59 s"),
        (3599.6, "1 h 00 min"),
        (3725.0, "1 h 02 min"),
        (90000.0, "25 h 00 min"),
    ],
)
def test_each_duration_reads_in_its_own_unit(seconds: float, shown: str) -> None:
    assert duration_text(seconds) == shown


@pytest.mark.parametrize("bad", [-0.001, math.nan, math.inf])
def test_a_negative_or_unmeasured_duration_is_refused(bad: float) -> None:
    with pytest.raises(ValueError, match="a duration is a finite number of seconds >= 0"):
        duration_text(bad)
