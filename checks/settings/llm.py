"""The ``llm:`` section: the OpenAI-compatible chat endpoint the agent uses."""

from __future__ import annotations

from typing import Annotated

from pydantic import BeforeValidator, Field, field_validator

from checks.fields.schedule import parse_duration
from checks.settings.strict import Strict, http_url


class LLMSettings(Strict):
    """The OpenAI-compatible chat endpoint the agent uses; unset base_url = no LLM.

    Attributes:
        base_url: chat-completions base URL, e.g. ``https://openrouter.ai/api/v1``
            or ``http://127.0.0.1:11434/v1`` (Ollama). Unset: no LLM.
        api_key: bearer key (a secret: redacted everywhere). Optional for local servers.
        model: model name; an automation's ``model`` overrides it.
        timeout_s: time limit of one HTTP request, in seconds.
        max_retries: retries after a 429, 5xx, connection error or timeout (0: none);
            every attempt and every wait fits inside the run's time limit.
        max_output_tokens: the most tokens the model may write in one turn, sent
            with every request (``max_tokens``; ``max_completion_tokens`` to
            OpenAI's own API, where ``max_tokens`` is deprecated). Without it a
            small local model writes until its context is full.
        retry_after_cap_s: the longest ``Retry-After`` honoured, in seconds; a
            longer one is cut to this.
        backoff_base_s: first backoff without ``Retry-After``, in seconds; doubles
            per retry up to ``backoff_max_s``.
        backoff_max_s: longest backoff without ``Retry-After``, in seconds.
        max_steps: model calls exploring the data before the final, forced
            ``submit_report`` call (which is not counted here).
        max_prompt_tokens: when a prompt reaches this many tokens the exploring
            stops and the final ``submit_report`` call is made.
        compact_after_tokens: past this estimated prompt size the oldest tool
            results are replaced by a short note in the prompt (the trace keeps them).
        list_cap: most data sets ``list_data_sets`` shows at once.
        repeat_limit: this many identical consecutive tool calls stop the exploring.
        max_parallel_tools: read tool calls of one turn run on at most this many threads.
        max_tool_calls_per_turn: the most tool calls of one turn that run; the rest
            are dropped from the conversation and the model is told how many.
        max_tool_calls_per_run: the most tool calls one agent run makes; once
            reached the exploring stops (``stopped_by: tool_call_budget``) and the
            final ``submit_report`` call is made.
        prices_usd_per_mtok: model -> (input, output) price in USD per million
            tokens, used when the provider reports no ``usage.cost``.
        pin_plans: keep each accepted agent report as its automation's pinned
            plan and let later runs take it while its evidence is unchanged
            (``checks.pinned``); False: the agent is asked on every run.
        repin_after_s: the oldest a pinned plan may be before the agent is asked
            again, in seconds (YAML ``repin_after``: ``7d``, ``12h``, or seconds);
            an automation's ``repin_after`` wins.
    """

    base_url: str | None = None
    api_key: str | None = None
    model: str | None = None
    timeout_s: float = Field(default=60.0, gt=0)
    max_retries: int = Field(default=3, ge=0, le=10)
    max_output_tokens: int = Field(default=1024, ge=16, le=100_000)
    retry_after_cap_s: float = Field(default=30.0, ge=0)
    backoff_base_s: float = Field(default=1.0, ge=0)
    backoff_max_s: float = Field(default=20.0, ge=0)
    max_steps: int = Field(default=9, ge=1, le=100)
    max_prompt_tokens: int = Field(default=60_000, ge=1_000)
    compact_after_tokens: int = Field(default=24_000, ge=500)
    list_cap: int = Field(default=5, ge=1)
    repeat_limit: int = Field(default=3, ge=2)
    max_parallel_tools: int = Field(default=4, ge=1, le=32)
    max_tool_calls_per_turn: int = Field(default=16, ge=1, le=1000)
    max_tool_calls_per_run: int = Field(default=64, ge=1, le=10_000)
    prices_usd_per_mtok: dict[str, tuple[float, float]] = Field(default_factory=dict)
    pin_plans: bool = True
    repin_after_s: Annotated[float, BeforeValidator(parse_duration)] = Field(
        default=7 * 86400.0, alias="repin_after"
    )

    @field_validator("base_url")
    @classmethod
    def _http(cls, value: str | None) -> str | None:
        return None if value is None else http_url(value)
