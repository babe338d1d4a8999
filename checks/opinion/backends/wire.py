"""What both native decision-model wire formats share: the API root, refusals, wrong types."""

from __future__ import annotations

from typing import Any

from checks.opinion.questions import (
    NoAnswer,
    NoAnswerReason,
)

MISSING = NoAnswer(NoAnswerReason.MISSING, "the response has no answer for this question")


def api_root(base_url: str) -> str:
    """The base URL without a trailing ``/v1``, so that one is never doubled."""
    return base_url[: -len("/v1")] if base_url.endswith("/v1") else base_url


def refusal(raw: dict[str, Any]) -> NoAnswer | None:
    """A refusal (``type: "refusal"`` or a ``refusal`` key) as ``NoAnswer(refused)``, else None."""
    if raw.get("type") == "refusal" or "refusal" in raw:
        said = raw.get("refusal") or raw.get("reason") or "the model declined this question"
        return NoAnswer(NoAnswerReason.REFUSED, str(said)[:200])
    return None


def wrong_type(raw: dict[str, Any], expected: str) -> NoAnswer | None:
    """``NoAnswer(invalid)`` when an answer's ``type`` is not the one asked, else None."""
    got = raw.get("type", expected)
    if got != expected:
        return NoAnswer(NoAnswerReason.INVALID, f"answered as {got!r}, asked as {expected!r}"[:200])
    return None
