from __future__ import annotations

import datetime as dt
import math

import pytest

from checks.http.retry_after import parse_retry_after

NOW = dt.datetime(2015, 10, 21, 7, 28, 0, tzinfo=dt.UTC)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        # delta-seconds: ASCII digits, surrounding SP/HTAB ignored
        ("0", 0.0),
        ("1", 1.0),
        ("120", 120.0),
        ("007", 7.0),
        (" 5 ", 5.0),
        ("\t5\t", 5.0),
        ("9" * 400, math.inf),
        # not delta-seconds: not said
        ("1.5", None),
        ("0.5", None),
        ("-3", None),
        ("-0", None),
        ("+5", None),
        ("1e3", None),
        ("0x10", None),
        ("1_000", None),
        ("5 s", None),
        ("1, 2", None),
        ("\u0661", None),  # ARABIC-INDIC DIGIT ONE: int() would take it, RFC 9110 does not
        ("inf", None),
        ("nan", None),
        ("soon", None),
        ("", None),
        ("   ", None),
        (None, None),
        # HTTP-date, all three forms of RFC 9110 §5.6.7, measured from NOW
        ("Wed, 21 Oct 2015 07:28:30 GMT", 30.0),
        ("Wednesday, 21-Oct-15 07:29:00 GMT", 60.0),
        ("Wed Oct 21 07:28:45 2015", 45.0),  # asctime: no zone, UTC
        (" Wed, 21 Oct 2015 07:28:30 GMT ", 30.0),
        ("Wed, 21 Oct 2015 09:28:30 +0200", 30.0),
        # a date now or in the past: 0
        ("Wed, 21 Oct 2015 07:28:00 GMT", 0.0),
        ("Wed, 21 Oct 2015 07:27:00 GMT", 0.0),
        ("Thu, 01 Jan 1970 00:00:00 GMT", 0.0),
        # impossible dates: not said
        ("Wed, 32 Oct 2015 07:28:00 GMT", None),
        ("Wed, 21 Oct 2015 25:28:00 GMT", None),
        ("Wed, 21 Oct 99999 07:28:00 GMT", None),
    ],
)
def test_retry_after_values(value: str | None, expected: float | None) -> None:
    assert parse_retry_after(value, now=NOW) == expected


def test_a_date_is_measured_from_the_current_time_by_default() -> None:
    ahead = dt.datetime.now(dt.UTC) + dt.timedelta(hours=1)
    seconds = parse_retry_after(ahead.strftime("%a, %d %b %Y %H:%M:%S GMT"))
    assert seconds is not None and 3598.0 <= seconds <= 3600.0
