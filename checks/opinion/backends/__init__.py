"""One module per decision-model wire format: systemone, openai-decisions, chat-logprobs.

``make_decision_model`` gives the one a setting names; it lives here, above
``checks.opinion.decision_model``, which every backend builds on.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from checks.errors import ConfigError
from checks.opinion.decision_model import Backend, DecisionModel, NoDecisionModel
from checks.settings.decision import DecisionSettings

if TYPE_CHECKING:
    import httpx


def make_decision_model(
    settings: DecisionSettings, *, client: httpx.Client | None = None
) -> DecisionModel:
    """Return the decision model ``settings`` name (``NoDecisionModel`` for ``none``).

    ``DecisionSettings`` already refused, at load, a backend without a
    ``base_url`` or a ``model``.

    Raises:
        ConfigError: ``base_url`` or ``model`` is unset for a backend other
            than ``none`` (settings built without validation).
    """
    backend = Backend(settings.backend)
    if backend is Backend.NONE:
        return NoDecisionModel()
    if not settings.base_url:
        raise ConfigError(f"backend {backend} needs a base_url", field="decision.base_url")
    if not settings.model:
        raise ConfigError(f"backend {backend} needs a model", field="decision.model")
    # Imported here: the "none" backend never loads httpx or the wire formats.
    from checks.opinion.backends.chat_logprobs import ChatLogprobsModel
    from checks.opinion.backends.openai_decisions import OpenAIDecisionsModel
    from checks.opinion.backends.systemone import SystemOneModel
    from checks.opinion.transport import HTTPDecisionModel

    kinds: dict[Backend, type[HTTPDecisionModel]] = {
        Backend.SYSTEMONE: SystemOneModel,
        Backend.OPENAI_DECISIONS: OpenAIDecisionsModel,
        Backend.CHAT_LOGPROBS: ChatLogprobsModel,
    }
    return kinds[backend](
        settings.base_url,
        api_key=settings.api_key,
        model=settings.model,
        timeout_s=settings.timeout_s,
        input_budget_tokens=settings.input_budget_tokens,
        max_parallel_requests=settings.max_parallel_requests,
        prices_usd_per_mtok=settings.prices_usd_per_mtok,
        client=client,
    )
