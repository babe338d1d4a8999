"""chdb, the ClickHouse engine embedded, in a child process of its own per source.

chdb runs one engine per process, on one data folder for the process's whole life
("EmbeddedServer already initialized with path …"), and a data folder serves one
process at a time (ClickHouse locks it). So each chdb source holds a child process
(``main`` here) that opens its folder, or loads its ``tables:`` files into an in-memory
engine, and answers one query at a time through clickhouse-connect's chdb backend:
the very client code, settings and result parsing a server source uses
(``checks.sources.clickhouse_query``). Two chdb sources, or a chdb source beside
anything else, never share an engine, and the parent never imports chdb.

The time limit is ClickHouse's own ``max_execution_time``, checked while the query
runs; the parent waits for the answer until ``Limits.kill_after_s`` and then kills the
child (a query the engine does not interrupt), which is started again for the next
query. Requests and answers are pickles framed by their length over the child's stdin
and a copy of its stdout (the engine's own output goes to stderr), between processes
of the same program.
"""

from __future__ import annotations

import os
import pickle
import select
import struct
import subprocess
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import IO, Any

from checks.sources.clickhouse_query import (
    CLIENT_SETTINGS,
    TIMEOUT_CODE,
    error_code,
    error_message,
    quote_identifier,
    quote_string,
    read_rows,
)

START_TIMEOUT_S = 60.0
"""Seconds a child may take to start the engine and load the ``tables:`` files."""

_HEADER = struct.Struct("!Q")
_FORMATS = {".parquet": "Parquet", ".pq": "Parquet", ".csv": "CSVWithNames"}


@dataclass(frozen=True)
class TableLoad:
    """A file loaded into a chdb table: its name, path, ClickHouse format and NULL text."""

    name: str
    path: str
    format: str
    null_text: str = "\\N"


@dataclass(frozen=True)
class ChdbSpec:
    """What a child opens: a data folder (``path``), or files loaded into memory."""

    path: str | None
    tables: tuple[TableLoad, ...] = ()


def format_of(path: str) -> str | None:
    """The ClickHouse input format of a ``tables:`` file by its suffix, or None."""
    lower = path.lower()
    return next((f for suffix, f in _FORMATS.items() if lower.endswith(suffix)), None)


def _send(stream: IO[bytes], value: object) -> None:
    data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_HEADER.pack(len(data)) + data)
    stream.flush()


def _receive(stream: IO[bytes]) -> Any:
    header = stream.read(_HEADER.size)
    if len(header) < _HEADER.size:
        raise EOFError
    (size,) = _HEADER.unpack(header)
    data = stream.read(size)
    if len(data) < size:
        raise EOFError
    return pickle.loads(data)


def _open(spec: ChdbSpec) -> Any:
    import clickhouse_connect

    dsn = f"chdb://{spec.path}" if spec.path else "chdb://memory"
    client = clickhouse_connect.get_client(dsn=dsn, tz_mode="schema", settings=CLIENT_SETTINGS)
    for table in spec.tables:
        load = {"schema_inference_make_columns_nullable": 1, "session_timezone": "UTC"}
        if table.format.startswith("CSV"):
            load["format_csv_null_representation"] = table.null_text
        client.command(
            f"CREATE TABLE {quote_identifier(table.name)} ENGINE = MergeTree ORDER BY tuple()"
            " SETTINGS allow_nullable_key = 1"
            f" AS SELECT * FROM file({quote_string(table.path)}, {quote_string(table.format)})",
            settings=load,
        )
    return client


def main() -> None:
    """The child: open the spec read from stdin, then answer queries until stdin closes."""
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # whatever the engine prints never mixes with the answers
    requests = sys.stdin.buffer
    spec: ChdbSpec = _receive(requests)
    try:
        client = _open(spec)
    except Exception as error:
        _send(out, ("failed", error_message(error)))
        return
    _send(out, ("ready", None))
    while True:
        try:
            sql, settings, scan_rows = _receive(requests)
        except EOFError:
            return
        try:
            _send(out, ("ok", read_rows(client, sql, settings, scan_rows)))
        except Exception as error:
            kind = "timeout" if error_code(error) == TIMEOUT_CODE else "failed"
            if not _session_clean(client):
                kind = f"{kind}-spent"
            _send(out, (kind, error_message(error)))
            if kind.endswith("-spent"):
                return


def _session_clean(client: Any) -> bool:
    """Whether the session still has no setting of its own (no ``readonly`` left behind).

    clickhouse-connect's chdb backend sends an INSERT's settings with ``SET`` and sets them
    back after it; once ``readonly=1`` is set that way, nothing can be set back, and every
    later query's settings would be refused. Such a child ends and is started again.
    """
    try:
        return str(client.command("SELECT getSetting('readonly')")) == "0"
    except Exception:
        return False


class ChildFailed(Exception):
    """The child refused a query, could not start, or died; ``kind`` says which."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind  # "failed", "timeout", "start" or "died"


class ChdbProcess:
    """The child process of one chdb source: one query at a time, restarted when killed.

    Args:
        spec: what the child opens.
        kill_after_s: seconds past a query's time limit after which the child is killed
            (``Limits.kill_after_s``).

    The first child starts here, while the caller goes on. Safe to share between
    threads: queries wait for each other (the engine runs one per connection).
    """

    def __init__(self, spec: ChdbSpec, kill_after_s: Callable[[float], float]) -> None:
        self._spec = spec
        self._kill_after_s = kill_after_s
        self._lock = threading.Lock()
        self._ready = False
        self._child: subprocess.Popen[bytes] | None = self._start()

    def _start(self) -> subprocess.Popen[bytes]:
        child = subprocess.Popen(
            [sys.executable, "-c", "from checks.sources.chdb_process import main; main()"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        assert child.stdin is not None
        _send(child.stdin, self._spec)
        self._ready = False
        return child

    def run(
        self, sql: str, settings: dict[str, Any], scan_rows: int, timeout_s: float
    ) -> tuple[list[str], list[tuple[Any, ...]]]:
        """Run one query in the child; its column names and rows (up to ``scan_rows + 1``).

        Raises:
            ChildFailed: ``failed`` (the engine's message), ``timeout`` (the engine's
                limit, or killed past ``kill_after_s``), ``start`` or ``died``.

        """
        with self._lock:
            child = self._child if self._child and self._child.poll() is None else None
            if child is None:
                child = self._child = self._start()
            if not self._ready:
                self._answer(child, START_TIMEOUT_S, "start")
                self._ready = True
            assert child.stdin is not None
            try:
                _send(child.stdin, (sql, settings, scan_rows))
            except OSError:
                self._stop()
                raise ChildFailed("died", "the chdb process ended") from None
            value: tuple[list[str], list[tuple[Any, ...]]] = self._answer(
                child, self._kill_after_s(timeout_s), "timeout"
            )
            return value

    def _answer(self, child: subprocess.Popen[bytes], wait_s: float, late: str) -> Any:
        assert child.stdout is not None
        readable, _, _ = select.select([child.stdout], [], [], wait_s)
        if not readable:
            self._stop()
            if late == "timeout":
                raise ChildFailed("timeout", f"killed after {wait_s:g} s")
            raise ChildFailed("start", f"chdb did not start within {wait_s:g} s")
        try:
            kind, value = _receive(child.stdout)
        except EOFError:
            self._stop()
            raise ChildFailed("died", "the chdb process ended") from None
        if kind == "ready":
            return None
        if kind != "ok":
            if late == "start" or kind.endswith("-spent"):
                self._stop()  # it cannot serve another query
            raise ChildFailed(
                "start" if late == "start" else kind.removesuffix("-spent"), str(value)
            )
        return value

    def _stop(self) -> None:
        child, self._child = self._child, None
        if child is None:
            return
        child.kill()
        child.wait()
        for stream in (child.stdin, child.stdout):
            if stream is not None:
                stream.close()

    def close(self) -> None:
        """Stop the child (its engine and, for ``tables:``, its in-memory data)."""
        with self._lock:
            child, self._child = self._child, None
        if child is None:
            return
        if child.stdin is not None:
            child.stdin.close()  # the child returns at end of input
        try:
            child.wait(timeout=5)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()
        if child.stdout is not None:
            child.stdout.close()
