"""The conversation kept within its budgets by compacting old tool results.

Three moments: before each exploring step past ``llm.compact_after_tokens``
(the oldest results before the last turn), before every request past
``llm.max_prompt_tokens`` (the newest results too), and after a server's
context overflow (down to half, the newest too). The trace keeps every full
result; compacted messages keep their call ids (``checks.agent.prompt.compact``).
"""

from __future__ import annotations

from typing import Any

from checks.agent.chat_client import Message
from checks.agent.prompt import compact, estimate_tokens
from checks.agent.result import AgentStats
from checks.agent.trace import TraceSink
from checks.settings.llm import LLMSettings


class PromptBudget:
    """One agent run's conversation and its budgets.

    Args:
        messages: the conversation, compacted in place.
        results: ``tool_call_id`` → (tool name, full result) of every answered call.
        llm: the budgets (``compact_after_tokens``, ``max_prompt_tokens``).
        stats: counts each result compacted (``AgentStats.compacted``).
        trace: where ``prompt_compacted`` and ``context_overflow`` are noted.
    """

    def __init__(
        self,
        messages: list[Message],
        results: dict[str, tuple[str, dict[str, Any]]],
        llm: LLMSettings,
        stats: AgentStats,
        trace: TraceSink,
    ) -> None:
        self.messages, self.results, self.llm = messages, results, llm
        self.stats, self.trace = stats, trace
        self.done: set[int] = set()

    def compact_old(self) -> None:
        """Past ``compact_after_tokens``, compact the results before the last turn."""
        replaced = compact(
            self.messages, self.results, limit_tokens=self.llm.compact_after_tokens, done=self.done
        )
        if replaced:
            self.stats.compacted += len(replaced)
            estimate = estimate_tokens(self.messages)
            self.trace.note(
                "prompt_compacted", {"replaced": replaced, "estimated_tokens": estimate}
            )

    def fit(self) -> str | None:
        """Compact to ``max_prompt_tokens``, the newest too; why it still does not fit, or None."""
        size = estimate_tokens(self.messages)
        if size <= self.llm.max_prompt_tokens:
            return None
        self._down_to(self.llm.max_prompt_tokens)
        if estimate_tokens(self.messages) <= self.llm.max_prompt_tokens:
            return None
        return (
            f"the prompt (about {size:,} tokens) does not fit llm.max_prompt_tokens"
            f" ({self.llm.max_prompt_tokens:,}), even with every tool result compacted"
        )

    def shrink(self, body: str | None) -> str | None:
        """After a context overflow, halve the estimate; why nothing was left to compact, or None.

        ``body`` is the server's error body, noted in the trace.
        """
        size = estimate_tokens(self.messages)
        replaced = self._down_to(size // 2)
        self.trace.note(
            "context_overflow", {"estimated_tokens": size, "compacted": replaced, "body": body}
        )
        if replaced:
            return None
        return (
            f"the conversation (about {size:,} tokens) no longer fits the model's context"
            " window, even with every earlier tool result compacted"
        )

    def _down_to(self, limit_tokens: int) -> int:
        replaced = compact(
            self.messages, self.results, limit_tokens=limit_tokens, done=self.done, latest_too=True
        )
        self.stats.compacted += len(replaced)
        return len(replaced)
