"""The process's ``openai`` clients: one per endpoint, key and timeout, shared by every run.

Building an ``openai.OpenAI`` client (its ``httpx`` pool and TLS context) costs
~35 ms of CPU, so ``checks.agent.chat_client.ChatClient`` takes this process's
instead of building one per run. A forked child (a prefork pool process)
starts with none: it must not share its parent's sockets.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from checks.http.process_clients import ProcessClients

if TYPE_CHECKING:
    import openai

CLIENTS: ProcessClients[openai.OpenAI] = ProcessClients(kept=8, close=lambda c: c.close())
"""The process's openai clients, by (base URL, key, timeout)."""


def shared_openai(base_url: str, api_key: str, timeout_s: float) -> openai.OpenAI:
    """Return this process's ``openai.OpenAI`` client for one endpoint and key; ``release`` it.

    Built on first use (``max_retries=0``: ``ChatClient`` retries) and kept for
    the process (``CLIENTS``); a dropped one is closed once nobody holds it.
    The client is safe to use from several threads at once (``httpx.Client``'s
    pool is).

    Args:
        base_url: the OpenAI base URL, e.g. ``http://127.0.0.1:5123/v1``.
        api_key: the key sent as ``Bearer``.
        timeout_s: the client's default timeout, in seconds (each call passes its own).
    """

    def build() -> openai.OpenAI:
        import openai  # only when an LLM is configured: the package takes ~1 s to import

        return openai.OpenAI(base_url=base_url, api_key=api_key, timeout=timeout_s, max_retries=0)

    return CLIENTS.get((base_url, api_key, timeout_s), build)


def release(client: openai.OpenAI) -> None:
    """A ``ChatClient`` is done with a ``shared_openai`` client (see ``ProcessClients``)."""
    CLIENTS.release(client)
