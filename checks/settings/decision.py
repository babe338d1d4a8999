"""The ``decision:`` section: the second opinion's model (docs/design.md, Decision models)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, ValidationInfo, field_validator
from pydantic_core import PydanticCustomError

from checks.settings.strict import Strict, http_url


class DecisionSettings(Strict):
    """The decision model: second opinions, data-set ranking (docs/design.md, Decision models).

    Attributes:
        backend: ``none`` (no second opinion), ``systemone`` (``POST {base_url}/v1/systemone``),
            ``openai-decisions`` (``POST {base_url}/v1/decisions``) or ``chat-logprobs`` (any
            OpenAI-compatible chat model, ``POST {base_url}/chat/completions``).
        base_url: the backend's base URL; required unless ``backend`` is ``none``.
        api_key: bearer key (a secret: redacted everywhere). Optional for local servers.
        model: model name sent in every request; required unless ``backend`` is ``none``
            (every wire format requires ``model``; Lookout does not guess one, since the
            same ``systemone`` backend serves TypeSafe, where the SDK's default is
            ``jev-latest``, OpenRouter and Ollama, each with its own names).
        timeout_s: time limit of one HTTP request, in seconds (per httpx phase: connect,
            write, each read).
        threshold: probability at or above which "goal met" and "same as last run" count as yes.
        input_budget_tokens: most input tokens one request may carry (estimated as characters
            / 4); questions beyond it are split over several requests (chunks).
        max_parallel_requests: most requests of one ``ask`` (or one ranking round) in flight
            at once.
        prices_usd_per_mtok: (input, output) price in USD per million tokens, used when the
            backend reports no cost; unset and unreported: cost unknown (None).
        calibration_min_reviews: labelled answers (runs ops resolved on the review page) a
            question needs before ``lookout calibrate`` fits a recalibration of it.
    """

    backend: Literal["none", "systemone", "openai-decisions", "chat-logprobs"] = "none"
    base_url: str | None = Field(default=None, validate_default=True)
    api_key: str | None = None
    model: str | None = Field(default=None, validate_default=True)
    timeout_s: float = 5.0
    threshold: float = 0.5
    input_budget_tokens: int = Field(default=32_000, ge=1_000)
    max_parallel_requests: int = Field(default=8, ge=1, le=64)
    prices_usd_per_mtok: tuple[float, float] | None = None
    calibration_min_reviews: int = Field(default=30, ge=2)

    @field_validator("base_url", "model", mode="after")
    @classmethod
    def _required_by_the_backend(cls, value: str | None, info: ValidationInfo) -> str | None:
        """Refuse, at load, a backend other than ``none`` without a base URL or a model."""
        backend = info.data.get("backend", "none")
        if backend != "none" and not (value or "").strip():
            raise PydanticCustomError(
                "lookout",
                "{message}",
                {"message": f"backend {backend} needs a {info.field_name}"},
            )
        if info.field_name == "base_url" and value is not None and value.strip():
            return http_url(value)
        return value
