"""The process's ``openai`` clients: one per endpoint, key and timeout, shared by every run.

Building an ``openai.OpenAI`` client (its ``httpx`` pool and TLS context) costs
~35 ms of CPU, so ``checks.agent.chat_client.ChatClient`` takes this process's
instead of building one per run. A forked child (a prefork pool process)
starts with none: it must not share its parent's sockets.
"""

from __future__ import annotations

import os
import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import openai

# The process's openai clients, by (base URL, key, timeout), most recently used last.
_SHARED: dict[tuple[str, str, float], openai.OpenAI] = {}
_SHARED_LOCK = threading.Lock()
SHARED_CLIENTS_KEPT = 8
# A forked child (a prefork pool process) must not share its parent's sockets.
os.register_at_fork(after_in_child=_SHARED.clear)


def shared_openai(base_url: str, api_key: str, timeout_s: float) -> openai.OpenAI:
    """Return this process's ``openai.OpenAI`` client for one endpoint and key.

    Built on first use (``max_retries=0``: ``ChatClient`` retries) and kept for
    the process; at most ``SHARED_CLIENTS_KEPT`` endpoints are kept, the least
    recently used dropped (not closed: a thread may still be using it; its
    connections close when it is collected). The client is safe to use from
    several threads at once (``httpx.Client``'s pool is).

    Args:
        base_url: the OpenAI base URL, e.g. ``http://127.0.0.1:5123/v1``.
        api_key: the key sent as ``Bearer``.
        timeout_s: the client's default timeout, in seconds (each call passes its own).
    """
    key = (base_url, api_key, timeout_s)
    with _SHARED_LOCK:
        client = _SHARED.pop(key, None)
        if client is None:
            import openai  # only when an LLM is configured: the package takes ~1 s to import

            client = openai.OpenAI(
                base_url=base_url, api_key=api_key, timeout=timeout_s, max_retries=0
            )
        _SHARED[key] = client
        while len(_SHARED) > SHARED_CLIENTS_KEPT:
            del _SHARED[next(iter(_SHARED))]
        return client
