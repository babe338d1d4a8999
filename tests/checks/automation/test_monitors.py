"""Monitors: a source's ``monitor:`` made into ``monitor:SOURCE.TABLE`` automations, for real.

The sources are a real DuckDB file and a real PostgreSQL database; the runs go
through the real run path into a real store (SQLite), as ``lookout run`` does.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable, Iterator
from pathlib import Path

import duckdb
import psycopg
import pytest

from checks.automation.loader import load_file
from checks.automation.monitors import freshness_column, make_monitors
from checks.errors import ConfigError
from checks.report import RunReport
from checks.run import SourcePool
from checks.run_lifecycle import run_and_store
from checks.settings.config import Settings, load_settings
from checks.sql.catalog import Column
from checks.store.store import Store
from tests.cli_support import run_lookout
from tests.conftest import scratch_pg_database

MONDAY = dt.datetime(2026, 11, 2, 6, 0, tzinfo=dt.UTC)


class Shop:
    """One engine's ``orders`` and ``notes`` tables, a config that monitors them, and a store."""

    def __init__(self, tmp_path: Path, source: str, execute: Callable[[str], None]) -> None:
        self.tmp_path = tmp_path
        self.source = source
        self.execute = execute
        self.store = Store(f"sqlite:///{tmp_path}/lookout.db")
        self.day = 0

    def settings(self, monitor: str = "{tables: all}") -> Settings:
        config = self.tmp_path / "lookout.yaml"
        config.write_text(
            f"store_url: sqlite:///{self.tmp_path}/lookout.db\n"
            f"cache_dir: {self.tmp_path}/cache\n"
            f"automations_dir: {self.tmp_path}/automations\n"
            "sources:\n"
            "  shop:\n"
            f"{self.source}"
            f"    monitor: {monitor}\n"
        )
        return load_settings(config, env={})

    def orders(self, count: int, newest: dt.datetime) -> None:
        """Rewrite ``orders`` with ``count`` rows, the newest updated at ``newest``."""
        self.execute("DROP TABLE IF EXISTS orders")
        self.execute("CREATE TABLE orders (id INTEGER, created_at TIMESTAMP, updated_at TIMESTAMP)")
        stamp = newest.strftime("%Y-%m-%d %H:%M:%S")
        self.execute(
            "INSERT INTO orders SELECT g, TIMESTAMP '2020-01-01 00:00:00',"
            f" TIMESTAMP '{stamp}' FROM generate_series(1, {count}) AS s(g)"
        )

    def run(self, name: str, settings: Settings) -> RunReport:
        slot = MONDAY + dt.timedelta(days=self.day)
        self.day += 1
        with SourcePool(settings) as pool:
            made = make_monitors(settings, pool.get)
            (automation,) = [a for a in made.automations if a.name == name]
            return run_and_store(automation, settings, pool, self.store, scheduled_for=slot)


@pytest.fixture(params=["duckdb", "postgresql"])
def shop(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Shop]:
    if request.param == "duckdb":
        path = tmp_path / "shop.duckdb"

        def on_duckdb(sql: str) -> None:
            with duckdb.connect(str(path)) as conn:
                conn.execute(sql)

        made = Shop(tmp_path, f"    type: duckdb\n    database: {path}\n", on_duckdb)
        made.execute("CREATE TABLE notes (id INTEGER, body VARCHAR)")
        made.execute("INSERT INTO notes VALUES (1, 'a')")
        yield made
        made.store.close()
        return
    with scratch_pg_database() as url:
        plain = url.replace("postgresql+psycopg://", "postgresql://", 1)

        def on_postgres(sql: str) -> None:
            with psycopg.connect(plain, autocommit=True) as conn:
                conn.execute(sql.encode())

        made = Shop(tmp_path, f"    type: sqlalchemy\n    url: {url}\n", on_postgres)
        made.execute("CREATE TABLE notes (id INTEGER, body VARCHAR)")
        made.execute("INSERT INTO notes VALUES (1, 'a')")
        yield made
        made.store.close()


def test_each_table_gets_its_monitor(shop: Shop) -> None:
    shop.orders(3, dt.datetime.now(dt.UTC))
    settings = shop.settings('{tables: all, schedule: "0 * * * *", notify: [ops]}')
    with SourcePool(settings) as pool:
        made = make_monitors(settings, pool.get)
    assert [a.name for a in made.automations] == ["monitor:shop.notes", "monitor:shop.orders"]
    notes, orders = made.automations
    assert [c.model_dump(by_alias=True, exclude_none=True) for c in orders.checks] == [
        {
            "name": "freshness",
            "freshness": {
                "table": "orders",
                "column": "updated_at",  # updated before created
                "max_age": 86400.0,
                "future_tolerance": 300.0,
            },
        },
        {"name": "volume", "expect": "anomaly", "row_count": {"table": "orders"}},
        {"name": "schema", "schema": {"table": "orders", "changes": "forbid"}},
    ]
    assert [c.name for c in notes.checks] == ["volume", "schema"]
    assert (orders.schedule, orders.source, orders.notify, orders.tags) == (
        "0 * * * *",
        "shop",
        ["ops"],
        ["monitor"],
    )
    assert (orders.path, orders.line) == (str(shop.tmp_path / "lookout.yaml"), 8)
    assert made.warnings == [
        f"{shop.tmp_path / 'lookout.yaml'}:8: monitor:shop.notes:"
        " no date or timestamp column: freshness is not watched"
    ]
    assert made.errors == []


def test_a_listed_table_the_source_lacks_is_an_error_at_its_place(shop: Shop) -> None:
    shop.orders(3, dt.datetime.now(dt.UTC))
    settings = shop.settings("{tables: [orders, ordres2, notes], volume: false}")
    with SourcePool(settings) as pool:
        made = make_monitors(settings, pool.get)
    assert [a.name for a in made.automations] == ["monitor:shop.orders", "monitor:shop.notes"]
    (error,) = made.errors
    assert error.location_message() == (
        f"{shop.tmp_path / 'lookout.yaml'}:8:32: sources.shop.monitor.tables.1:"
        " source shop has no table 'ordres2' (did you mean 'orders'?)"
    )


def test_a_stale_table_fails_its_freshness(shop: Shop) -> None:
    shop.orders(5, dt.datetime.now(dt.UTC) - dt.timedelta(hours=30))
    settings = shop.settings("{tables: [orders], freshness: 2d, volume: false, schema: false}")
    (fresh,) = shop.run("monitor:shop.orders", settings).checks
    assert (fresh.name, fresh.outcome) == ("freshness", "passed")  # 30 h < 2 d
    stale = shop.settings("{tables: [orders], volume: false, schema: false}")
    report = shop.run("monitor:shop.orders", stale)
    (check,) = report.checks
    assert (check.name, check.outcome, check.expect) == ("freshness", "failed", "<= 1d")
    assert 30 * 3600 <= float(check.value) < 31 * 3600
    assert report.finding == "needs_attention"


def test_a_schema_change_between_two_runs_is_named(shop: Shop) -> None:
    settings = shop.settings("{tables: [notes], volume: false}")
    (first,) = shop.run("monitor:shop.notes", settings).checks
    assert (first.outcome, first.reason) == ("not_evaluated", "first run: schema recorded")
    shop.execute("ALTER TABLE notes ADD COLUMN surprise INTEGER")
    shop.execute("ALTER TABLE notes DROP COLUMN body")
    report = shop.run("monitor:shop.notes", settings)
    (check,) = report.checks
    assert (check.outcome, check.reason) == (
        "failed",
        "column surprise added; column body removed",
    )
    warn = shop.settings("{tables: [notes], volume: false, schema: warn}")
    shop.execute("ALTER TABLE notes ADD COLUMN more INTEGER")
    warned = shop.run("monitor:shop.notes", warn)
    assert [(c.outcome, c.reason) for c in warned.checks] == [("warned", "column more added")]
    assert warned.finding == "clear"


@pytest.mark.slow  # over 2 s: make test runs it, make test-fast leaves it out
def test_a_volume_anomaly_after_enough_history(shop: Shop) -> None:
    settings = shop.settings("{tables: [orders], freshness: false, schema: false}")
    for count in [100, 102, 98, 101, 99, 100, 103]:
        shop.orders(count, dt.datetime.now(dt.UTC))
        (check,) = shop.run("monitor:shop.orders", settings).checks
        assert check.outcome == "not_evaluated"
    shop.orders(101, dt.datetime.now(dt.UTC))
    (normal,) = shop.run("monitor:shop.orders", settings).checks
    assert (normal.name, normal.outcome, normal.value) == ("volume", "passed", 101)
    shop.orders(20, dt.datetime.now(dt.UTC))
    report = shop.run("monitor:shop.orders", settings)
    (drop,) = report.checks
    assert (drop.outcome, drop.value) == ("failed", 20)
    assert drop.anomaly is not None and drop.anomaly.baseline_size == 8
    assert report.finding == "needs_attention"
    # history is kept by the monitor's name, as any automation's
    points = shop.store.series("monitor:shop.orders", "volume")
    assert [p.value for p in points][-2:] == [101.0, 20.0]


def test_the_freshness_column_is_picked_by_type_then_name() -> None:
    def cols(*pairs: str) -> list[Column]:
        return [Column(p.split(":")[0], p.split(":")[1]) for p in pairs]

    pick = freshness_column
    assert pick(cols("id:INTEGER", "day:DATE", "at:TIMESTAMP"), "duckdb") == Column(
        "at", "TIMESTAMP"
    )
    both = cols("created_at:TIMESTAMP", "loaded_at:TIMESTAMP WITH TIME ZONE")
    assert pick(both, "duckdb") == Column("loaded_at", "TIMESTAMP WITH TIME ZONE")
    assert pick(cols("x:TIMESTAMP", "event_time:TIMESTAMP"), "duckdb") == Column(
        "event_time", "TIMESTAMP"
    )
    assert pick(cols("id:INTEGER", "day:DATE"), "duckdb") == Column("day", "DATE")
    assert pick(cols("id:INTEGER", "updated:VARCHAR"), "duckdb") is None


@pytest.mark.parametrize(
    ("monitor", "message"),
    [
        (
            "{tables: all, freshnes: true}",
            "lookout.yaml:8:38: sources.shop.monitor.freshnes: unknown field 'freshnes'"
            " (did you mean 'freshness'?)",
        ),
        (
            "{tables: all, schedule: 'every hour'}",
            "lookout.yaml:8:38: sources.shop.monitor.schedule: 2 fields; Lookout takes 5 fields",
        ),
        (
            "{tables: [], volume: true}",
            "lookout.yaml:8:23: sources.shop.monitor.tables: list at least one table",
        ),
        (
            "{freshness: soon}",
            "lookout.yaml:8:26: sources.shop.monitor.freshness: expected a duration",
        ),
        (
            "{schema: maybe}",
            "lookout.yaml:8:23: sources.shop.monitor.schema: true, false or warn, not 'maybe'",
        ),
        (
            "{freshness: false, volume: false, schema: false}",
            "lookout.yaml:8:14: sources.shop.monitor: ",
        ),
    ],
)
def test_config_errors_are_at_their_place(tmp_path: Path, monitor: str, message: str) -> None:
    shop = Shop(tmp_path, "    type: duckdb\n    database: x.duckdb\n", lambda _sql: None)
    with pytest.raises(ConfigError) as info:
        shop.settings(monitor)
    assert message in str(info.value)
    shop.store.close()


def test_lookout_run_runs_a_monitor_by_its_name(tmp_path: Path) -> None:
    path = tmp_path / "shop.duckdb"
    with duckdb.connect(str(path)) as conn:
        conn.execute("CREATE TABLE notes AS SELECT 1 AS id")
    shop = Shop(tmp_path, f"    type: duckdb\n    database: {path}\n", lambda _sql: None)
    shop.settings("{tables: all, volume: false}")
    (tmp_path / "automations").mkdir()
    config = ["--config", str(tmp_path / "lookout.yaml")]
    ran = run_lookout([*config, "run", "monitor:shop.notes", "--json"], cwd=tmp_path)
    (report,) = [json.loads(line) for line in ran.stdout.splitlines()]
    assert report["automation"] == "monitor:shop.notes", ran.stderr
    assert [(c["name"], c["outcome"], c["reason"]) for c in report["checks"]] == [
        ("schema", "not_evaluated", "first run: schema recorded")
    ]
    again = run_lookout([*config, "run", "--all", "--json"], cwd=tmp_path)
    (report,) = [json.loads(line) for line in again.stdout.splitlines()]
    assert [(c["name"], c["outcome"]) for c in report["checks"]] == [("schema", "passed")]
    valid = run_lookout([*config, "validate"], cwd=tmp_path)
    assert valid.stdout.splitlines() == [
        f"warning: {tmp_path}/automations: no automation files (*.yaml, *.yml)",
        f"warning: {tmp_path}/lookout.yaml:8: monitor:shop.notes: no date or timestamp column:"
        " freshness is not watched",
        "1 automation valid in 1 file; 0 errors, 2 warnings",
    ]
    shop.store.close()


def test_monitors_alone_need_no_automations_folder_and_a_typo_names_the_monitor(
    tmp_path: Path,
) -> None:
    path = tmp_path / "shop.duckdb"
    with duckdb.connect(str(path)) as conn:
        conn.execute("CREATE TABLE orders AS SELECT 1 AS id")
    shop = Shop(tmp_path, f"    type: duckdb\n    database: {path}\n", lambda _sql: None)
    shop.settings("{tables: all, volume: false}")  # and no automations folder
    config = ["--config", str(tmp_path / "lookout.yaml")]
    valid = run_lookout([*config, "validate"], cwd=tmp_path)
    assert (valid.returncode, valid.stderr) == (0, "")
    assert valid.stdout.splitlines()[0] == (
        f"warning: {tmp_path}/automations: no automations folder:"
        " only the sources' monitors (monitor:) run"
    )
    typo = run_lookout([*config, "run", "monitor:shop.order"], cwd=tmp_path)
    assert typo.returncode == 2
    assert typo.stderr.splitlines()[-1] == (
        "error: 'monitor:shop.order' is not a monitor of the config's sources"
        f" (did you mean 'monitor:shop.orders'?) (run 'lookout --config {tmp_path}/lookout.yaml"
        " validate' to see file errors)"
    )
    ran = run_lookout([*config, "run", "--all", "--json"], cwd=tmp_path)
    (report,) = [json.loads(line) for line in ran.stdout.splitlines()]
    assert report["automation"] == "monitor:shop.orders", ran.stderr
    # its first run compared no schema: not evaluated, so the run Needs attention (exit 1)
    assert [(c["outcome"], c["reason"]) for c in report["checks"]] == [
        ("not_evaluated", "first run: schema recorded")
    ]
    assert (report["finding"], ran.returncode) == ("needs_attention", 1)
    shop.store.close()


def test_the_dispatchers_catalog_needs_no_folder_with_monitors(tmp_path: Path) -> None:
    from worker.service.known_automations import KnownAutomations

    path = tmp_path / "shop.duckdb"
    with duckdb.connect(str(path)) as conn:
        conn.execute("CREATE TABLE orders AS SELECT 1 AS id")
    shop = Shop(tmp_path, f"    type: duckdb\n    database: {path}\n", lambda _sql: None)
    settings = shop.settings("{tables: all}")
    folder = tmp_path / "automations"  # never made
    loaded = KnownAutomations(folder, {"shop"}, settings=settings).refresh()
    assert ([a.name for a in loaded.automations], loaded.errors) == (["monitor:shop.orders"], [])
    alone = KnownAutomations(folder, {"shop"}).refresh()  # no monitors: the folder is missed
    assert [(e.path, e.message) for e in alone.errors] == [(str(folder), "no such file or folder")]
    shop.store.close()


def test_a_monitor_name_error_is_without_pydantic_words(tmp_path: Path) -> None:
    config = tmp_path / "lookout.yaml"
    path = tmp_path / "shop.duckdb"
    with duckdb.connect(str(path)) as conn:
        conn.execute("CREATE TABLE orders AS SELECT 1 AS id")
    config.write_text(
        f"store_url: sqlite:///{tmp_path}/lookout.db\nsources:\n  Shop:\n    type: duckdb\n"
        f"    database: {path}\n    monitor: {{tables: all}}\n"
    )
    settings = load_settings(config, env={})
    with SourcePool(settings) as pool:
        (error,) = make_monitors(settings, pool.get).errors
    assert error.location_message() == (
        f"{config}:6:14: sources.Shop.monitor: monitor:Shop.orders: a name is lowercase letters,"
        " digits, '_' and '-', starting with a letter or digit, at most 64 characters"
        " (got 'monitor:Shop.orders')"
    )


def test_a_file_cannot_name_an_automation_as_a_monitor(tmp_path: Path) -> None:
    file = tmp_path / "a.yaml"
    file.write_text("name: monitor:shop.notes\nsource: shop\ngoal: Be fine.\n")
    (error,) = load_file(file).errors
    assert str(error) == (
        f"{file}:1:7: name: a name is lowercase letters, digits, '_' and '-', starting with"
        " a letter or digit, at most 64 characters (got 'monitor:shop.notes')"
    )


def test_the_bundled_flights_monitored(tmp_path: Path, flights_settings: Settings) -> None:
    data = flights_settings.model_dump(by_alias=True, exclude_none=True)
    data["sources"]["flights"]["monitor"] = {"tables": ["flights", "airlines"]}
    settings = Settings.model_validate(data)
    store = Store(f"sqlite:///{tmp_path}/lookout.db")
    reports = []
    with SourcePool(settings) as pool:
        made = make_monitors(settings, pool.get)
        assert [a.name for a in made.automations] == [
            "monitor:flights.flights",
            "monitor:flights.airlines",
        ]
        flights = made.automations[0]
        assert flights.checks[0].spec is not None
        assert flights.checks[0].spec.model_dump()["column"] == "time_hour"
        for day in range(2):
            slot = MONDAY + dt.timedelta(days=day)
            reports.append(run_and_store(flights, settings, pool, store, scheduled_for=slot))
    store.close()
    first, second = reports
    fresh, volume, schema = first.checks
    assert (fresh.outcome, fresh.metrics["latest"]) == ("failed", "2014-01-01T04:00:00+00:00")
    assert (volume.outcome, volume.value, volume.reason) == (
        "not_evaluated",
        336776,
        "0 of 7 points of history",
    )
    assert (schema.outcome, schema.reason) == ("not_evaluated", "first run: schema recorded")
    _, volume, schema = second.checks
    assert volume.reason == "1 of 7 points of history"
    assert (schema.outcome, schema.value, schema.metrics["columns"]) == ("passed", 0, 19)
