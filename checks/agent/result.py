"""What an agent run produced and what it cost: ``AgentStats``, ``AgentResult``, ``cost_text``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from checks.report import Evidence

if TYPE_CHECKING:  # the terminal reads ``cost_text`` without loading the LLM client
    from checks.agent.chat_client import ChatReply
    from checks.agent.trace import TraceSink
    from checks.finding import AcceptedReport, SubmittedReport


@dataclass
class AgentStats:
    """The counters stored as ``RunReport.agent`` (``lookout run --json``).

    Attributes:
        model: the model asked.
        steps: model calls made, the final and repair calls included.
        tool_calls: tool calls received, ``submit_report`` included.
        cache_hits: calls answered from the run's cache.
        input_tokens, output_tokens: summed over every call, as the provider reported.
        cost_usd: summed cost in USD; None when any call's cost was unknown.
        compacted: tool results replaced by a note in the prompt.
        ended: ``submitted``, ``repaired``, ``no_report``, ``contract_invalid``,
            ``llm_error``, ``time_budget``, ``context_overflow`` or ``prompt_budget``.
        stopped_by: what ended the exploring before the final call, or None:
            ``step_budget``, ``token_budget``, ``tool_call_budget`` or ``repeated_call``.
        confidence: the accepted report's confidence, or None.
        error: why the agent did not decide, or None when it did.
        rankings: how each ``list_data_sets`` ranking of a large catalog was made
            (decision model or lexical fallback, and why), one per query.
    """

    model: str
    steps: int = 0
    tool_calls: int = 0
    cache_hits: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = 0.0
    compacted: int = 0
    ended: str = ""
    stopped_by: str | None = None
    confidence: str | None = None
    error: str | None = None
    rankings: list[dict[str, Any]] = field(default_factory=list)

    def count(self, reply: ChatReply) -> None:
        """Add one model call's tokens and cost."""
        self.steps += 1
        self.input_tokens += reply.input_tokens
        self.output_tokens += reply.output_tokens
        if self.cost_usd is not None and reply.cost_usd is not None:
            self.cost_usd += reply.cost_usd
        else:
            self.cost_usd = None

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON-safe counters."""
        return dict(self.__dict__)


COST_UNKNOWN = "cost unknown (no usage.cost sent; see llm.prices_usd_per_mtok)"
NO_CALL = "no model call completed"


def cost_text(steps: int, cost_usd: float | None) -> str:
    """How an agent's cost is shown, the same in the terminal, eval and the review page.

    Args:
        steps: model calls completed (``AgentStats.steps``).
        cost_usd: their summed cost in USD, None when any one's cost was unknown.

    Returns:
        ``$0.0031``; ``cost unknown (…)`` when the provider sent no ``usage.cost``
        and no price is configured; ``no model call completed`` when no call
        completed (the endpoint failed), never ``$0.0000`` for what was not measured.
    """
    if not steps:
        return NO_CALL
    if cost_usd is None:
        return COST_UNKNOWN
    return f"${cost_usd:.4f}"


@dataclass
class AgentResult:
    """What the loop produced: the agent's report that passed the contract, or None and why not."""

    report: SubmittedReport | None
    evidence: list[Evidence]
    stats: AgentStats
    why: str | None = None

    def trace_end(self, trace: TraceSink, accepted: AcceptedReport | None) -> None:
        """Write the agent's last events once the finding is decided (``checks.run``).

        ``report_accepted`` (the report as it stands: its finding, who decided
        it, the override's reason) when the agent gave one, then ``agent_end``
        with the counters; written now, before the run's next wait.
        """
        if self.report is not None and accepted is not None:
            trace.note(
                "report_accepted",
                {
                    "finding": str(accepted.finding),
                    "finding_source": str(accepted.finding_source),
                    "evidence": accepted.evidence,
                    "confidence": accepted.confidence,
                    "override_reason": accepted.override_reason,
                },
            )
        trace.append("agent_end", self.stats.to_dict())
