"""Real DuckDB tables suggest never gets wrong: young tables, NaN and infinity, spaced names,
a column all NULL, and one table's failure beside others still written."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import duckdb
import pytest
import yaml

from checks.automation.loader import load_automations
from checks.clock import utcnow
from checks.run import SourcePool, run_automation
from checks.settings.config import Settings
from checks.settings.sources import DuckDBSource
from checks.suggest import rules
from checks.suggest.margins import range_bounds
from checks.suggest.source_pass import suggest_source
from checks.suggest.yaml_writer import file_name, render
from tests.cli_support import run_cli


def _stamps(day: dt.date, rows: int, start: dt.time = dt.time()) -> list[tuple[dt.datetime]]:
    first = dt.datetime.combine(day, start)
    return [(first + dt.timedelta(seconds=300 * i),) for i in range(rows)]


def _settings(tmp_path: Path, path: Path) -> Settings:
    return Settings(
        cache_dir=str(tmp_path / "cache"),
        sources={"shop": DuckDBSource(type="duckdb", database=str(path))},
    )


def _write(settings: Settings, tables: list[str], folder: Path) -> dict[str, list[str]]:
    """Suggest ``tables`` now, write their files into ``folder``; each table's notes."""
    folder.mkdir(exist_ok=True)
    with SourcePool(settings) as pool:
        found = suggest_source(pool.get("shop"), tables, now=utcnow())
    notes = {}
    for table in found.tables:
        name = table.profile.name
        text = render("shop", name, table.suggestions, ["test"], None, table.notes)
        (folder / file_name("shop", name)).write_text(text, encoding="utf-8")
        notes[name] = table.notes
    return notes


def _outcomes(settings: Settings, folder: Path) -> dict[str, list[tuple[str, str]]]:
    loaded = load_automations(folder, known_sources={"shop"})
    assert loaded.errors == []
    with SourcePool(settings) as pool:
        reports = [run_automation(a, settings, pool) for a in loaded.automations]
    return {r.automation: [(c.name, str(c.outcome)) for c in r.checks] for r in reports}


@pytest.fixture
def young(tmp_path: Path) -> tuple[Settings, dt.date]:
    """``orders``: 285 or 286 rows on each of the 6 days before today, 286 yesterday;
    ``events``: 40 rows from 10:30 twenty days ago, then 100 a day."""
    today = utcnow().date()
    path = tmp_path / "young.duckdb"
    with duckdb.connect(str(path)) as db:
        db.execute("CREATE TABLE orders (created_at TIMESTAMP)")
        db.execute("CREATE TABLE events (seen_at TIMESTAMP)")
        for back in range(6, 0, -1):
            rows = 286 if back % 2 else 285
            db.executemany(
                "INSERT INTO orders VALUES (?)", _stamps(today - dt.timedelta(back), rows)
            )
        db.executemany(
            "INSERT INTO events VALUES (?)", _stamps(today - dt.timedelta(20), 40, dt.time(10, 30))
        )
        for back in range(19, 0, -1):
            db.executemany(
                "INSERT INTO events VALUES (?)", _stamps(today - dt.timedelta(back), 100)
            )
    return _settings(tmp_path, path), today


def _volume(folder: Path, table: str) -> dict[str, object]:
    data = yaml.safe_load((folder / file_name("shop", table)).read_text())
    (check,) = [c for c in data["checks"] if "over" in c]
    return dict(check)


@pytest.mark.slow  # over 2 s: make test runs it, make test-fast leaves it out
def test_a_young_tables_volume_never_reaches_before_its_first_row_and_passes_today(
    young: tuple[Settings, dt.date], tmp_path: Path
) -> None:
    settings, today = young
    folder = tmp_path / "automations"
    notes = _write(settings, ["orders", "events"], folder)
    first = (today - dt.timedelta(6)).isoformat()
    ready = (today - dt.timedelta(6) + dt.timedelta(8)).isoformat()
    yesterday = (today - dt.timedelta(1)).isoformat()
    assert notes["orders"] == [
        f"orders.created_at: 5 days of history before {yesterday} (since created_at's first full"
        f" day {first}), fewer than the 7 an anomaly needs: rows every day suggested;"
        f" lookout suggest on {ready} or later suggests the anomaly"
    ]
    assert _volume(folder, "orders") == {
        "name": "daily volume by created_at",
        "row_count": {"table": "orders"},
        "over": {"column": "created_at", "bucket": "day", "lookback": "1d"},
        "expect": "> 0",
    }
    # the first day, from 10:30, is partial: the lookback starts the day after
    first_full = (today - dt.timedelta(19)).isoformat()
    assert notes["events"] == [
        "events.seen_at: lookback 18d, not 56d: the days before seen_at's first full day"
        f" {first_full} had no rows yet, and would count as 0"
    ]
    assert _volume(folder, "events")["over"] == {
        "column": "seen_at",
        "bucket": "day",
        "lookback": "18d",
    }
    assert _volume(folder, "events")["expect"] == "anomaly"
    outcomes = _outcomes(settings, folder)
    assert outcomes["shop-orders-suggested"][-1] == ("daily volume by created_at", "passed")
    assert outcomes["shop-events-suggested"][-1] == ("daily volume by seen_at", "passed")
    assert all(o == "passed" for checks in outcomes.values() for _, o in checks)


def test_the_56_day_lookback_it_suggested_before_is_a_false_alarm_on_the_same_table(
    young: tuple[Settings, dt.date], tmp_path: Path
) -> None:
    settings, _ = young
    folder = tmp_path / "automations"
    folder.mkdir()
    (folder / "old.yaml").write_text(
        "name: old\nsource: shop\nschedule: '0 6 * * *'\ntimezone: UTC\nchecks:\n"
        "  - name: daily volume\n    row_count: {table: orders}\n"
        "    over: {column: created_at, bucket: day, lookback: 56d}\n    expect: anomaly\n"
    )
    loaded = load_automations(folder, known_sources={"shop"})
    with SourcePool(settings) as pool:
        (check,) = run_automation(loaded.automations[0], settings, pool).checks
    # the 50 days before the first row count as 0: 286 is 3.17 deviations above their mean
    assert check.anomaly is not None
    assert (str(check.outcome), round(check.anomaly.score or 0, 2)) == ("failed", 3.17)


def _odd_source(tmp_path: Path) -> Settings:
    path = tmp_path / "odd.duckdb"
    with duckdb.connect(str(path)) as db:
        db.execute(
            'CREATE TABLE h (" lead" INTEGER, "trail " INTEGER, nan DOUBLE, inf DOUBLE,'
            " empty INTEGER, n INTEGER)"
        )
        db.executemany(
            "INSERT INTO h VALUES (?, ?, ?, ?, NULL, ?)",
            [
                (
                    i % 3,
                    i % 4,
                    float("nan") if i == 0 else i / 2,
                    float("-inf") if i == 1 else i,
                    i % 5,
                )
                for i in range(20)
            ],
        )
        db.execute("CREATE TABLE plain (n INTEGER)")
        db.executemany("INSERT INTO plain VALUES (?)", [(i % 7,) for i in range(30)])
        csv = tmp_path / "gone.csv"
        csv.write_text("n\n1\n")
        db.execute(f"CREATE VIEW broken AS SELECT n FROM read_csv('{csv}')")
        csv.unlink()  # listed in the catalog; reading it fails
        db.execute('CREATE TABLE " spaced" (n INTEGER)')
    return _settings(tmp_path, path)


def test_nan_infinity_spaced_names_and_an_all_null_column_give_files_that_validate_and_pass(
    tmp_path: Path,
) -> None:
    settings = _odd_source(tmp_path)
    folder = tmp_path / "automations"
    notes = _write(settings, ["h"], folder)
    assert notes["h"] == [
        "h.' lead': its name has leading or trailing spaces, which the automation loader"
        " strips: no check suggested for it",
        "h.'trail ': its name has leading or trailing spaces, which the automation loader"
        " strips: no check suggested for it",
        f"h.empty: all NULL in 20 rows on {utcnow().date()}: no missing check (any share of"
        " NULLs would pass it)",
        "h.nan: holds NaN or infinity (min 0.5, max nan): no range suggested (no bound holds a"
        " value that is not a finite number)",
        "h.inf: holds NaN or infinity (min -inf, max 19.0): no range suggested (no bound holds a"
        " value that is not a finite number)",
    ]
    text = (folder / "shop-h-suggested.yaml").read_text()
    assert "# note: h.empty: all NULL in 20 rows on" in text
    assert _outcomes(settings, folder) == {
        "shop-h-suggested": [
            ("columns and types", "passed"),
            ("rows present", "passed"),
            ("nan present", "passed"),
            ("inf present", "passed"),
            ("n present", "passed"),
            ("n range", "passed"),
        ]
    }
    data = yaml.safe_load(text)
    assert data["checks"][0]["schema"]["columns"] == {
        "nan": "float",
        "inf": "float",
        "empty": "integer",
        "n": "integer",
    }


def test_one_tables_failure_never_stops_the_others_and_the_exit_status_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _odd_source(tmp_path)
    config = tmp_path / "lookout.yaml"
    config.write_text(
        yaml.safe_dump(
            {"sources": {"shop": {"type": "duckdb", "database": str(tmp_path / "odd.duckdb")}}}
        )
    )
    env = {"LOOKOUT_CONFIG": str(config), "LOOKOUT_CACHE_DIR": str(tmp_path / "cache")}
    out_dir = tmp_path / "suggested"
    code, out, err = run_cli(monkeypatch, capsys, ["suggest", "shop", "--out", str(out_dir)], env)
    lines = [line.replace(str(out_dir), "OUT") for line in out.splitlines()]
    assert (code, err) == (1, "")
    assert (
        lines[0]
        == " spaced: not suggested: its name has leading or trailing spaces, which the loader"
        " strips"
    )
    assert lines[1].startswith("broken: not suggested: ") and "gone.csv" in lines[1]
    assert [line for line in lines if line.startswith("OUT/")] == [
        "OUT/shop-h-suggested.yaml: new, 6 checks",
        "OUT/shop-plain-suggested.yaml: new, 4 checks",
    ]
    assert sorted(p.name for p in out_dir.iterdir()) == [
        "shop-h-suggested.yaml",
        "shop-plain-suggested.yaml",
    ]
    code, out, _ = run_cli(monkeypatch, capsys, ["--automations", str(out_dir), "validate"], env)
    assert (code, out.splitlines()[-1]) == (
        0,
        "2 automations valid in 2 files; 0 errors, 0 warnings",
    )


def test_a_rule_failing_on_one_table_leaves_the_others_suggested(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = _odd_source(tmp_path)

    def failing(low: float, high: float, *, whole: bool) -> tuple[int | float, int | float]:
        if (low, high) == (0, 4):  # h.n: a bug in a rule stands in for any failure
            raise ArithmeticError("a bug")
        return range_bounds(low, high, whole=whole)

    monkeypatch.setattr(rules, "range_bounds", failing)
    with SourcePool(settings) as pool:
        found = suggest_source(pool.get("shop"), ["h", "plain"], now=utcnow())
    assert found.failed == {"h": "ArithmeticError: a bug"}
    assert [t.profile.name for t in found.tables] == ["plain"]
