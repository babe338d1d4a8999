"""A process's HTTP clients, one per endpoint, kept from run to run, at most a few.

Building an HTTP client costs its connection pool and TLS context (~25–35 ms
of CPU), so the clients of an LLM or decision-model endpoint are built once
per process and shared by every run and thread (``httpx.Client``'s pool is
thread-safe). ``ProcessClients`` keeps them by key (the endpoint, key, timeout
…), the most recently used last and at most ``kept`` of them: the least
recently used is dropped, and closed once nobody holds it (each ``get`` holds
the client until its ``release``; a holder that never releases leaves a
dropped client to be closed when it is collected). A forked child (a prefork
pool process) starts with none: it must not share its parent's sockets.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Generic, TypeVar

C = TypeVar("C")


@dataclass
class _Entry(Generic[C]):
    client: C
    users: int = 0
    dropped: bool = False


class ProcessClients(Generic[C]):
    """This process's clients by key; thread-safe.

    Args:
        kept: how many clients are kept at most (the least recently used is dropped).
        close: closes a dropped client once nobody holds it.
    """

    def __init__(self, kept: int, close: Callable[[C], None]) -> None:
        self.kept = kept
        self._close = close
        self._lock = threading.Lock()
        self._forget()
        os.register_at_fork(after_in_child=self._forget)

    def _forget(self) -> None:
        self._entries: dict[Hashable, _Entry[C]] = {}
        self._in_use: dict[int, _Entry[C]] = {}  # id(client) -> its entry, while held

    def __len__(self) -> int:
        """How many clients are kept now."""
        return len(self._entries)

    def get(self, key: Hashable, build: Callable[[], C]) -> C:
        """Return the client kept for ``key`` (``build()`` on first use), held until ``release``."""
        with self._lock:
            entry = self._entries.pop(key, None)
            if entry is None:
                entry = _Entry(build())
            self._entries[key] = entry
            entry.users += 1
            self._in_use[id(entry.client)] = entry
            while len(self._entries) > self.kept:
                old = self._entries.pop(next(iter(self._entries)))
                old.dropped = True
                if old.users == 0:
                    self._close(old.client)
            return entry.client

    def release(self, client: C) -> None:
        """A holder is done with ``client``: it is closed if it was dropped and nobody holds it."""
        with self._lock:
            entry = self._in_use.get(id(client))
            if entry is None or entry.client is not client:
                return
            entry.users -= 1
            if entry.users == 0:
                del self._in_use[id(client)]
                if entry.dropped:
                    self._close(client)
