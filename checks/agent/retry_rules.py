"""What an LLM server's answer and the run's deadline allow: retry, wait, or stop.

The rules ``checks.agent.chat_client`` retries by: which failures are retried
(429, 5xx, connection errors and timeouts), how long a server asks to wait
(``Retry-After``, ``retry-after-ms``), when the run's deadline leaves no room
for another attempt, and when an error says the conversation outgrew the
model's context window (docs/agent.md, "What every server accepts").
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Mapping

from tenacity import RetryCallState
from tenacity.stop import stop_base

from checks.http.retry_after import parse_retry_after

MIN_ATTEMPT_S = 1.0
"""The least time an HTTP attempt is started with; less left before the deadline: no attempt."""


def attempt_s(timeout_s: float, deadline: float | None) -> float:
    """One attempt's timeout: ``timeout_s``, cut to the time left before ``deadline``."""
    if deadline is None:
        return timeout_s
    return max(MIN_ATTEMPT_S, min(timeout_s, deadline - time.monotonic()))


class PastDeadline(stop_base):
    """A tenacity stop: no retry whose wait would leave less than ``MIN_ATTEMPT_S`` to run in."""

    def __init__(self, deadline: float | None) -> None:
        self.deadline = deadline

    def __call__(self, retry_state: RetryCallState) -> bool:
        """Whether to stop: the next attempt would start too close to the deadline."""
        if self.deadline is None:
            return False
        # tenacity 9 computes the wait before it asks the stop (``upcoming_sleep``)
        wait_s = retry_state.upcoming_sleep or 0.0
        return time.monotonic() + wait_s + MIN_ATTEMPT_S > self.deadline


_OVERFLOW_CODES = {"context_length_exceeded", "exceed_context_size_error"}
_OVERFLOW_WORDS = ("maximum context length", "exceeds the available context size")


def context_overflow(status: int, body: str) -> bool:
    """Whether an error response says the prompt outgrew the model's context window.

    OpenAI and llama-cpp-python answer HTTP 400 with ``error.code``
    ``context_length_exceeded``; llama.cpp's own server with ``error.type``
    ``exceed_context_size_error`` ("request (N tokens) exceeds the available
    context size"); vLLM with a 400 whose message names the "maximum context
    length". Only a 400 or 413 counts.
    """
    if status not in (400, 413):
        return False
    try:
        error = json.loads(body).get("error")
    except (ValueError, AttributeError):
        error = None
    if isinstance(error, dict) and {str(error.get("code")), str(error.get("type"))} & (
        _OVERFLOW_CODES
    ):
        return True
    lowered = body.lower()
    return any(words in lowered for words in _OVERFLOW_WORDS)


def retryable(exc: BaseException) -> bool:
    """429, any 5xx, and connection errors or timeouts are retried; other statuses are not."""
    import openai

    if isinstance(exc, openai.APIStatusError):
        return exc.status_code == 429 or exc.status_code >= 500
    return isinstance(exc, openai.APIConnectionError)


def retry_after_s(headers: Mapping[str, str]) -> float | None:
    """Return the wait a response asks for, in seconds, or None when it does not say.

    ``headers`` are the response's (case-insensitive ``httpx.Headers``, or a
    dict with lower-case names). ``retry-after-ms`` (milliseconds, a number,
    fractions allowed; sent by OpenAI and read first by the ``openai`` SDK's
    ``_parse_retry_after_header``) wins when it is a number >= 0 (not NaN);
    otherwise ``Retry-After`` is read by ``checks.http.retry_after``
    (RFC 9110 §10.2.3: integer seconds or an HTTP-date).
    """
    millis = headers.get("retry-after-ms")
    if millis is not None:
        try:
            value = float(millis) / 1000
        except ValueError:
            value = math.nan
        if value >= 0:  # NaN compares false; inf is left to the caller's cap
            return value
    return parse_retry_after(headers.get("retry-after"))
