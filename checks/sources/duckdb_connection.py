"""A DuckDB query-time connection: read-only, its settings from the limits, then locked.

Every query process opens its file this way (``open_connection``): DuckDB's
``memory_limit``, ``threads`` and ``max_temp_directory_size`` come from the
limits (``QueryLimits``, plain values: a query process imports no pydantic),
external access and extension loading are off, the time zone is pinned to
UTC and the configuration is locked.
"""

from __future__ import annotations

import contextlib
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import duckdb

    from checks.settings.limits import Limits

QUERY_CONFIG: dict[str, str | bool | int | float | list[str]] = {
    "enable_external_access": False,
    "autoinstall_known_extensions": False,
    "autoload_known_extensions": False,
    "python_enable_replacements": False,
}
"""DuckDB settings of every query-time connection (DuckDB's configuration reference).

``lock_configuration`` is set right after connecting, once the time zone is
pinned to UTC (so results do not depend on the machine's zone)."""

_LOCKING = threading.Lock()  # serialises pin_and_lock between threads sharing an instance


@dataclass(frozen=True)
class QueryLimits:
    """What a query process applies, as plain values (``Limits`` is a pydantic model).

    Attributes:
        query_memory: bytes a query may add to its process.
        query_threads: DuckDB threads per query.
        query_temp_disk: bytes a query may spill to disk.
        fetch_cell_chars, max_cell_chars, max_result_chars, fingerprint_max_rows:
            as in ``Limits``.
        memory_text: ``query_memory`` as people read it (``1.0GiB``), for errors.

    """

    query_memory: int
    query_threads: int
    query_temp_disk: int
    fetch_cell_chars: int
    max_cell_chars: int
    max_result_chars: int
    fingerprint_max_rows: int
    memory_text: str

    @classmethod
    def of(cls, limits: Limits) -> QueryLimits:
        """The values of ``limits`` a query process needs."""
        return cls(
            query_memory=int(limits.query_memory),
            query_threads=limits.query_threads,
            query_temp_disk=int(limits.query_temp_disk),
            fetch_cell_chars=limits.fetch_cell_chars,
            max_cell_chars=limits.max_cell_chars,
            max_result_chars=limits.max_result_chars,
            fingerprint_max_rows=limits.fingerprint_max_rows,
            memory_text=limits.query_memory.human_readable(),
        )


def connection_config(limits: QueryLimits) -> dict[str, str | bool | int | float | list[str]]:
    """Return ``QUERY_CONFIG`` with the memory, thread and spill limits of ``limits``."""
    return {
        **QUERY_CONFIG,
        "memory_limit": f"{limits.query_memory}B",
        "threads": limits.query_threads,
        "max_temp_directory_size": f"{limits.query_temp_disk}B",
    }


def pin_and_lock(conn: duckdb.DuckDBPyConnection) -> None:
    """Set the time zone to UTC, then lock the configuration for the database instance.

    DuckDB shares one instance per file and config within a process, so a
    second source on the same file finds it already locked.
    """
    import duckdb

    with _LOCKING:
        locked = conn.execute("SELECT current_setting('lock_configuration')").fetchone()
        if locked and locked[0]:
            return
        with contextlib.suppress(duckdb.Error):  # without ICU, TIMESTAMPTZ uses the machine's zone
            conn.execute("SET GLOBAL TimeZone = 'UTC'")
        conn.execute("SET GLOBAL lock_configuration = true")


def memory_message(limits: QueryLimits) -> str:
    """The error of a query that needed more memory than ``limits.query_memory``."""
    return f"the query went over its memory limit of {limits.memory_text}"


def open_connection(path: str, limits: QueryLimits) -> duckdb.DuckDBPyConnection:
    """Open ``path`` read-only as every query process does: ``connection_config``, then locked.

    Raises:
        duckdb.Error: the file cannot be opened or configured.

    """
    import duckdb

    conn = duckdb.connect(path, read_only=True, config=connection_config(limits))
    try:
        pin_and_lock(conn)
    except duckdb.Error:
        conn.close()
        raise
    return conn
