"""The ``limits:`` section: what bounds every query (docs/design.md, layer 3)."""

from __future__ import annotations

from pydantic import ByteSize, Field

from checks.settings.strict import Strict


class Limits(Strict):
    """Limits applied to every query (docs/design.md, Reading data safely, layer 3).

    Sizes accept units (``512MiB``, ``1GB``, a plain number of bytes; pydantic's
    ``ByteSize``). The defaults fit a worker with 2 cores and a few GiB of memory
    running a few queries at once.

    Attributes:
        query_timeout_s: wall time of one query, in seconds. DuckDB queries run
            in a child process that is killed at ``kill_after_s`` if DuckDB's own
            interrupt is not seen (it is checked only between vectors).
        query_memory: memory one DuckDB query may add to its process (DuckDB's
            ``memory_limit`` and the process's address-space limit); past it the
            query fails with "over its memory limit".
        query_threads: DuckDB threads per query (``threads``).
        query_processes: DuckDB queries one source runs at once, each in a
            process of its own; more wait for a free one. Together with
            ``query_memory`` it bounds what one source's queries can take.
        query_temp_disk: disk a DuckDB query may spill to
            (``max_temp_directory_size``).
        connect_timeout_s: seconds to connect to a database server; the same
            bounds a server that accepts the connection and never answers.
        fingerprint_max_rows: rows a result is read and hashed up to
            (``QueryResult.fingerprint``). A longer result stops there: its
            fingerprint covers those rows and its row count is a lower bound,
            marked (``row_count_exact`` False). It bounds the cost of a huge
            result: about 3 µs of CPU per row read and hashed.
        max_segments: segments a segmented check (``by:``) may have in its scope;
            past it the check is not evaluated and says so (never cut short).
        fetch_cell_chars: a cell larger than this (characters, about) never
            reaches Python whole: it arrives as an ``Oversized``, measured and
            cut in SQL (DuckDB and PostgreSQL; SQLite measures it in SQL too).

    """

    query_timeout_s: float = Field(default=30.0, gt=0)
    max_rows: int = Field(default=50, ge=1, le=10_000)
    max_cell_chars: int = Field(default=200, ge=10)
    max_result_chars: int = Field(default=20_000, ge=100)
    max_sql_chars: int = Field(default=20_000, ge=100)
    fingerprint_max_rows: int = Field(default=100_000, ge=1)
    query_memory: ByteSize = Field(default=ByteSize(1 << 30), ge=64 << 20)
    query_threads: int = Field(default=1, ge=1, le=64)
    query_processes: int = Field(default=2, ge=1, le=64)
    query_temp_disk: ByteSize = Field(default=ByteSize(1 << 30), ge=0)
    connect_timeout_s: float = Field(default=10.0, gt=0)
    fetch_cell_chars: int = Field(default=10_000, ge=100)
    max_segments: int = Field(default=100, ge=1, le=10_000)

    def kill_after_s(self, timeout_s: float) -> float:
        """Seconds after which a query's process is killed: ``timeout_s`` plus a grace.

        The grace (a quarter of the limit, at least 1 s, at most 30 s) lets the
        database's own interrupt answer first with its own error.
        """
        return timeout_s + min(30.0, max(1.0, timeout_s / 4))
