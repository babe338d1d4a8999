"""The rules on profiles made by hand: what is and is not suggested, and the problems named."""

from __future__ import annotations

import datetime as dt

from checks.settings.limits import Limits
from checks.suggest.profile import ColumnProfile, TableProfile
from checks.suggest.rules import suggest
from checks.suggest.sampling import Sample
from checks.suggest.source_pass import suggest_source

NOW = dt.datetime(2026, 12, 7, 12, tzinfo=dt.UTC)


def _table(
    newest: dt.datetime, daily: dict[str, int] | None = None, rows: int = 100
) -> TableProfile:
    stamp = ColumnProfile("loaded_at", "TIMESTAMP", "timestamp", rows, rows, newest, newest)
    days = {"loaded_at": daily} if daily else {}
    return TableProfile("loads", rows, rows, Sample(100.0, "every row"), NOW, [stamp], days)


def _named(found: TableProfile) -> list[tuple[str, str | None]]:
    suggestions, _ = suggest(found, [])
    return [(s.check["name"], s.problem) for s in suggestions]


def test_a_week_old_timestamp_gets_no_freshness_or_volume_check_and_a_note() -> None:
    found, notes = suggest(_table(dt.datetime(2026, 11, 30, 11)), [])
    assert [s.check["name"] for s in found] == [
        "columns and types",
        "rows present",
        "loaded_at present",
    ]
    assert notes == [
        "loads.loaded_at: newest value 2026-11-30 11:00:00 is 7d 1h old (more than a week):"
        " history, or loading stopped; no freshness or volume check suggested"
    ]


def test_a_newest_value_in_the_future_is_a_problem_named() -> None:
    assert _named(_table(dt.datetime(2026, 12, 7, 13)))[-1] == (
        "loaded_at fresh",
        "loads.loaded_at's newest value 2026-12-07 13:00:00 is 1h in the future",
    )


def test_volume_only_with_rows_yesterday_and_an_anomaly_there_named() -> None:
    steady = {f"2026-11-{d:02d}": 100 + d % 3 for d in range(1, 31)}
    assert _named(_table(dt.datetime(2026, 12, 7, 11), steady))[-1][0] == "loaded_at fresh"
    found = _named(_table(dt.datetime(2026, 12, 7, 11), {**steady, "2026-12-06": 100}))
    assert found[-1] == ("daily volume by loaded_at", None)
    found = _named(_table(dt.datetime(2026, 12, 7, 11), {**steady, "2026-12-06": 400}))
    name, problem = found[-1]
    assert name == "daily volume by loaded_at"
    assert problem is not None and problem.startswith("loads: 400 rows on 2026-12-06 by loaded_at:")


def test_an_empty_table_gets_its_schema_check_only() -> None:
    found, notes = suggest(_table(dt.datetime(2026, 12, 7, 11), rows=0), [])
    assert [s.check["name"] for s in found] == ["columns and types"]
    assert notes == ["loads: empty on 2026-12-07: only its columns are checked"]


def test_a_table_whose_profile_runs_out_of_time_is_not_profiled(flights_source: object) -> None:
    from checks.sources import Source

    assert isinstance(flights_source, Source)
    assert Limits().query_timeout_s > 0
    found = suggest_source(flights_source, ["airlines"], budget_s=1e-9, now=NOW)
    assert (found.tables, found.failed) == ([], {"airlines": "the profile's time budget ran out"})
