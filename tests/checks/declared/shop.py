"""The shop: the same small tables on every engine of the suite, and how tests run checks on them.

The data (``TABLES``) holds the traps typed checks exist for: a NULL in a
parent key, duplicates in groups of 2 and 3 with NULL keys, an accepted value
that is NULL, an empty table, timestamps with and without a zone.
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import duckdb
import psycopg
import pytest

from checks.automation.model import Automation
from checks.declared.check import run_checks
from checks.report import CheckResult, Evidence
from checks.settings.limits import Limits
from checks.settings.sources import SQLAlchemySource
from checks.sources import DuckDBQuerySource, Source, SQLQuerySource

TABLES = """
CREATE TABLE orders (
  order_id INTEGER NOT NULL,
  amount DECIMAL(10,2),
  status VARCHAR(20),
  customer_id INTEGER,
  name VARCHAR(20),
  created_at TIMESTAMP,
  price DOUBLE PRECISION
);
INSERT INTO orders VALUES
  (1, 10.50, 'paid',     1,    'Ann', TIMESTAMP '2024-01-01 10:00:00', 0.1),
  (2, -1.00, 'refunded', 2,    'Bob', TIMESTAMP '2024-01-02 10:00:00', 0.2),
  (3,  5.00, NULL,       9,    'Bob', NULL,                            0.1),
  (4,  7.25, 'lost',     NULL, 'Cy',  TIMESTAMP '2024-01-03 10:00:00', 0.2),
  (5, 99.99, 'paid',     3,    'Di',  TIMESTAMP '2024-01-04 10:00:00', 0.2);
CREATE TABLE customers (id INTEGER, email VARCHAR(50));
INSERT INTO customers VALUES (1, 'a@x.org'), (2, NULL), (3, 'c@x.org'), (NULL, 'd@x.org');
CREATE TABLE pairs (a INTEGER, b VARCHAR(5));
INSERT INTO pairs VALUES
  (1, 'x'), (1, 'x'),
  (2, 'y'), (2, 'y'), (2, 'y'),
  (3, 'z'),
  (NULL, 'n'), (NULL, 'n'),
  (4, NULL);
CREATE TABLE empty_t (id INTEGER);
CREATE TABLE loads (
  id INTEGER,
  loaded_at TIMESTAMP,
  loaded_tz TIMESTAMP WITH TIME ZONE,
  day DATE
);
INSERT INTO loads VALUES
  (1, TIMESTAMP '2024-01-09 19:00:00', TIMESTAMP WITH TIME ZONE '2024-01-09 21:00:00+00',
   DATE '2024-01-07'),
  (2, TIMESTAMP '2024-01-10 05:00:00', TIMESTAMP WITH TIME ZONE '2024-01-10 01:30:00+00',
   DATE '2024-01-08'),
  (3, NULL, NULL, NULL);
CREATE TABLE ledger (id INTEGER, amount DECIMAL(38,10));
INSERT INTO ledger VALUES
  (1, 12345678901234567890.1234567890),
  (2, 0.0000000001),
  (3, -12345678901234567890.1234567889);
CREATE TABLE "Refunds" (id INTEGER, "Amount" DECIMAL(10,2));
INSERT INTO "Refunds" VALUES (1, 2.50), (2, NULL);
CREATE TABLE contacts (
  id INTEGER,
  email VARCHAR(40),
  ref VARCHAR(40),
  site VARCHAR(40),
  ip VARCHAR(40),
  phone VARCHAR(20),
  day VARCHAR(30),
  country VARCHAR(5),
  currency VARCHAR(5)
);
INSERT INTO contacts VALUES
  (1, 'a@x.org', '123e4567-e89b-12d3-a456-426614174000', 'https://example.com/a?b=1',
   '192.168.0.1', '+14155550100', '2024-02-29', 'US', 'USD'),
  (2, 'no-at.org', '123e4567-e89b-12d3-a456-42661417400', 'ftp://example.com',
   '256.1.1.1', '4155550100', '2023-02-29', 'us', 'usd'),
  (3, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
  (4, 'B@X.ORG ', '123E4567-E89B-12D3-A456-426614174000', 'HTTP://localhost:8080',
   '::1', '+0123', '2024-04-31', 'XX', 'EUR'),
  (5, '', '', '', '', '', '', '', ''),
  (6, 'zoë@x.org', 'g23e4567-e89b-12d3-a456-426614174000', 'https://a b.com',
   '1.2.3.04', '+123456789012345', '2024-01-31T23:59:59Z', 'DE', 'XTS'),
  (7, 'c@x.org
', '123e4567e89b12d3a456426614174000', 'https://x.org:443/p#f',
   '2001:db8::ff00:42:8329', '+1234567890123456', '2024-01-31 10:00:00.5+05:30', 'GB',
   'EURO');
"""
"""Tables written once in SQL every engine reads the same way.

``ledger`` holds DECIMAL(38,10) values whose sum, 0.0000000002, no double can
compute; ``Refunds`` and its column ``Amount`` are named in capitals; ``contacts`` holds
texts of each ``validity`` format, valid and not (a trailing space, a final newline,
lower case, a leap day, non-ASCII, empty texts and NULLs).
"""

VIEWS = {
    "duckdb": """
CREATE VIEW tiny AS
  SELECT range AS id, CASE WHEN range < 3 THEN NULL ELSE 1 END AS v FROM range(1000000);
CREATE VIEW nearly_all AS
  SELECT range AS id, CASE WHEN range < 999999 THEN NULL ELSE 1 END AS v FROM range(1000000);
""",
    "postgres": """
CREATE VIEW tiny AS
  SELECT g AS id, CASE WHEN g < 3 THEN NULL ELSE 1 END AS v FROM generate_series(0, 999999) g;
CREATE VIEW nearly_all AS
  SELECT g AS id, CASE WHEN g < 999999 THEN NULL ELSE 1 END AS v
  FROM generate_series(0, 999999) g;
""",
    # MariaDB's sequence engine: seq_0_to_999999 is a table of 0 … 999999.
    "mariadb": """
CREATE VIEW tiny AS
  SELECT seq AS id, CASE WHEN seq < 3 THEN NULL ELSE 1 END AS v FROM seq_0_to_999999;
CREATE VIEW nearly_all AS
  SELECT seq AS id, CASE WHEN seq < 999999 THEN NULL ELSE 1 END AS v FROM seq_0_to_999999;
""",
}
"""A million rows each, computed when read: 3 NULLs in ``tiny``, 999,999 in ``nearly_all``."""

CLOCK = dt.datetime(2024, 1, 10, 3, 0, tzinfo=dt.UTC)
""""Now" for freshness: 2024-01-10 03:00 UTC."""


def build_duckdb(path: Path) -> Path:
    """Write the tables and views into a DuckDB file."""
    with duckdb.connect(str(path)) as conn:
        conn.execute(TABLES)
        conn.execute(VIEWS["duckdb"])
    return path


def build_postgres(url: str) -> None:
    """Write the tables and views into an empty PostgreSQL database."""
    with psycopg.connect(url.replace("+psycopg", ""), autocommit=True) as conn:
        conn.execute(TABLES)
        conn.execute(VIEWS["postgres"])


def build_mariadb(conn: Any) -> None:
    """Write the tables and views through a PyMySQL connection to an empty MariaDB database.

    ``TABLES`` is transpiled by sqlglot: MySQL has no ``TIMESTAMP WITH TIME ZONE``; its
    ``TIMESTAMP`` is stored in UTC and read in the session's zone, which Lookout pins to
    UTC, so ``loaded_tz`` holds the same instants (written here in a UTC session).
    """
    import sqlglot

    with conn.cursor() as cur:
        cur.execute("SET time_zone = '+00:00'")
        for statement in sqlglot.transpile(TABLES.replace("+00'", "'"), "postgres", "mysql"):
            cur.execute(statement)
        for statement in filter(str.strip, VIEWS["mariadb"].split(";")):
            cur.execute(statement)
    conn.close()


SHOP_ENGINES: list[Any] = [
    pytest.param("duckdb", id="duckdb"),
    pytest.param("postgres", id="postgres"),
    pytest.param("sqlite", id="sqlite"),
    pytest.param("clickhouse", id="clickhouse", marks=pytest.mark.slow),  # chdb starts in ~4 s
    pytest.param("snowflake", id="snowflake", marks=pytest.mark.slow),  # fakesnow's emulator
    pytest.param("mariadb", id="mariadb", marks=pytest.mark.mariadb),
    pytest.param("spark", id="spark", marks=pytest.mark.slow),
]
"""The engines the shared edge-case suite runs on: every test taking ``shop`` runs on each.

An engine is added with one entry here and one session fixture ``shop_<engine>`` (in
``tests/conftest.py`` or a plugin it loads) that builds the shop tables on it and returns a
``ShopOpener``; a slow engine's entry carries ``marks=pytest.mark.slow``.
"""

ShopOpener = Callable[[Limits], Source]
"""Opens a source over the shop tables, with the limits given."""


def open_shop(engine: str, request: pytest.FixtureRequest, limits: Limits | None = None) -> Source:
    """A source over the shop tables on ``engine`` (a name in ``SHOP_ENGINES``)."""
    opener: ShopOpener = request.getfixturevalue(f"shop_{engine}_opener")
    return opener(limits or Limits())


def duckdb_opener(path: Path) -> ShopOpener:
    """Opens the shop's DuckDB file."""
    return lambda limits: DuckDBQuerySource("shop", path, limits)


def sqlalchemy_opener(url: str) -> ShopOpener:
    """Opens the shop through SQLAlchemy at ``url``."""
    return lambda limits: SQLQuerySource(
        "shop", SQLAlchemySource(type="sqlalchemy", url=url), limits
    )


def automation(*checks: dict[str, Any], timezone: str = "UTC") -> Automation:
    """An automation over the ``shop`` source holding ``checks``."""
    return Automation.model_validate(
        {
            "name": "shop-checks",
            "source": "shop",
            "goal": "The shop's data holds.",
            "timezone": timezone,
            "checks": list(checks),
            "path": "inline.yaml",
            "line": 1,
        }
    )


Run = Callable[..., tuple[list[CheckResult], dict[str, Evidence]]]


def run(
    source: Source,
    *checks: dict[str, Any],
    timezone: str = "UTC",
    limits: Limits | None = None,
    clock: dt.datetime = CLOCK,
) -> tuple[list[CheckResult], dict[str, Evidence]]:
    """Run checks on a source; return the results and the evidence by id."""
    results, evidence = run_checks(
        automation(*checks, timezone=timezone),
        source,
        limits or source.limits,
        deadline=time.monotonic() + 120,
        clock=lambda: clock,
    )
    return results, {e.id: e for e in evidence}


def one(source: Source, check: dict[str, Any], **options: Any) -> CheckResult:
    """Run one check and return its result."""
    return run(source, {"name": "c", **check}, **options)[0][0]
