"""Per-webhook rate limits: one small token bucket (burst 1) per destination URL.

Slack allows one message per second per incoming webhook (docs/design.md, Delivering alerts),
and the other services throttle a burst too, so every send first reserves
a slot: ``reserve(key, rate_per_s)`` returns how long to wait, and reserving
moves the bucket's next free slot ``1 / rate_per_s`` seconds on (the GCRA form
of a token bucket holding one token).

Two places to keep the buckets (``alerts.rate_limiter``):

- ``RedisBuckets``: in Redis at ``redis_url``, shared by every worker process;
  one Lua script reads and moves the slot atomically on Redis' own clock
  (``TIME``), so workers on several machines agree. Keys are
  ``lookout:rate:<sha256 of the URL, 24 hex>`` — never the URL itself, which
  is a secret — and expire once idle.
- ``MemoryBuckets``: in this process (``lookout run --notify``, tests, or no
  Redis). Two processes sending to one webhook then each keep their own pace.

``auto`` (the default) uses Redis when it answers a ping within 0.2 s.
"""

from __future__ import annotations

import hashlib
import threading
import time
from typing import Any, Protocol

REDIS_PING_TIMEOUT_S = 0.2

_GCRA = """
local now = redis.call('TIME')
local t = tonumber(now[1]) + tonumber(now[2]) / 1000000
local interval = tonumber(ARGV[1])
local free = tonumber(redis.call('GET', KEYS[1]) or '0')
local at = math.max(t, free)
local ttl = math.ceil((at + interval - t) * 1000) + 1000
redis.call('SET', KEYS[1], tostring(at + interval), 'PX', ttl)
return tostring(at - t)
"""


class Buckets(Protocol):
    """Where token buckets live."""

    def reserve(self, key: str, rate_per_s: float) -> float:
        """Take the next slot of ``key``'s bucket; return the seconds to wait before sending."""
        ...


def bucket_key(url: str) -> str:
    """Return the bucket name for a destination URL (a hash: the URL is a secret)."""
    return "lookout:rate:" + hashlib.sha256(url.encode("utf-8")).hexdigest()[:24]


class MemoryBuckets:
    """Token buckets in this process, safe across threads (monotonic clock)."""

    def __init__(self) -> None:
        self._free: dict[str, float] = {}
        self._lock = threading.Lock()

    def reserve(self, key: str, rate_per_s: float) -> float:
        """Take the next slot; return the seconds to wait for it."""
        with self._lock:
            now = time.monotonic()
            at = max(now, self._free.get(key, 0.0))
            self._free[key] = at + 1.0 / rate_per_s
            return at - now


class RedisBuckets:
    """Token buckets in Redis, shared by every worker (see the module docstring).

    Args:
        client: a ``redis.Redis`` client.
    """

    def __init__(self, client: Any) -> None:
        self._client = client
        self._script = client.register_script(_GCRA)

    def reserve(self, key: str, rate_per_s: float) -> float:
        """Take the next slot atomically in Redis; return the seconds to wait for it."""
        return float(self._script(keys=[key], args=[repr(1.0 / rate_per_s)]))


_chosen: dict[tuple[str, str], Buckets] = {}
_chosen_lock = threading.Lock()


def _redis_buckets(redis_url: str) -> RedisBuckets | None:
    try:
        import redis
    except ImportError:
        return None
    client = redis.Redis.from_url(
        redis_url, socket_timeout=REDIS_PING_TIMEOUT_S, socket_connect_timeout=REDIS_PING_TIMEOUT_S
    )
    try:
        client.ping()
    except redis.RedisError:
        return None
    return RedisBuckets(client)


def buckets_for(mode: str, redis_url: str) -> Buckets:
    """Return the process' buckets for ``alerts.rate_limiter`` (``auto``, ``redis``, ``memory``).

    The choice is made once per (mode, URL) and kept for the process.

    Raises:
        RuntimeError: ``mode`` is ``redis`` and Redis does not answer.
    """
    with _chosen_lock:
        if (mode, redis_url) not in _chosen:
            found: Buckets | None = None
            if mode in ("auto", "redis"):
                found = _redis_buckets(redis_url)
                if found is None and mode == "redis":
                    raise RuntimeError("alerts.rate_limiter is redis but Redis does not answer")
            _chosen[(mode, redis_url)] = found or MemoryBuckets()
        return _chosen[(mode, redis_url)]
