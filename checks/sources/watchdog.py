"""Deadlines of running queries, kept by one thread per process instead of a timer each.

A query's time limit is an action (interrupt the DuckDB cursor, cancel the
PostgreSQL query, shut its socket) that must run if the query is still going
at its deadline. ``after`` arms one for the length of a ``with`` block. One
daemon thread per process waits for the earliest deadline of all armed
actions: arming one is a heap push (the thread is woken only when the new
deadline comes before the one it waits for), so a query no longer starts a
thread of its own (``threading.Timer`` did, about 0.1–0.3 ms of CPU each,
more under load).

An action due runs on a thread of its own, started then, so that a slow one
(a cancel sent over the network) never delays another's deadline; as with
``threading.Timer``, an action may still run just as its block ends, never
after a block that ended before its deadline. A forked child starts with no
deadlines and its own thread on first use.
"""

from __future__ import annotations

import heapq
import itertools
import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager

Action = Callable[[], None]


class Watchdog:
    """Runs each armed action at its deadline unless its block ended first; thread-safe."""

    def __init__(self) -> None:
        self._reset()

    def _reset(self) -> None:
        self._cond = threading.Condition(threading.Lock())
        # [deadline (time.monotonic()), sequence, action or None once ended or run]
        self._heap: list[list[object]] = []
        self._order = itertools.count()
        self._wakes_at = float("inf")  # when the thread wakes next on its own
        self._thread: threading.Thread | None = None

    @contextmanager
    def after(self, timeout_s: float, action: Action) -> Iterator[None]:
        """Run ``action`` once ``timeout_s`` seconds from now if the block is still running."""
        entry: list[object] = [time.monotonic() + timeout_s, next(self._order), action]
        with self._cond:
            heapq.heappush(self._heap, entry)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="watchdog", daemon=True)
                self._thread.start()
            elif entry[0] < self._wakes_at:  # type: ignore[operator]
                self._cond.notify()
        try:
            yield
        finally:
            entry[2] = None  # lazily dropped from the heap; no wake-up needed

    def _run(self) -> None:
        heap = self._heap
        with self._cond:
            while True:
                while heap and heap[0][2] is None:
                    heapq.heappop(heap)
                if not heap:
                    self._wakes_at = float("inf")
                    self._cond.wait()
                    continue
                deadline = float(heap[0][0])  # type: ignore[arg-type]
                left = deadline - time.monotonic()
                if left > 0:
                    self._wakes_at = deadline
                    self._cond.wait(left)
                    continue
                entry = heapq.heappop(heap)
                action, entry[2] = entry[2], None
                if callable(action):
                    threading.Thread(target=action, name="watchdog-action", daemon=True).start()


WATCHDOG = Watchdog()
"""The process's watchdog (``after``)."""

os.register_at_fork(after_in_child=WATCHDOG._reset)  # the parent's thread is not in the child


def after(timeout_s: float, action: Action) -> AbstractContextManager[None]:
    """``WATCHDOG.after``: run ``action`` ``timeout_s`` seconds from now unless the block ended."""
    return WATCHDOG.after(timeout_s, action)
