"""DuckDB queries in child processes: a memory cap the process enforces, a deadline that kills.

DuckDB checks ``interrupt()`` only between vectors, and values built inside one
vector (``repeat('x', 100000000)`` over 40 rows) are allocated outside its
buffer manager, so neither its ``memory_limit`` nor the watchdog bounds them.
Each query therefore runs in a child process (``main`` here) that holds its
own read-only connection:

- its address space is capped (``RLIMIT_AS``) at what it used once connected
  plus ``Limits.query_memory``, so an allocation past it fails at once and the
  query ends with "over its memory limit";
- DuckDB's ``memory_limit``, ``threads`` and ``max_temp_directory_size`` are set
  from the limits too, so buffer-managed work (sorts, joins, aggregates) fails
  or spills within them first;
- the parent waits for the answer until ``Limits.kill_after_s``, then kills the
  child: the time limit holds within a small factor whatever the query does.

A child serves one query at a time and is reused; a child that was killed, ran
out of memory or died is replaced. Requests and answers are pickles framed by
their length over the child's stdin and stdout, between processes of the same
program. A child imports DuckDB and this module's few dependencies, never
sqlglot or pydantic: its limits arrive as a plain ``QueryLimits``, and the
parent imports DuckDB only when it runs something itself.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import resource
import select
import struct
import subprocess
import sys
import threading
import time
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from checks.errors import QueryFailed, QueryTimeout, SourceError, first_line
from checks.sources.duckdb_connection import QueryLimits, memory_message, open_connection
from checks.sources.duckdb_query import Prepared, run_query
from checks.sources.result import QueryResult

if TYPE_CHECKING:
    import duckdb

    from checks.settings.limits import Limits

START_TIMEOUT_S = 60.0
"""Seconds a new child may take to import and connect before the query fails."""

_HEADER = struct.Struct("!Q")


@dataclass(frozen=True)
class _Request:
    sql: str
    max_rows: int
    timeout_s: float
    measure_cells: bool = True


Ahead = tuple[str, int, float, bool]
"""A query run ahead (``QueryProcesses``): sql, max_rows, timeout_s, measure_cells."""


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


class _Child:
    """One child process serving queries on one DuckDB file."""

    def __init__(self, path: Path, limits: QueryLimits, ahead: Sequence[_Request] = ()) -> None:
        env = {**os.environ, "MALLOC_ARENA_MAX": "2"}  # fewer reserved arenas: a tighter cap
        self.process = subprocess.Popen(
            [sys.executable, "-c", "from checks.sources.query_process import main; main()"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
        )
        assert self.process.stdin is not None and self.process.stdout is not None
        self.stdin, self.stdout = self.process.stdin, self.process.stdout
        self.ready = False
        # the child runs these before it reads the first request, which waits for them
        self.ahead_s = sum(request.timeout_s for request in ahead)
        _send(self.stdin, (str(path), limits, tuple(ahead)))

    def wait_readable(self, deadline: float) -> bool:
        """Wait until the child has written something or ended; False at ``deadline``."""
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            readable, _, _ = select.select([self.stdout], [], [], left)
            if readable:
                return True

    def answer(self, deadline: float) -> tuple[str, Any]:
        """Read the child's next answer; ``("timeout", None)`` at ``deadline``, ``("died", …)``."""
        if not self.wait_readable(deadline):
            return "timeout", None
        try:
            kind, value = _receive(self.stdout)
        except (EOFError, OSError, pickle.UnpicklingError):
            self.process.wait()
            return "died", self.process.returncode
        return str(kind), value

    def kill(self) -> None:
        """Kill the child and reap it."""
        with contextlib.suppress(OSError):
            self.process.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=10)
        for stream in (self.stdin, self.stdout):
            with contextlib.suppress(OSError):
                stream.close()


class QueryProcesses:
    """The child processes that run one DuckDB source's queries; safe to share between threads.

    Args:
        name: the source's name, for errors.
        path: the DuckDB file each child opens read-only.
        limits: memory, threads, spill and time limits of every query.
        ahead: queries the first child runs as soon as it is connected, before
            anything is asked (the catalog's own), each as ``run`` would run it;
            asked later with the same arguments, that child answers from what
            it found then. A request waits for the queries ahead of it.

    """

    def __init__(self, name: str, path: Path, limits: Limits, ahead: Sequence[Ahead] = ()) -> None:
        self.name, self.path, self.limits = name, path, limits
        self.query_limits = QueryLimits.of(limits)
        self._idle: list[_Child] = []
        self._all: set[_Child] = set()
        self._lock = threading.Lock()
        self._slots = threading.BoundedSemaphore(limits.query_processes)
        self._closed = False
        # starts importing now, and reads the catalog while this process imports the rest
        self._idle.append(self._start([_Request(*query) for query in ahead]))
        weakref.finalize(self, _kill_all, self._all)

    def _start(self, ahead: Sequence[_Request] = ()) -> _Child:
        child = _Child(self.path, self.query_limits, ahead)
        with self._lock:
            self._all.add(child)
        return child

    def _drop(self, child: _Child) -> None:
        child.kill()
        with self._lock:
            self._all.discard(child)

    def run(
        self, sql: str, *, max_rows: int, timeout_s: float, measure_cells: bool = True
    ) -> QueryResult:
        """Run checked ``sql`` in a child; kill it at ``limits.kill_after_s(timeout_s)``.

        ``measure_cells`` as in ``run_query`` (False: the catalog's own queries).

        At most ``limits.query_processes`` queries run at once; another waits
        for a free process (each running one ends within its own kill time).

        Raises:
            QueryFailed: DuckDB failed the query, it went over its memory limit,
                or its process died.
            QueryTimeout: the query ran past its time limit (interrupted or killed).
            SourceError: a new child could not start or open the file.

        """
        with self._slots:
            return self._run(_Request(sql, max_rows, timeout_s, measure_cells))

    def _run(self, request: _Request) -> QueryResult:
        timeout_s = request.timeout_s
        with self._lock:
            if self._closed:
                raise SourceError(f"source {self.name} is closed")
            child = self._idle.pop() if self._idle else None
        child = child or self._start()
        if not child.ready:
            kind, value = child.answer(time.monotonic() + START_TIMEOUT_S)
            if kind != "ready":
                self._drop(child)
                reason = value if kind == "error" else f"its process {kind}"
                raise SourceError(f"source {self.name}: cannot open {self.path}: {reason}")
            child.ready = True
        started = time.monotonic()
        try:
            _send(child.stdin, request)
        except OSError:
            self._drop(child)
            raise QueryFailed("the query's process ended before it could run the query") from None
        waits_s, child.ahead_s = timeout_s + child.ahead_s, 0.0
        kind, value = child.answer(started + self.limits.kill_after_s(waits_s))
        if kind == "ok":
            self._release(child)
            return value  # type: ignore[no-any-return]
        if kind == "failed":
            self._release(child)
            raise QueryFailed(value)
        if kind == "timeout" and value is not None:
            self._release(child)
            raise QueryTimeout(value)
        self._drop(child)
        if kind == "oom":
            raise QueryFailed(memory_message(self.query_limits))
        if kind == "timeout":
            raise QueryTimeout(
                f"the query ran past its time limit of {timeout_s:g} s and was stopped"
            )
        # Killed from outside (the kernel's OOM killer, a signal) or crashed.
        raise QueryFailed(
            f"the query's process ended ({_ended(value)}); it may have gone over its memory"
            f" limit of {self.limits.query_memory.human_readable()}"
        )

    def _release(self, child: _Child) -> None:
        with self._lock:
            if self._closed:
                child.kill()
                self._all.discard(child)
            else:
                self._idle.append(child)

    def close(self) -> None:
        """Stop every child (a query still running in one is killed)."""
        with self._lock:
            self._closed = True
            children = list(self._all)
            self._idle.clear()
        _kill_all(set(children))
        with self._lock:
            self._all.clear()


def _ended(returncode: Any) -> str:
    if isinstance(returncode, int) and returncode < 0:
        return f"signal {-returncode}"
    return f"exit status {returncode}"


def _kill_all(children: set[_Child]) -> None:
    for child in list(children):
        child.kill()


def _cap_memory(limits: QueryLimits) -> None:
    """Cap this process's address space at what it maps now plus ``limits.query_memory``."""
    with open("/proc/self/statm") as statm:
        mapped = int(statm.read().split()[0]) * resource.getpagesize()
    cap = mapped + limits.query_memory
    with contextlib.suppress(ValueError, OSError):  # a lower hard limit set from outside wins
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))


def _serve(stdin: IO[bytes], stdout: IO[bytes]) -> None:
    import duckdb

    path, limits, ahead = _receive(stdin)
    try:
        conn = open_connection(path, limits)
    except duckdb.Error as error:
        _send(stdout, ("error", first_line(error)))
        return
    # One warm-up query maps DuckDB's own structures before the cap is taken.
    conn.execute("SELECT 1").fetchall()
    _cap_memory(limits)
    _send(stdout, ("ready", None))
    prepared = Prepared()  # this connection's queries, parsed and bound once
    found: dict[_Request, tuple[str, Any]] = {}
    for request in ahead:  # while the parent is still busy: its first questions, answered
        found[request] = _answer(conn, request, limits, prepared)
        if found[request][0] == "oom":
            break  # the rest run when asked, after this answer ends the process
    while True:
        try:
            request = _receive(stdin)
        except EOFError:
            return
        answer = found.pop(request, None) or _answer(conn, request, limits, prepared)
        try:
            _send(stdout, answer)
        except MemoryError:
            _send(stdout, ("oom", memory_message(limits)))
        if answer[0] == "oom":
            return  # a fresh process for the next query: this heap may be fragmented


def _answer(
    conn: duckdb.DuckDBPyConnection, request: _Request, limits: QueryLimits, prepared: Prepared
) -> tuple[str, Any]:
    """Run one request; its answer as the parent reads it (``ok``, ``timeout``, ``oom``…)."""
    try:
        result = run_query(
            conn,
            request.sql,
            max_rows=request.max_rows,
            timeout_s=request.timeout_s,
            limits=limits,
            measure_cells=request.measure_cells,
            prepared=prepared,
        )
        return ("ok", result)
    except QueryTimeout as error:
        return ("timeout", str(error))
    except QueryFailed as error:
        if str(error) == memory_message(limits):
            return ("oom", str(error))
        return ("failed", str(error))
    except MemoryError:
        return ("oom", memory_message(limits))


def main() -> None:
    """Serve queries: read the file and limits, then one request after another until EOF."""
    answers = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # anything else printed goes to stderr, never into the answers
    _serve(sys.stdin.buffer, answers)
