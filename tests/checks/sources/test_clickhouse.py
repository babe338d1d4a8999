"""ClickHouse sources: chdb (the real engine, in its child process) and the server's path.

A ClickHouse server cannot run here, so the server's path is tested with what it sends:
its ``get_client`` arguments, and a recording stand-in for the client that records each
query's settings and hands the query to a real clickhouse-connect client on chdb in this
process, so the same SQL and settings run on the real engine.
"""

from __future__ import annotations

import datetime as dt
import shutil
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb
import pytest
from clickhouse_connect.driver.models import SettingDef
from pydantic import ValidationError

from checks.errors import ConfigError, QueryFailed, QueryTimeout, SourceError
from checks.settings.config import load_settings
from checks.settings.limits import Limits
from checks.settings.sources import ClickHouseSource
from checks.sources import dialect_of
from checks.sources.chdb_process import ChdbProcess, ChdbSpec, ChildFailed
from checks.sources.clickhouse_query import Caps, query_settings
from checks.sources.clickhouse_source import ClickHouseQuerySource, server_client_args

SLOW = pytest.mark.slow  # each chdb engine starts in ~2-4 s (a source's, in its child)

RECIPE = {
    "readonly": 1,
    "max_execution_time": 30,
    "timeout_overflow_mode": "throw",
    "max_result_rows": 100_001,
    "result_overflow_mode": "break",
    "session_timezone": "UTC",
    "use_client_time_zone": 0,
    "join_use_nulls": 1,
}


def test_each_query_is_sent_with_the_read_only_recipe() -> None:
    assert query_settings(30, scan_rows=100_000, caps=Caps(), send_readonly=True) == RECIPE
    capped = query_settings(2.4, scan_rows=10, caps=Caps(1000, 1 << 20), send_readonly=False)
    assert capped == {
        "max_execution_time": 2,
        "timeout_overflow_mode": "throw",
        "max_result_rows": 11,
        "result_overflow_mode": "break",
        "session_timezone": "UTC",
        "use_client_time_zone": 0,
        "join_use_nulls": 1,
        "max_rows_to_read": 1000,
        "read_overflow_mode": "throw",
        "max_bytes_to_read": 1 << 20,
    }


def test_a_server_url_becomes_the_clients_arguments() -> None:
    args = server_client_args("clickhouse://reader:s%40cret@ch.example:8124/analytics", Limits())
    assert args == {
        "host": "ch.example",
        "port": 8124,
        "username": "reader",
        "password": "s@cret",
        "database": "analytics",
        "secure": False,
        "connect_timeout": 10.0,
        "send_receive_timeout": 37.5,  # the query limit and its grace: a silent server ends
        "query_limit": 0,
        "autogenerate_session_id": False,
        "tz_mode": "schema",
        "settings": {"session_timezone": "UTC"},
    }
    secure = server_client_args("clickhouses://ch.example", Limits())
    assert (secure["port"], secure["secure"], secure["username"], secure["database"]) == (
        8443,
        True,
        "default",
        None,
    )
    with pytest.raises(SourceError) as wrong:
        server_client_args("postgresql://ch.example/db", Limits())
    assert str(wrong.value) == (
        "the url is not a ClickHouse URL (clickhouse://user:password@host:8123/database)"
    )


class Recording:
    """A stand-in for the server's client: records what each query sends, runs it on chdb."""

    def __init__(self, client: Any, readonly: str) -> None:
        self.client = client
        self.sent: list[tuple[str, dict[str, Any]]] = []
        self.database = "default"
        self.server_settings = {"readonly": SettingDef("readonly", readonly, 0)}

    def query_row_block_stream(self, sql: str, settings: dict[str, Any]) -> Any:
        self.sent.append((sql, dict(settings)))
        return self.client.query_row_block_stream(sql, settings=settings)

    def close(self) -> None:
        self.sent.append(("closed", {}))


@pytest.fixture(scope="module")
def chdb_here() -> Iterator[Any]:
    """A real clickhouse-connect client on chdb in this process (in memory), with a table."""
    import clickhouse_connect

    client = clickhouse_connect.get_client(dsn="chdb://memory", tz_mode="schema")
    client.command(
        "CREATE TABLE orders (id Int32, status Nullable(String)) ENGINE = MergeTree ORDER BY id"
    )
    client.command("INSERT INTO orders VALUES (1, 'paid'), (2, NULL), (3, 'lost')")
    yield client
    client.close()


def server(chdb_here: Any, readonly: str, made: list[dict[str, Any]]) -> ClickHouseQuerySource:
    def factory(args: dict[str, Any]) -> Recording:
        made.append(args)
        return Recording(chdb_here, readonly)

    config = ClickHouseSource(
        type="clickhouse", url="clickhouse://reader:pw@ch.example/default", max_rows_to_read=500
    )
    return ClickHouseQuerySource("warehouse", config, Limits(), client_factory=factory)


@SLOW
def test_the_server_path_sends_the_recipe_and_the_sql_runs_on_chdb(chdb_here: Any) -> None:
    made: list[dict[str, Any]] = []
    source = server(chdb_here, "0", made)
    result = source.query("SELECT count(*), countIf(status IS NULL) FROM orders")
    assert result.rows == [(3, 1)]
    client = source._client
    assert made[0]["password"] == "pw" and made[0]["host"] == "ch.example"
    statements = [sql for sql, _ in client.sent]
    assert statements[0].startswith("SELECT name, total_rows, engine FROM system.tables")
    assert statements[-1] == "SELECT count(*), countIf(status IS NULL) FROM orders"
    # the catalog's statements: bounded in time, not by the cost cap; the query: both
    catalog = RECIPE | {"max_result_rows": 1_000_001}
    assert [settings for _, settings in client.sent[:-1]] == [catalog] * (len(client.sent) - 1)
    expected = RECIPE | {"max_rows_to_read": 500, "read_overflow_mode": "throw"}
    assert client.sent[-1][1] == expected
    assert source.write_warnings() == [
        "source warehouse: the ClickHouse user's profile has readonly=0: it can write wherever"
        " Lookout does not send readonly=1; give it a profile with readonly=2"
        " (docs/engines.md, ClickHouse)"
    ]
    source.close()
    assert client.sent[-1] == ("closed", {})


@SLOW
def test_a_profile_with_readonly_2_is_sent_the_limits_without_readonly(chdb_here: Any) -> None:
    source = server(chdb_here, "2", [])
    assert source.query("SELECT count(*) FROM orders").rows == [(3,)]
    sent = source._client.sent[-1][1]
    assert "readonly" not in sent and sent["max_execution_time"] == 30
    assert source.write_warnings() == []


@SLOW
def test_a_profile_with_readonly_1_is_refused_with_what_to_grant(chdb_here: Any) -> None:
    with pytest.raises(SourceError) as refused:
        server(chdb_here, "1", [])
    assert str(refused.value) == (
        "source warehouse: the ClickHouse user's profile has readonly=1, which forbids the"
        " settings every query is sent with (max_execution_time, …); give it readonly=2"
        " (docs/engines.md, ClickHouse)"
    )


def test_a_missing_driver_names_the_extra(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setitem(sys.modules, "clickhouse_connect", None)
    monkeypatch.setitem(sys.modules, "chdb", None)
    with pytest.raises(SourceError) as no_client:
        ClickHouseQuerySource(
            "ch", ClickHouseSource(type="clickhouse", url="clickhouse://h/db"), Limits()
        )
    assert str(no_client.value) == (
        "source ch: clickhouse-connect is not installed; pip install 'lookout[clickhouse]'"
    )
    with pytest.raises(SourceError) as no_chdb:
        ClickHouseQuerySource(
            "ch", ClickHouseSource(type="clickhouse", path=str(tmp_path)), Limits()
        )
    assert (
        str(no_chdb.value) == "source ch: chdb is not installed; pip install 'lookout[clickhouse]'"
    )


def test_a_misspelt_key_names_the_one_meant_and_a_password_is_a_secret(tmp_path: Path) -> None:
    config = tmp_path / "lookout.yaml"
    config.write_text("sources:\n  events:\n    type: clickhouse\n    folder: /data/chdb\n")
    with pytest.raises(ConfigError) as misspelt:
        load_settings(config, env={})
    assert str(misspelt.value) == (
        f"{config}:4:13: sources.events.folder: unknown field 'folder' (did you mean 'path'?)"
    )
    config.write_text(
        "sources:\n  events:\n    type: clickhouse\n"
        "    url: clickhouse://reader:${CH_PASSWORD}@ch.example:8123/analytics\n"
        "    max_bytes_to_read: 10GiB\n"
    )
    settings = load_settings(config, env={"CH_PASSWORD": "s3cret"})
    events = settings.sources["events"]
    assert isinstance(events, ClickHouseSource) and events.max_bytes_to_read == 10 << 30
    assert "s3cret" in settings.secrets() and dialect_of(events) == "clickhouse"


def test_bad_settings_say_what_and_where(tmp_path: Path) -> None:
    with pytest.raises(ValidationError) as both:
        ClickHouseSource(type="clickhouse", url="clickhouse://h/db", path="data")
    assert both.value.errors()[0]["msg"] == (
        "Value error, set one of url (a ClickHouse server), path (a chdb data folder) and"
        " tables (files loaded into chdb), not url and path"
    )
    with pytest.raises(SourceError) as missing:
        ClickHouseQuerySource(
            "ch", ClickHouseSource(type="clickhouse", path=str(tmp_path / "nope")), Limits()
        )
    assert str(missing.value) == f"source ch: path {tmp_path / 'nope'} does not exist"
    json_file = tmp_path / "events.json"
    json_file.write_text("{}")
    with pytest.raises(SourceError) as kind:
        ClickHouseQuerySource(
            "ch",
            ClickHouseSource(type="clickhouse", tables={"events": str(json_file)}),
            Limits(),
        )
    assert str(kind.value) == "table events: events.json is not a CSV or Parquet file"


@pytest.fixture(scope="module")
def chdb_shop(shop_chdb_path: Path) -> Iterator[ClickHouseQuerySource]:
    config = ClickHouseSource(type="clickhouse", path=str(shop_chdb_path))
    with ClickHouseQuerySource("shop", config, Limits()) as source:
        yield source


@SLOW
def test_the_chdb_session_refuses_writes_without_the_guard(
    chdb_shop: ClickHouseQuerySource,
) -> None:
    with pytest.raises(QueryFailed) as refused:
        chdb_shop._execute("INSERT INTO empty_t VALUES (1)", max_rows=1, timeout_s=5)
    assert str(refused.value) == "default: Cannot execute query in readonly mode"
    # the session the write left read-only for good is replaced: the next query runs
    assert chdb_shop.query("SELECT count(*) FROM empty_t").rows == [(0,)]


@SLOW
def test_the_engine_ends_a_query_at_its_time_limit(chdb_shop: ClickHouseQuerySource) -> None:
    assert chdb_shop.query("SELECT count(*) FROM pairs").rows == [(9,)]  # its child started
    started = time.monotonic()
    with pytest.raises(QueryTimeout) as late:
        chdb_shop._execute("SELECT count() FROM numbers(100000000000)", max_rows=1, timeout_s=1)
    assert str(late.value) == "the query ran past its time limit of 1 s"
    assert time.monotonic() - started < 3
    assert chdb_shop.query("SELECT count(*) FROM orders").rows == [(5,)]  # the same child


@SLOW
def test_catalog_counts_and_version(chdb_shop: ClickHouseQuerySource) -> None:
    counts = {d.name: d.row_count for d in chdb_shop.catalog()}
    assert counts == {
        "customers": 4,
        "empty_t": 0,
        "loads": 3,
        "nearly_all": 1_000_000,  # a view: counted; the tables: system.tables.total_rows
        "orders": 5,
        "pairs": 9,
        "tiny": 1_000_000,
        "Refunds": 2,
        "ledger": 3,
        "contacts": 7,
    }
    assert chdb_shop.engine_version().startswith("chdb (ClickHouse) 26.")


@SLOW
def test_a_cost_cap_fails_the_query_that_reads_too_much(
    shop_chdb_path: Path, tmp_path: Path
) -> None:
    copy = shutil.copytree(shop_chdb_path, tmp_path / "data", symlinks=True)  # one process a folder
    config = ClickHouseSource(type="clickhouse", path=str(copy), max_rows_to_read=1000)
    with ClickHouseQuerySource("capped", config, Limits()) as source:
        assert source.query("SELECT count(*) FROM orders").rows == [(5,)]
        with pytest.raises(QueryFailed) as capped:
            source.query("SELECT count(*) FROM tiny")
    assert str(capped.value) == (
        "Limit for rows (controlled by 'max_rows_to_read' setting) exceeded, max rows:"
        " 1.00 thousand, current rows: 1.00 million"
    )


@SLOW
def test_files_load_as_tables_with_their_nulls(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    parquet, csv = tmp_path / "events.parquet", tmp_path / "users.csv"
    with duckdb.connect() as conn:
        conn.execute(
            "COPY (SELECT * FROM (VALUES (1, TIMESTAMPTZ '2024-01-09 23:30:00+00', 'a'),"
            " (2, NULL, NULL)) t(id, seen, tag)) TO ? (FORMAT parquet)",
            [str(parquet)],
        )
    csv.write_text("id,email\n1,a@x.org\n2,NA\n3,c@x.org\n")
    monkeypatch.setenv("TZ", "Pacific/Kiritimati")  # the child's zone: results stay in UTC
    config = ClickHouseSource(
        type="clickhouse",
        tables={"events": str(parquet), "users": {"path": str(csv), "null_strings": ["NA"]}},
    )
    with ClickHouseQuerySource("lake", config, Limits()) as source:
        assert {d.name: d.row_count for d in source.catalog()} == {"events": 2, "users": 3}
        events = source.query("SELECT id, seen, tag FROM events ORDER BY id")
        assert events.rows == [
            (1, dt.datetime(2024, 1, 9, 23, 30, tzinfo=dt.UTC), "a"),
            (2, None, None),
        ]
        users = source.query("SELECT count(*), count(email) FROM users")
        assert users.rows == [(3, 2)]
        day = source.query("SELECT toDate(seen) FROM events WHERE id = 1")
        assert day.rows == [(dt.date(2024, 1, 9),)]  # 2024-01-10 13:30 in Kiritimati


@SLOW
def test_a_query_the_engine_does_not_end_is_killed_and_the_child_restarts() -> None:
    process = ChdbProcess(ChdbSpec(None), lambda timeout_s: timeout_s + 1)
    try:
        assert process.run("SELECT 1 AS one", {}, 10, 30) == (["one"], [(1,)])  # started
        started = time.monotonic()
        with pytest.raises(ChildFailed) as killed:  # no max_execution_time sent: only the kill
            process.run("SELECT count() FROM numbers(100000000000)", {}, 10, 0.5)
        assert (killed.value.kind, str(killed.value)) == ("timeout", "killed after 1.5 s")
        assert 1.5 <= time.monotonic() - started < 3
        assert process.run("SELECT 1 AS one", {}, 10, 30) == (["one"], [(1,)])
    finally:
        process.close()
