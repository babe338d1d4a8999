"""The floors under any tool on the 12 comparison checks: plain SQL, nothing else.

Usage: ``floor_sql.py duckdb FILE MODE`` or ``floor_sql.py postgres URL MODE``.
``per-check`` runs the 12 statements of ``../shared/peers/soda/baseline_sql.py`` one by one;
``per-table`` computes the same 12 values in one statement per table where a table's checks are
plain aggregates (flights' six counts and its average in one scan; weather's two in one), the
joins and the duplicate groups apart, as a hand-tuned tool could. Prints one value per line.
"""

from __future__ import annotations

import sys

JOINS = [
    "select count(*) from flights f where f.tailnum is not null"
    " and not exists (select 1 from planes p where p.tailnum = f.tailnum)",
    "select count(*) from flights f where not exists"
    " (select 1 from airlines a where a.carrier = f.carrier)",
    "select count(distinct dest) from flights f where not exists"
    " (select 1 from airports a where a.faa = f.dest)",
    "select count(*) from (select origin, year, month, day, hour from weather"
    " group by origin, year, month, day, hour having count(*) > 1) d",
]
PER_CHECK = [
    *JOINS,
    "select count(*) from flights where dep_time is null",
    "select count(*) from flights where dep_time is not null and arr_delay is null",
    "select count(*) from flights",
    "select count(*) from flights where tailnum is null",
    "select round(avg(arr_delay){cast}, 4) from flights",
    "select count(*) from weather where wind_speed > 150",
    "select count(*) from weather where temp is null",
    "select count(*) from planes where year is null",
]
PER_TABLE = [
    *JOINS,
    "select count(*) filter (where dep_time is null),"
    " count(*) filter (where dep_time is not null and arr_delay is null), count(*),"
    " count(*) filter (where tailnum is null), round(avg(arr_delay){cast}, 4) from flights",
    "select count(*) filter (where wind_speed > 150), count(*) filter (where temp is null)"
    " from weather",
    "select count(*) filter (where year is null) from planes",
]


def main(engine: str, where: str, mode: str) -> None:
    cast = "" if engine == "duckdb" else "::numeric"
    chosen = PER_CHECK if mode == "per-check" else PER_TABLE
    statements = [sql.replace("{cast}", cast) for sql in chosen]
    if engine == "duckdb":
        import duckdb

        con = duckdb.connect(where, read_only=True)
        for sql in statements:
            print(*con.execute(sql).fetchone())
    else:
        import psycopg

        with psycopg.connect(where) as con:
            for sql in statements:
                print(*con.execute(sql).fetchone())


if __name__ == "__main__":
    main(*sys.argv[1:4])
