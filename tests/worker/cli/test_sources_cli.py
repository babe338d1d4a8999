"""``lookout sources check``: on the flights DuckDB, a SQLite file, and PostgreSQL as a reader and
as a writer, with the exact lines it prints and its exit status."""

from __future__ import annotations

import json
import re
import sqlite3
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from checks.settings.config import Settings
from checks.sources import Source
from checks.sources.recipes import supported
from tests.cli_support import run_cli
from tests.conftest import PG_ADMIN_URL, scratch_pg_database

FIRST_QUERY = re.compile(r"  first query: SELECT 1 through the guard in (< 1 ms|\d+ ms|\d+\.\d s)")
PG_READ_ONLY = (
    "  read-only: sessions are read-only (default_transaction_read_only, READ ONLY transactions)"
)


def lines_of(out: str) -> list[str]:
    """The output's lines, each ``first query`` line checked against its form and made one."""
    found = []
    for line in out.splitlines():
        if line.startswith("  first query:"):
            assert FIRST_QUERY.fullmatch(line), line
            line = "  first query: …"
        found.append(line)
    return found


def write_config(folder: Path, sources: str) -> Path:
    """A config file holding ``sources:`` (YAML text, indented under it)."""
    path = folder / "lookout.yaml"
    path.write_text(f"cache_dir: {folder / 'cache'}\nsources:\n{sources}")
    return path


def test_the_flights_source(
    flights_source: Source,
    flights_settings: Settings,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    env = {"LOOKOUT_CACHE_DIR": flights_settings.cache_dir}
    code, out, err = run_cli(monkeypatch, capsys, ["sources", "check", "flights"], env)
    version = flights_source.engine_version()
    assert re.fullmatch(r"DuckDB \d+\.\d+\.\d+", version)
    assert (code, err) == (0, "")
    assert lines_of(out) == [
        f"flights: {version}",
        "  5 tables: airlines, airports, flights, planes, weather",
        "  read-only: the file is opened read-only, external access off",
        "  first query: …",
        "1 source checked: 1 read-only, 0 with write grants, 0 unreachable, 0 misconfigured",
    ]
    code, out, _ = run_cli(monkeypatch, capsys, ["sources", "check", "--json"], env)
    (found,) = json.loads(out)
    assert code == 0 and isinstance(found.pop("first_query_ms"), float)
    assert found == {
        "name": "flights",
        "status": "ok",
        "engine": version,
        "tables": ["airlines", "airports", "flights", "planes", "weather"],
        "read_only": "the file is opened read-only, external access off",
        "grants_read": False,
        "write_warnings": [],
        "error": None,
    }


def test_a_sqlite_file_and_the_table_cap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with sqlite3.connect(tmp_path / "app.db") as conn:
        for n in range(12):
            conn.execute(f"CREATE TABLE t{n:02d} (id INTEGER)")
    conn.close()
    config = write_config(
        tmp_path, f"  app:\n    type: sqlalchemy\n    url: sqlite:///{tmp_path}/app.db\n"
    )
    args = ["--config", str(config), "sources", "check"]
    code, out, _ = run_cli(monkeypatch, capsys, args, {})
    version = f"SQLite {sqlite3.sqlite_version}"
    assert code == 0
    assert lines_of(out) == [
        f"app: {version}",
        "  12 tables: t00, t01, t02, t03, t04, t05, t06, t07, t08, t09 and 2 more"
        " (--all lists them)",
        "  read-only: the file is opened read-only (mode=ro), an authorizer allows only reads",
        "  first query: …",
        "1 source checked: 1 read-only, 0 with write grants, 0 unreachable, 0 misconfigured",
    ]
    code, out, _ = run_cli(monkeypatch, capsys, [*args, "app", "--all"], {})
    assert lines_of(out)[1] == "  12 tables: " + ", ".join(f"t{n:02d}" for n in range(12))


@pytest.fixture(scope="module")
def pg_roles() -> Iterator[tuple[str, str, str]]:
    """A database with two tables, a role holding only SELECT and one holding INSERT too.

    Yields (database URL base without a user, the reader's name, the writer's name).
    """
    tag = uuid.uuid4().hex[:8]
    reader, writer = f"lookout_reader_{tag}", f"lookout_writer_{tag}"
    with scratch_pg_database() as url:
        name = url.rsplit("/", 1)[1]
        with psycopg.connect(url.replace("+psycopg", ""), autocommit=True) as conn:
            conn.execute("CREATE TABLE orders (id integer); CREATE TABLE customers (id integer)")
            for role in (reader, writer):
                conn.execute(f'CREATE ROLE "{role}" LOGIN')
                conn.execute(f'GRANT SELECT ON ALL TABLES IN SCHEMA public TO "{role}"')
            conn.execute(f'GRANT INSERT ON orders TO "{writer}"')
        host = PG_ADMIN_URL.split("@", 1)[1].rsplit("/", 1)[0]
        try:
            yield f"postgresql+psycopg://{{role}}@{host}/{name}", reader, writer
        finally:
            with psycopg.connect(url.replace("+psycopg", ""), autocommit=True) as conn:
                conn.execute("DROP TABLE orders, customers")
            with psycopg.connect(PG_ADMIN_URL, autocommit=True) as admin:
                admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
                for role in (reader, writer):
                    admin.execute(f'DROP ROLE IF EXISTS "{role}"')


def pg_version() -> str:
    with psycopg.connect(PG_ADMIN_URL) as conn:
        major, minor = divmod(conn.info.server_version, 10000)
    return f"PostgreSQL {major}.{minor}"


@pytest.mark.postgres
def test_postgres_as_a_read_only_role_and_as_one_that_may_insert(
    pg_roles: tuple[str, str, str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    url, reader, writer = pg_roles
    config = write_config(
        tmp_path,
        f"  reader:\n    type: sqlalchemy\n    url: {url.format(role=reader)}\n"
        f"  writer:\n    type: sqlalchemy\n    url: {url.format(role=writer)}\n",
    )
    base = ["--config", str(config), "sources", "check"]
    code, out, _ = run_cli(monkeypatch, capsys, [*base, "reader"], {})
    assert code == 0
    assert lines_of(out) == [
        f"reader: {pg_version()}",
        "  2 tables: customers, orders",
        PG_READ_ONLY,
        "  grants: none that write",
        "  first query: …",
        "1 source checked: 1 read-only, 0 with write grants, 0 unreachable, 0 misconfigured",
    ]
    code, out, _ = run_cli(monkeypatch, capsys, base, {})
    assert code == 1  # a write grant: exit 1, whatever the other source says
    assert lines_of(out)[5:] == [
        f"writer: {pg_version()}",
        "  2 tables: customers, orders",
        PG_READ_ONLY,
        f"  warning: role {writer} holds INSERT on 1 table: public.orders",
        "  first query: …",
        "2 sources checked: 1 read-only, 1 with write grants, 0 unreachable, 0 misconfigured",
    ]


@pytest.mark.postgres
def test_a_superuser_is_one_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with scratch_pg_database() as url:
        config = write_config(tmp_path, f"  admin:\n    type: sqlalchemy\n    url: {url}\n")
        code, out, _ = run_cli(
            monkeypatch, capsys, ["--config", str(config), "sources", "check"], {}
        )
    assert code == 1
    assert lines_of(out)[3] == (
        "  warning: role postgres is a superuser: it may write anything (connect as a role"
        " holding only SELECT)"
    )


def test_an_unreachable_source_exits_3_and_a_bad_one_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    config = write_config(
        tmp_path,
        "  gone:\n    type: sqlalchemy\n    url: postgresql://nobody@127.0.0.1:1/db\n"
        "  odd:\n    type: sqlalchemy\n    url: oracle://scott@db/orcl\n",
    )
    base = ["--config", str(config), "sources", "check"]
    code, out, _ = run_cli(monkeypatch, capsys, [*base, "odd"], {})
    assert code == 2
    assert out.splitlines() == [
        "odd: configuration error",
        f"  error: {config}:8:10: sources.odd.url: unsupported database 'oracle': Lookout reads"
        f" {supported()} through a URL (docs/engines.md)",
        "1 source checked: 0 read-only, 0 with write grants, 0 unreachable, 1 misconfigured",
    ]
    code, out, _ = run_cli(monkeypatch, capsys, base, {})
    assert code == 3
    lines = out.splitlines()
    assert lines[0] == "gone: cannot be reached"
    assert lines[1].startswith(
        "  error: source gone: cannot connect to postgresql://nobody@127.0.0.1:1/db: "
    )
    assert lines[-1] == (
        "2 sources checked: 0 read-only, 0 with write grants, 1 unreachable, 1 misconfigured"
    )
    code, _, err = run_cli(monkeypatch, capsys, [*base, "gon"], {})
    assert code == 2
    assert err == "error: no source 'gon' (did you mean 'gone'?); configured: gone, odd\n"
