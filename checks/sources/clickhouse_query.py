"""ClickHouse's read-only recipe: the settings sent with every query, and one query run.

The same code runs a query on a ClickHouse server (clickhouse-connect over HTTP, in
this process) and on chdb (clickhouse-connect's chdb backend, in a child process:
``checks.sources.chdb_process``): each query carries its own settings
(``query_settings``), which clickhouse-connect sends as URL parameters to a server and
as a ``SETTINGS`` clause to chdb. Sources: ClickHouse's documentation, "Settings:
Permissions for queries" (``readonly``), "Restrictions on query complexity"
(``max_execution_time``, ``max_rows_to_read``, ``max_bytes_to_read``,
``max_result_rows``, ``result_overflow_mode``), "Session settings"
(``session_timezone``, ``use_client_time_zone``, ``join_use_nulls``).

This module is imported by the chdb child process: it needs clickhouse-connect only,
never sqlglot or pydantic.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

TIMEOUT_CODE = 159
"""ClickHouse's ``TIMEOUT_EXCEEDED``: the query ran past ``max_execution_time``."""

_CODE = re.compile(r"Code: (\d+)\. DB::Exception: ")
_TAIL = re.compile(r"\s*\((?:version [^)]*|[A-Z_]+)\)\.?\s*$")


@dataclass(frozen=True)
class Caps:
    """What one query may read, ClickHouse's cost cap (None: no cap).

    Attributes:
        max_rows_to_read: rows read from tables (``max_rows_to_read``).
        max_bytes_to_read: uncompressed bytes read from tables (``max_bytes_to_read``).

    """

    max_rows_to_read: int | None = None
    max_bytes_to_read: int | None = None


def query_settings(
    timeout_s: float, *, scan_rows: int, caps: Caps, send_readonly: bool
) -> dict[str, Any]:
    """The settings one query runs with, in the order they are sent.

    Args:
        timeout_s: its time limit in seconds (``max_execution_time``; ClickHouse checks
            it while the query runs and ends it with code 159).
        scan_rows: rows the result is read up to (``Limits.fingerprint_max_rows``):
            ``max_result_rows`` is one more, with ``result_overflow_mode='break'``, so a
            longer result stops there (in whole blocks) instead of streaming on.
        caps: the source's cost cap; an exceeded one fails the query (``TOO_MANY_ROWS``,
            ``TOO_MANY_BYTES``).
        send_readonly: send ``readonly=1`` (no writes, no DDL, no setting changed by the
            query). False when the user's profile already has ``readonly=2``, which
            cannot be changed and still lets these settings be sent.

    Returns:
        Setting name -> value.

    """
    settings: dict[str, Any] = {
        "max_execution_time": max(1, round(timeout_s)),
        "timeout_overflow_mode": "throw",
        "max_result_rows": scan_rows + 1,
        "result_overflow_mode": "break",
        "session_timezone": "UTC",
        "use_client_time_zone": 0,
        # SQL's outer joins: the missing side is NULL, not the type's default (0, '').
        "join_use_nulls": 1,
    }
    if caps.max_rows_to_read is not None:
        settings["max_rows_to_read"] = caps.max_rows_to_read
        settings["read_overflow_mode"] = "throw"
    if caps.max_bytes_to_read is not None:
        settings["max_bytes_to_read"] = caps.max_bytes_to_read
        settings["read_overflow_mode"] = "throw"
    if send_readonly:  # last: where settings are applied one by one, the others go first
        settings["readonly"] = 1
    return settings


CLIENT_SETTINGS: dict[str, Any] = {"session_timezone": "UTC"}
"""Sent with the client's own first statements too, so it reads the server's zone as UTC."""


def read_rows(
    client: Any, sql: str, settings: dict[str, Any], scan_rows: int
) -> tuple[list[str], list[tuple[Any, ...]]]:
    """Run ``sql`` on a clickhouse-connect ``client``; its columns and up to ``scan_rows + 1`` rows.

    The result streams in blocks (``query_row_block_stream``) and stops being read
    once ``scan_rows + 1`` rows arrived; a timestamp with a zone arrives zone-aware, one
    without naive (the client's ``tz_mode='schema'``).

    Raises:
        clickhouse_connect.driver.exceptions.ClickHouseError: the engine refused it.

    """
    rows: list[tuple[Any, ...]] = []
    with client.query_row_block_stream(sql, settings=settings) as stream:
        columns = list(stream.source.column_names)
        names = [_bare(kind.name) for kind in stream.source.column_types]
        spans = [(i, _INTERVALS[name]) for i, name in enumerate(names) if name in _INTERVALS]
        for block in stream:
            rows.extend(_with_spans(tuple(row), spans) if spans else tuple(row) for row in block)
            if len(rows) > scan_rows:
                break
    return columns, rows[: scan_rows + 1]


_INTERVALS: dict[str, Callable[[int], dt.timedelta]] = {
    "IntervalMicrosecond": lambda n: dt.timedelta(microseconds=n),
    "IntervalMillisecond": lambda n: dt.timedelta(milliseconds=n),
    "IntervalSecond": lambda n: dt.timedelta(seconds=n),
    "IntervalMinute": lambda n: dt.timedelta(minutes=n),
    "IntervalHour": lambda n: dt.timedelta(hours=n),
    "IntervalDay": lambda n: dt.timedelta(days=n),
    "IntervalWeek": lambda n: dt.timedelta(weeks=n),
}
"""ClickHouse's fixed-length interval types, which the driver reads as a count, as durations."""


def _bare(type_name: str) -> str:
    """``Nullable(T)`` -> ``T``."""
    if type_name.startswith("Nullable(") and type_name.endswith(")"):
        return type_name[len("Nullable(") : -1]
    return type_name


def _with_spans(
    row: tuple[Any, ...], spans: list[tuple[int, Callable[[int], dt.timedelta]]]
) -> tuple[Any, ...]:
    values = list(row)
    for i, span in spans:
        if values[i] is not None:
            values[i] = span(values[i])
    return tuple(values)


def error_code(error: BaseException) -> int | None:
    """The ClickHouse error code in a driver error's text (``Code: 159. …``), or None."""
    found = _CODE.search(str(error))
    return int(found.group(1)) if found else None


def error_message(error: BaseException) -> str:
    """A ClickHouse error in one line, without the driver's wrapping and the server version.

    ``Code: 60. DB::Exception: Unknown table expression identifier 'x' … (UNKNOWN_TABLE)
    (version 26.9.2.1)`` becomes ``Unknown table expression identifier 'x' …``.
    """
    text = str(error)
    found = list(_CODE.finditer(text))
    if found:
        text = text[found[-1].end() :]
    text = text.strip().splitlines()[0] if text.strip() else type(error).__name__
    text = text.split(" In query ", 1)[0].split(": While executing", 1)[0]
    while True:
        cut = _TAIL.sub("", text)
        if cut == text:
            return text.rstrip(". ")
        text = cut


def catalog_statements(database: str) -> tuple[str, str]:
    """The catalog's two statements: tables with their row counts, and columns.

    Row counts come from ``system.tables.total_rows`` (kept by MergeTree and the other
    engines that know it), never a ``count()`` of every table; a view has none there.
    ``database`` is inlined as a quoted literal.
    """
    db = quote_string(database)
    tables = (
        "SELECT name, total_rows, engine FROM system.tables"
        f" WHERE database = {db} AND NOT is_temporary ORDER BY name"
    )
    columns = (
        "SELECT table, name, type FROM system.columns"
        f" WHERE database = {db} ORDER BY table, position"
    )
    return tables, columns


def views_statement(database: str) -> str:
    """The views of ``database`` and the SQL they run (``system.tables.as_select``)."""
    return (
        "SELECT name, as_select FROM system.tables"
        f" WHERE database = {quote_string(database)} AND engine = 'View'"
    )


def count_statement(tables: Sequence[str]) -> str:
    """One statement counting the rows of ``tables`` (views: they keep no count)."""
    return " UNION ALL ".join(
        f"SELECT {quote_string(t)}, count() FROM {quote_identifier(t)}" for t in tables
    )


def quote_string(text: str) -> str:
    """A ClickHouse string literal (backslash and quote escaped)."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def quote_identifier(name: str) -> str:
    """A ClickHouse identifier in backquotes (backslash and backquote escaped)."""
    return "`" + name.replace("\\", "\\\\").replace("`", "\\`") + "`"
