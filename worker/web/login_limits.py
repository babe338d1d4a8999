"""Login attempts: limited per client and user name, and per client, with exponential backoff.

After ``free`` failed logins in a row for one user name from one client address,
or ``free`` × ``CLIENT_FACTOR`` from one client address for any names, the next
attempt from it is refused for a while without the password being checked: 1 s,
then twice as long after each further failure, up to ``max_s`` (OWASP's
authentication cheat sheet: throttle, back off, never lock out for good). A user
name alone is never a key: anyone could then lock a named user out from
anywhere; and a client address shared by many (an unlisted proxy) backs off only
after many more failures. Guessing one user's password from many addresses is
slowed by the few password checks run at once (scrypt). A success clears the
client's counts. At most ``concurrent`` password checks run at once (scrypt is
made to be slow): past that a login is refused at once, so a flood of logins
cannot take every thread and CPU of the app (``/healthz`` keeps answering).

The counts live in the process: with several web processes each counts its own.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

CLIENT_FACTOR = 10
"""How many more failures a client address may make, over all user names, than for one."""
MAX_KEYS = 10_000
"""Clients and user names remembered; the least recently failed are forgotten first."""


@dataclass
class _Failures:
    count: int = 0
    blocked_until: float = 0.0


class LoginLimits:
    """Failed logins per client and per user, and how long to wait before the next one.

    Args:
        free: failures in a row allowed before backing off.
        max_s: the longest wait, in seconds.
        concurrent: password checks at once.
        clock: seconds, monotonic (replaceable in tests).

    """

    def __init__(
        self,
        *,
        free: int = 5,
        max_s: float = 900.0,
        concurrent: int = 2,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.free, self.max_s, self.clock = free, max_s, clock
        self._failures: OrderedDict[str, _Failures] = OrderedDict()
        self._lock = threading.Lock()
        self._checks = threading.BoundedSemaphore(concurrent)

    @staticmethod
    def _keys(client: str, user: str) -> tuple[str, str]:
        return f"client:{client}", f"client:{client}\x00user:{user.strip().lower()}"

    def _free(self, key: str) -> int:
        return self.free if "\x00user:" in key else self.free * CLIENT_FACTOR

    def wait_s(self, client: str, user: str) -> float:
        """Seconds before a login from ``client`` for ``user`` may be tried; 0 when it may now."""
        now = self.clock()
        with self._lock:
            found = [self._failures.get(key) for key in self._keys(client, user)]
        return max([0.0] + [f.blocked_until - now for f in found if f is not None])

    def failed(self, client: str, user: str) -> None:
        """Count a failed login; past ``free`` in a row, back off."""
        now = self.clock()
        with self._lock:
            for key in self._keys(client, user):
                entry = self._failures.pop(key, None) or _Failures()
                entry.count += 1
                free = self._free(key)
                if entry.count > free:
                    wait = min(self.max_s, 2.0 ** (entry.count - free - 1))
                    entry.blocked_until = now + wait
                self._failures[key] = entry
            while len(self._failures) > MAX_KEYS:
                self._failures.popitem(last=False)

    def succeeded(self, client: str, user: str) -> None:
        """Forget the failures of this client (for this user and in all)."""
        with self._lock:
            for key in self._keys(client, user):
                self._failures.pop(key, None)

    @contextmanager
    def checking(self) -> Iterator[bool]:
        """Hold one of the ``concurrent`` places for a password check; False when none is free."""
        if not self._checks.acquire(blocking=False):
            yield False
            return
        try:
            yield True
        finally:
            self._checks.release()
