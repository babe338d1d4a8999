"""The tables ``compare``'s tests reconcile, written on each engine of the suite.

``ledger`` and ``ledger_copy`` hold the same five ids but for three: id 5 is
in ``ledger`` only (extra), id 6 in ``ledger_copy`` only (missing), id 4's
amount is 7.25 against 7.26 (different). The other rows are equal once
normalised, though written differently: amounts at scale 2 against scale 4,
a timestamp at +02:00 against the same instant in UTC, ``'new  '`` against
``'new'``, and a row of NULLs on both sides. ``series`` and ``series_copy``
hold 20,000 rows each (ids 0 … 19,999), equal but for ids 7 and 15,000 (a
different amount) and id 19,999 (in ``series`` only).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb
import psycopg

LEDGER = """
CREATE TABLE ledger (id INTEGER, amount DECIMAL(10,2), status VARCHAR(20), paid_at {tz});
INSERT INTO ledger VALUES
  (1, 10.50, 'paid', {t1}), (2, 3.00, 'new  ', NULL), (3, NULL, NULL, NULL),
  (4, 7.25, 'lost', {t4}), (5, 1.00, 'x', NULL);
CREATE TABLE ledger_copy (id BIGINT, amount DECIMAL(12,4), status VARCHAR(20), paid_at {tz});
INSERT INTO ledger_copy VALUES
  (1, 10.5000, 'paid', {t1_utc}), (2, 3.0000, 'new', NULL), (3, NULL, NULL, NULL),
  (4, 7.2600, 'lost', {t4}), (6, 2.0, 'y', NULL);
CREATE TABLE empty_a (id INTEGER, amount DECIMAL(10,2));
CREATE TABLE empty_b (id INTEGER, amount DECIMAL(10,2));
"""

ZONED = {
    "tz": "TIMESTAMP WITH TIME ZONE",
    "t1": "TIMESTAMP WITH TIME ZONE '2024-01-01 10:00:00+02'",
    "t1_utc": "TIMESTAMP WITH TIME ZONE '2024-01-01 08:00:00+00'",
    "t4": "TIMESTAMP WITH TIME ZONE '2024-01-03 00:00:00+00'",
}
MARIADB = {  # TIMESTAMP is kept in UTC and read in the session's zone (Lookout's: UTC)
    "tz": "TIMESTAMP NULL",
    "t1": "'2024-01-01 08:00:00'",
    "t1_utc": "'2024-01-01 08:00:00'",
    "t4": "'2024-01-03 00:00:00'",
}
SQLITE = {  # text timestamps, one with its offset
    "tz": "TIMESTAMP",
    "t1": "'2024-01-01T10:00:00+02:00'",
    "t1_utc": "'2024-01-01 08:00:00'",
    "t4": "'2024-01-03 00:00:00'",
}

SERIES = {
    "duckdb": """
CREATE TABLE series AS SELECT range::INTEGER AS id, (range % 1000) / 100 :: DECIMAL(10,2) AS amount,
  'k' || (range % 7) AS code FROM range(20000);
CREATE TABLE series_copy AS SELECT * FROM series WHERE id <> 19999;
UPDATE series_copy SET amount = amount + 1 WHERE id IN (7, 15000);
""",
    "postgres": """
CREATE TABLE series AS SELECT g AS id, ((g % 1000) / 100.0)::DECIMAL(10,2) AS amount,
  'k' || (g % 7) AS code FROM generate_series(0, 19999) g;
CREATE TABLE series_copy AS SELECT * FROM series WHERE id <> 19999;
UPDATE series_copy SET amount = amount + 1 WHERE id IN (7, 15000);
""",
}


def ledger_sql(values: dict[str, str]) -> list[str]:
    """The ledger's statements with ``values`` put in."""
    return [s for s in LEDGER.format(**values).split(";") if s.strip()]


def build_duckdb(path: Path) -> Path:
    """The ledger and the series in a new DuckDB file."""
    with duckdb.connect(str(path)) as conn:
        for statement in ledger_sql(ZONED):
            conn.execute(statement)
        conn.execute(SERIES["duckdb"])
    return path


def build_postgres(url: str) -> None:
    """The ledger and the series in an empty PostgreSQL database."""
    with psycopg.connect(url.replace("+psycopg", ""), autocommit=True) as conn:
        for statement in ledger_sql(ZONED):
            conn.execute(statement)
        conn.execute(SERIES["postgres"])


def build_sqlite(path: Path) -> Path:
    """The ledger in a new SQLite file."""
    import sqlite3

    with sqlite3.connect(path) as conn:
        conn.executescript(";".join(ledger_sql(SQLITE)) + ";")
    conn.close()
    return path


def build_mariadb(root: Any, reader: str = "reader") -> None:
    """The ledger in a new database ``recon`` of a MariaDB server, readable by ``reader``."""
    with root.cursor() as cur:
        cur.execute("CREATE DATABASE recon")
        cur.execute("USE recon")
        cur.execute("SET time_zone = '+00:00'")
        for statement in ledger_sql(MARIADB):
            cur.execute(statement)
        cur.execute(f"GRANT SELECT ON recon.* TO '{reader}'@'127.0.0.1'")
    root.close()
