"""The chat client: one OpenAI-compatible chat-completions endpoint, with retries and cost.

Wire format: OpenAI's chat completions with function tools (``tools``,
``tool_choice``, ``message.tool_calls[].function.{name, arguments}``,
``finish_reason``, ``usage.{prompt_tokens, completion_tokens}``), which OpenAI,
OpenRouter, Ollama and vLLM all speak. The ``openai`` package does the HTTP;
its own retries are off and ``tenacity`` retries instead, so that every wait is
bounded, honours ``Retry-After`` and is visible to the trace.

The ``openai`` client (its ``httpx`` pool and TLS context, ~35 ms of CPU to
build) is the process's, one per endpoint and key, shared by every
``ChatClient`` and thread (``checks.agent.openai_clients``); the request body goes out as
built here and the response is read as plain JSON, without the package's
typed-parameter transform and response models (~4 ms of CPU per call).

Provider quirks handled here (docs/design.md, The agent's tools):

- OpenRouter (base URL on ``openrouter.ai``): the request carries
  ``provider: {require_parameters: true}`` so a provider that cannot honour
  tools is not silently chosen; its ``usage.cost`` (USD) is the call's cost.
- A tool call placed inside ``content`` instead of ``tool_calls``: see
  ``checks.agent.inline_calls`` for exactly which formats are recognised.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import urlparse

from tenacity import RetryCallState, Retrying, retry_if_exception, stop_after_attempt, stop_any

from checks.agent.inline_calls import tool_calls_in_content
from checks.agent.openai_clients import release, shared_openai
from checks.agent.retry_rules import (
    MIN_ATTEMPT_S,
    PastDeadline,
    attempt_s,
    context_overflow,
    retry_after_s,
    retryable,
)
from checks.errors import ContextOverflowError, LLMError
from checks.settings.config import redact
from checks.settings.llm import LLMSettings

if TYPE_CHECKING:
    import openai

Message = dict[str, Any]


@dataclass(frozen=True)
class ToolCall:
    """One tool call from the model.

    Attributes:
        id: the call id the tool result must echo as ``tool_call_id``.
        name: the tool's name, as the model wrote it (maybe not a real tool).
        arguments: the arguments as raw JSON text, exactly as received (maybe not
            JSON); a server that sends them as a JSON object (Ollama does) has
            them turned into JSON text, so they go back as JSON too.
    """

    id: str
    name: str
    arguments: str

    def wire(self) -> dict[str, Any]:
        """Return the call in the chat-completions ``tool_calls[]`` shape."""
        return {
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": self.arguments},
        }


@dataclass(frozen=True)
class ChatReply:
    """One assistant turn and what it cost.

    Attributes:
        content: the assistant's text (None when it only called tools, or when
            a tool call found in the text was moved to ``tool_calls``).
        tool_calls: the calls, in the order given.
        finish_reason: ``stop``, ``tool_calls``, ``length``… as sent, or None.
        input_tokens: ``usage.prompt_tokens`` (0 when the provider sent none).
        output_tokens: ``usage.completion_tokens`` (0 when the provider sent none).
        cost_usd: the call's cost in USD, or None when unknown.
        calls_from_content: the tool calls were parsed out of ``content``.
        elapsed_ms: wall time of the successful HTTP call, in milliseconds.
    """

    content: str | None
    tool_calls: list[ToolCall]
    finish_reason: str | None
    input_tokens: int
    output_tokens: int
    cost_usd: float | None
    calls_from_content: bool = False
    elapsed_ms: int = 0

    def assistant_message(self) -> Message:
        """Return the turn as the assistant message to append to the conversation.

        ``content`` is always a string, ``""`` when the turn only called tools:
        OpenAI, vLLM and Ollama accept ``""`` beside ``tool_calls``, but
        llama.cpp's servers answer HTTP 500 to ``null`` and to a missing
        ``content`` (docs/agent.md, "What every server accepts").
        """
        message: Message = {"role": "assistant", "content": self.content or ""}
        if self.tool_calls:
            message["tool_calls"] = [call.wire() for call in self.tool_calls]
        return message

    def to_trace(self) -> dict[str, Any]:
        """Return the JSON-safe record of this turn for the trace."""
        return {
            "content": self.content,
            "tool_calls": [call.wire() for call in self.tool_calls],
            "finish_reason": self.finish_reason,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cost_usd": self.cost_usd,
            "calls_from_content": self.calls_from_content,
            "elapsed_ms": self.elapsed_ms,
        }


@dataclass(frozen=True)
class RetryNote:
    """A failed attempt about to be retried: passed to ``ChatClient``'s ``on_retry``.

    Attributes:
        attempt: 1-based number of the attempt that failed.
        status: its HTTP status, or None for a connection error or timeout.
        wait_s: seconds the client sleeps before the next attempt.
        reason: one line saying what failed (redacted).
    """

    attempt: int
    status: int | None
    wait_s: float
    reason: str


def _arguments_text(raw: Any) -> str:
    """A tool call's ``arguments`` as JSON text: a string as is, an object or list as JSON."""
    if raw is None:
        return ""
    if isinstance(raw, (dict, list)):
        return json.dumps(raw, ensure_ascii=False)
    return str(raw)


@dataclass
class ChatClient:
    """A chat-completions client for one endpoint and one model.

    Args:
        settings: endpoint, key, timeout, retry and price settings.
        model: the model to ask; defaults to ``settings.model`` (an
            automation's ``model`` overrides it).
        secrets: values to redact from error messages (``Settings.secrets()``).
        on_retry: called before each retry's sleep (e.g. to write the trace).
        sleep: the sleep function (seconds); tests may pass a recording one.

    Raises:
        LLMError: at construction, when no base URL or model is set.
    """

    settings: LLMSettings
    model: str | None = None
    secrets: Sequence[str] = ()
    on_retry: Callable[[RetryNote], None] | None = None
    sleep: Callable[[float], None] = time.sleep
    _client: openai.OpenAI = field(init=False, repr=False)
    _held: bool = field(default=True, init=False, repr=False)

    def __post_init__(self) -> None:
        self.model = self.model or self.settings.model
        if not self.settings.base_url or not self.model:
            raise LLMError("no LLM configured: set LOOKOUT_LLM_BASE_URL and LOOKOUT_LLM_MODEL")
        self._client = shared_openai(
            self.settings.base_url,
            # Local servers (Ollama, vLLM) take no key, but the package insists on one.
            self.settings.api_key or "no-key",
            self.settings.timeout_s,
        )

    def close(self) -> None:
        """Let go of the process's client (``openai_clients.release``); it stays open while kept."""
        if self._held:
            self._held = False
            release(self._client)

    def __enter__(self) -> ChatClient:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    @property
    def _secrets(self) -> list[str]:
        return [*self.secrets, *([self.settings.api_key] if self.settings.api_key else [])]

    @property
    def is_openrouter(self) -> bool:
        """Whether the base URL is OpenRouter's (host ``openrouter.ai`` or a subdomain)."""
        host = urlparse(self.settings.base_url or "").hostname or ""
        return host == "openrouter.ai" or host.endswith(".openrouter.ai")

    def request_body(
        self, messages: Sequence[Message], tools: Sequence[dict[str, Any]], tool_choice: Any
    ) -> dict[str, Any]:
        """Return the JSON body ``complete`` sends (without the key, which goes in a header)."""
        body: dict[str, Any] = {
            "model": self.model,
            "messages": list(messages),
            "tools": list(tools),
            "tool_choice": tool_choice,
        }
        body[self.max_tokens_key] = self.settings.max_output_tokens
        if self.is_openrouter:
            body["provider"] = {"require_parameters": True}
        return body

    @property
    def max_tokens_key(self) -> str:
        """``max_completion_tokens`` for OpenAI's own API, ``max_tokens`` for every other server.

        OpenAI deprecated ``max_tokens`` and refuses it for its reasoning models;
        llama.cpp, Ollama, vLLM and OpenRouter read ``max_tokens``.
        """
        host = urlparse(self.settings.base_url or "").hostname or ""
        return "max_completion_tokens" if host == "api.openai.com" else "max_tokens"

    def complete(
        self,
        messages: Sequence[Message],
        tools: Sequence[dict[str, Any]],
        tool_choice: Any = "auto",
        *,
        timeout_s: float | None = None,
        deadline: float | None = None,
    ) -> ChatReply:
        """Ask the model for its next turn, every attempt and wait inside ``deadline``.

        Args:
            messages: the conversation in chat-completions message shape.
            tools: function tool definitions (``{"type": "function", "function": {…}}``).
            tool_choice: as in the wire format: ``"auto"``, or
                ``{"type": "function", "function": {"name": N}}`` to force tool N.
            timeout_s: time limit of each HTTP attempt, in seconds; default
                ``settings.timeout_s``.
            deadline: ``time.monotonic()`` value of the run's time limit: each
                attempt's timeout is cut to the time left, and no retry starts
                (nor is waited for) when less than ``retry_rules.MIN_ATTEMPT_S`` would be left.

        Raises:
            ContextOverflowError: the server said the conversation is longer than
                the model's context (HTTP 400; not retried).
            LLMError: the endpoint still failed after ``settings.max_retries``
                retries (429, 5xx, connection error or timeout), or failed with a
                status that is not retried (e.g. 400, 401), or sent no choices.
                ``status`` and the start of ``body`` (redacted) are attached.
        """
        import httpx
        import openai

        body = self.request_body(messages, tools, tool_choice)
        per_attempt_s = timeout_s or self.settings.timeout_s
        if deadline is not None and deadline - time.monotonic() < MIN_ATTEMPT_S:
            raise LLMError("the run's time limit ran out before the LLM could be asked")
        retrying = Retrying(
            stop=stop_any(
                stop_after_attempt(self.settings.max_retries + 1), PastDeadline(deadline)
            ),
            wait=self._wait_s,
            retry=retry_if_exception(retryable),
            before_sleep=self._before_sleep,
            sleep=self.sleep,
            reraise=True,
        )
        started = time.monotonic()
        try:
            for attempt in retrying:
                with attempt:
                    started = time.monotonic()
                    # the body as built: the package's typed transform would rebuild it
                    response = self._client.post(
                        "/chat/completions",
                        body=body,
                        cast_to=httpx.Response,
                        options={"timeout": attempt_s(per_attempt_s, deadline)},
                    )
        except openai.APIStatusError as exc:
            text = redact(exc.response.text, self._secrets)
            if context_overflow(exc.status_code, exc.response.text):
                raise ContextOverflowError(
                    "the conversation is longer than the model's context window",
                    status=exc.status_code,
                    body=text,
                ) from None
            raise LLMError(
                "the LLM endpoint refused the request", status=exc.status_code, body=text
            ) from None
        except openai.APIConnectionError as exc:
            reason = redact(str(exc), self._secrets)
            raise LLMError(
                f"cannot reach the LLM endpoint {self.settings.base_url}: {reason}"
            ) from None
        elapsed_ms = int((time.monotonic() - started) * 1000)
        try:
            data = response.json()
        except ValueError:
            data = None
        if not isinstance(data, dict):
            text = redact(response.text, self._secrets)
            raise LLMError(
                "the LLM response was not a JSON object", status=response.status_code, body=text
            )
        return self._reply(data, tools, elapsed_ms)

    def _reply(
        self, data: dict[str, Any], tools: Sequence[dict[str, Any]], elapsed_ms: int
    ) -> ChatReply:
        choices = data.get("choices") or []
        if not choices:
            raise LLMError("the LLM response had no choices", body=json.dumps(data)[:500])
        message = choices[0].get("message") or {}
        calls = [
            ToolCall(
                id=str(c.get("id") or f"call_{i}"),
                name=str((c.get("function") or {}).get("name") or ""),
                arguments=_arguments_text((c.get("function") or {}).get("arguments")),
            )
            for i, c in enumerate(message.get("tool_calls") or [], start=1)
        ]
        content = message.get("content")
        from_content = False
        if not calls and content:
            offered = {t["function"]["name"] for t in tools if t.get("type") == "function"}
            found = tool_calls_in_content(content, offered)
            if found:
                calls = [
                    ToolCall(f"content_call_{i}", name, args)
                    for i, (name, args) in enumerate(found, start=1)
                ]
                content, from_content = None, True
        usage = data.get("usage") or {}
        input_tokens = int(usage.get("prompt_tokens") or 0)
        output_tokens = int(usage.get("completion_tokens") or 0)
        return ChatReply(
            content=content,
            tool_calls=calls,
            finish_reason=choices[0].get("finish_reason"),
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            cost_usd=self._cost_usd(usage.get("cost"), input_tokens, output_tokens),
            calls_from_content=from_content,
            elapsed_ms=elapsed_ms,
        )

    def _cost_usd(self, reported: Any, input_tokens: int, output_tokens: int) -> float | None:
        """``usage.cost`` when the provider sent a number, else the price table, else None."""
        if isinstance(reported, int | float) and not isinstance(reported, bool):
            return float(reported)
        prices = self.settings.prices_usd_per_mtok.get(self.model or "")
        if prices is None:
            return None
        return (input_tokens * prices[0] + output_tokens * prices[1]) / 1_000_000

    def _wait_s(self, state: RetryCallState) -> float:
        """Seconds before the next attempt: ``Retry-After`` (capped) or exponential backoff."""
        import openai

        exc = state.outcome.exception() if state.outcome else None
        if isinstance(exc, openai.APIStatusError):
            after = retry_after_s(exc.response.headers)
            if after is not None:
                return min(after, self.settings.retry_after_cap_s)
        backoff = self.settings.backoff_base_s * 2 ** (state.attempt_number - 1)
        return float(min(backoff, self.settings.backoff_max_s))

    def _before_sleep(self, state: RetryCallState) -> None:
        import openai

        if self.on_retry is None or state.outcome is None:
            return
        exc = state.outcome.exception()
        status = exc.status_code if isinstance(exc, openai.APIStatusError) else None
        reason = redact(f"{type(exc).__name__}: {exc}", self._secrets)
        wait_s = state.upcoming_sleep
        self.on_retry(RetryNote(state.attempt_number, status, wait_s, reason[:300]))
