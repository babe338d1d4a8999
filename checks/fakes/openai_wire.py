"""What the OpenAI-shaped fakes share: usage objects and the model list, as the API sends them.

Shapes from the ``openai`` package's own models (``CompletionUsage`` with
``prompt_tokens_details`` and ``completion_tokens_details``; ``Decision``'s
``Usage`` with ``input_tokens_details`` and ``output_tokens_details``;
``Model`` with ``id``, ``object``, ``created``, ``owned_by``); the tests
validate every fake response against those models.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

CREATED = 1_700_000_000
"""The fixed ``created`` time (Unix seconds) of the fake's models."""


def chat_usage(
    prompt_tokens: int, completion_tokens: int, scripted: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """Return a chat-completions ``usage``: counts, total, token details, then ``scripted`` over it.

    ``total_tokens`` is the sum of the counts after ``scripted`` is merged,
    unless ``scripted`` sets it too; ``scripted`` may add OpenRouter's ``cost``.
    """
    usage: dict[str, Any] = {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
        "completion_tokens_details": {
            "reasoning_tokens": 0,
            "audio_tokens": 0,
            "accepted_prediction_tokens": 0,
            "rejected_prediction_tokens": 0,
        },
    }
    usage |= dict(scripted or {})
    usage.setdefault("total_tokens", usage["prompt_tokens"] + usage["completion_tokens"])
    return usage


def decisions_usage(
    input_tokens: int, output_tokens: int, scripted: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """Return a Decisions ``usage`` (``openai.types.Decision``), ``scripted`` merged over it."""
    usage: dict[str, Any] = {
        "input_tokens": input_tokens,
        "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
        "output_tokens": output_tokens,
        "output_tokens_details": {"reasoning_tokens": 0},
    }
    usage |= dict(scripted or {})
    usage.setdefault("total_tokens", usage["input_tokens"] + usage["output_tokens"])
    return usage


def model_list(ids: Iterable[str]) -> dict[str, Any]:
    """Return ``GET /v1/models``: ``{object: "list", data: [Model, …]}``."""
    return {
        "object": "list",
        "data": [
            {"id": i, "object": "model", "created": CREATED, "owned_by": "lookout-fake"}
            for i in ids
        ],
    }
