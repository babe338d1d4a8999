"""SQLite queries through ``sqlite3``: reads only, limited in time and in the size of a value."""

from __future__ import annotations

import sqlite3
import time
from typing import TYPE_CHECKING, Any

from checks.sources.cells import SQLITE_WEIGHT, CellFetch
from checks.sources.fingerprint import Finish
from checks.sources.result import QueryResult
from checks.sources.sqlite_functions import register

if TYPE_CHECKING:
    from checks.settings.limits import Limits

_SQLITE_ALLOWED = {
    sqlite3.SQLITE_SELECT,
    sqlite3.SQLITE_READ,
    sqlite3.SQLITE_FUNCTION,
    sqlite3.SQLITE_RECURSIVE,
}
_SQLITE_DENIED_FUNCTIONS = {"load_extension", "readfile", "writefile", "edit", "fts3_tokenizer"}


def run_sqlite(
    conn: Any, sql: str, timeout_s: float, finish: Finish, *, limits: Limits
) -> QueryResult:
    """Run checked ``sql`` on a ``sqlite3`` connection opened ``mode=ro``, within ``timeout_s``.

    While it runs an authorizer allows only reads, a progress handler ends it
    at ``timeout_s`` and no value may be longer than an eighth of
    ``limits.query_memory``; every cell is measured (SQLite types values, not
    columns); ``finish`` streams the rows. All of it is undone afterwards.

    Raises:
        sqlite3.Error: SQLite refused or failed the query, or it was interrupted.

    """
    deadline = time.monotonic() + timeout_s
    longest = conn.getlimit(sqlite3.SQLITE_LIMIT_LENGTH)
    conn.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, int(limits.query_memory) // 8)
    register(conn)  # regexp, stddev_samp, var_samp: SQLite has none of its own
    conn.set_authorizer(_sqlite_authorizer)
    conn.set_progress_handler(lambda: int(time.monotonic() > deadline), 1_000)
    try:
        cur = conn.cursor()
        cur.execute(f"SELECT * FROM (\n{sql}\n) LIMIT 0")
        columns = [d[0] for d in cur.description or []]
        cell_fetch = CellFetch(
            ["value"] * len(columns),
            [SQLITE_WEIGHT] * len(columns),
            fetch_chars=max(limits.fetch_cell_chars, limits.max_cell_chars),
            head_chars=limits.max_cell_chars,
            digest=None,
            cte=True,
        )
        cur.execute(cell_fetch.wrap(sql) if cell_fetch.needed else sql)
        fetch = cell_fetch.reader(cur.fetchmany) if cell_fetch.needed else cur.fetchmany
        return finish(fetch, columns)
    finally:
        conn.set_progress_handler(None, 0)
        conn.set_authorizer(None)
        conn.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, longest)
        conn.rollback()


def _sqlite_authorizer(
    action: int, arg1: str | None, arg2: str | None, db: str | None, trigger: str | None
) -> int:
    if action not in _SQLITE_ALLOWED:
        return sqlite3.SQLITE_DENY
    if action == sqlite3.SQLITE_FUNCTION and (arg2 or "").lower() in _SQLITE_DENIED_FUNCTIONS:
        return sqlite3.SQLITE_DENY
    return sqlite3.SQLITE_OK
