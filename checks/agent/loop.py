"""The agent loop: the model explores the data with read-only tools and reports.

One run, in order:

1. The system prompt (``checks.agent.prompt.system_prompt``) and a first user
   message holding the goal, the instructions and the declared checks'
   results, fenced as untrusted data.
2. Up to ``llm.max_steps`` model calls. The read tool calls of one turn run
   concurrently (``llm.max_parallel_tools`` threads); an identical call (same
   tool, same arguments) is answered from the run's cache and counted in
   ``cache_hits``; ``llm.repeat_limit`` identical consecutive calls stop the
   exploring. Before each call, past ``llm.compact_after_tokens`` (estimated
   as characters / 4) the oldest tool results in the prompt are replaced by a
   short note; the tool call and its (shortened) result stay together and the
   trace keeps the full result.
3. When the steps run out, the prompt passes ``llm.max_prompt_tokens`` or the
   calls repeat: one final call offering only ``submit_report`` and forcing it
   with ``tool_choice``. (When the automation's time limit has run out there
   is no final call.)
4. A ``submit_report`` call is checked by ``checks.agent.contract``; an invalid one
   gets exactly one repair turn (the problems sent back, ``submit_report``
   forced). A valid one ends the loop.

The loop decides nothing: it returns what the agent said once it passed the
contract (``AgentResult.report``), or None and ``why`` says why not. The run
path (``checks.run``) decides the finding from it (``checks.finding.decide``)
and then writes ``report_accepted`` and ``agent_end`` to the trace.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Sequence
from typing import Any

from checks.agent.chat_client import ChatClient, ChatReply, Message, RetryNote, ToolCall
from checks.agent.contract import SubmittedReport, read_report, repair_request, verify
from checks.agent.inline_calls import text_call_format
from checks.agent.prompt import (
    FINAL_CALL,
    NO_TOOL_CALL,
    AgentTask,
    estimate_tokens,
    first_message,
    system_prompt,
    tool_message,
)
from checks.agent.prompt_budget import PromptBudget
from checks.agent.result import AgentResult, AgentStats
from checks.agent.tool_calls import Dispatcher, Turn
from checks.agent.tool_caps import cap_calls
from checks.agent.tools import ToolBox
from checks.agent.toolspec import SUBMIT_REPORT, TOOL_SCHEMAS
from checks.agent.trace import TraceSink
from checks.errors import ContextOverflowError, LLMError
from checks.opinion.backends import make_decision_model
from checks.opinion.decision_model import DecisionModel
from checks.report import CheckResult, Evidence
from checks.settings.config import Settings
from checks.sources import Source

FORCE_SUBMIT = {"type": "function", "function": {"name": SUBMIT_REPORT}}
SUBMIT_ONLY = [t for t in TOOL_SCHEMAS if t["function"]["name"] == SUBMIT_REPORT]


class _Failed(Exception):
    """Internal: the loop ends without a report (``ended``, ``why``)."""

    def __init__(self, ended: str, why: str) -> None:
        super().__init__(why)
        self.ended = ended
        self.why = why


class AgentLoop:
    """One agent run; see the module docstring. Use ``run_agent``."""

    def __init__(
        self,
        task: AgentTask,
        source: Source,
        settings: Settings,
        *,
        checks: Sequence[CheckResult],
        check_evidence: Sequence[Evidence],
        trace: TraceSink,
        model: str | None,
        deadline: float | None,
        ranker: DecisionModel | None = None,
    ) -> None:
        self.task, self.settings, self.llm = task, settings, settings.llm
        self.written_call: str | None = None  # a tool call the model wrote as text, unread
        self.check_ids = {e.id for e in check_evidence}
        self.trace = trace
        self.deadline = deadline
        self.client = ChatClient(
            settings.llm, model=model, secrets=settings.secrets(), on_retry=self._on_retry
        )
        self.stats = AgentStats(model=self.client.model or "")
        self.tools = ToolBox(
            source,
            goal=task.goal,
            limits=settings.limits,
            list_cap=self.llm.list_cap,
            deadline=deadline,
            ranker=ranker,
            timezone=task.timezone,
        )
        limits = settings.limits
        self.messages: list[Message] = [
            {
                "role": "system",
                "content": system_prompt(
                    task, max_steps=self.llm.max_steps, max_rows=limits.max_rows
                ),
            },
            {"role": "user", "content": first_message(task, checks, check_evidence)},
        ]
        self.dispatcher = Dispatcher(
            self.tools,
            trace,
            max_workers=self.llm.max_parallel_tools,
            repeat_limit=self.llm.repeat_limit,
        )
        self._sent = 0
        self.budget = PromptBudget(
            self.messages, self.dispatcher.results, self.llm, self.stats, trace
        )
        self._dropped = ""  # what the next message says of the calls the cap dropped

    @property
    def known_ids(self) -> set[str]:
        """Ids citable now: declared checks that ran and the agent's successful queries."""
        return self.check_ids | {e.id for e in self.tools.evidence}

    def run(self) -> AgentResult:
        """Run the loop to a verified report or a reason why there is none.

        Writes every event up to the report; ``report_accepted`` and
        ``agent_end`` follow from the run path once the finding is decided.
        """
        self.trace.note(
            "agent_start",
            {
                "model": self.stats.model,
                "max_steps": self.llm.max_steps,
                "tools": [t["function"]["name"] for t in TOOL_SCHEMAS],
            },
        )
        report: SubmittedReport | None = None
        why: str | None = None
        with self.dispatcher, self.client:
            try:
                report = self._explore()
            except _Failed as failed:
                self.stats.ended, why = failed.ended, failed.why
            except LLMError as exc:
                detail = f": {' '.join(exc.body.split())[:300]}" if exc.body else ""
                self.stats.ended, why = "llm_error", f"the LLM endpoint failed: {exc}{detail}"
                self.trace.note(
                    "model_error", {"error": str(exc), "status": exc.status, "body": exc.body}
                )
            except BaseException:
                # an unexpected error: keep the noted events; the error is what propagates
                with contextlib.suppress(Exception):
                    self.trace.flush()
                raise
        self.stats.error = why
        self.stats.tool_calls = self.dispatcher.calls
        self.stats.cache_hits = self.dispatcher.cache_hits
        self.stats.rankings = list(self.tools.rankings)
        return AgentResult(report, list(self.tools.evidence), self.stats, why)

    # -- the loop ------------------------------------------------------------

    def _explore(self) -> SubmittedReport:
        while self.stats.steps < self.llm.max_steps:
            if self._time_left() <= 0:
                raise _Failed(
                    "time_budget", "the automation's time limit ran out before the agent reported"
                )
            self.budget.compact_old()
            if estimate_tokens(self.messages) >= self.llm.max_prompt_tokens:
                self.stats.stopped_by = "token_budget"
                break
            reply = self._ask(TOOL_SCHEMAS, "auto")
            if not reply.tool_calls:
                self.written_call = text_call_format(reply.content) or self.written_call
            if reply.input_tokens >= self.llm.max_prompt_tokens:
                self.stats.stopped_by = "token_budget"
            turn = self._answer(reply)
            submits = [c for c in reply.tool_calls if c.name == SUBMIT_REPORT]
            if submits:
                return self._take_report(reply, submits, turn)
            if self.dispatcher.calls >= self.llm.max_tool_calls_per_run:
                self.stats.stopped_by = "tool_call_budget"
            if self.stats.stopped_by or turn.repeated:
                self.stats.stopped_by = self.stats.stopped_by or "repeated_call"
                break
        else:
            self.stats.stopped_by = "step_budget"
        return self._final_call()

    def _final_call(self) -> SubmittedReport:
        if self._time_left() <= 0:
            raise _Failed(
                "time_budget", "the automation's time limit ran out before the agent reported"
            )
        self.messages.append({"role": "user", "content": FINAL_CALL})
        reply = self._ask(SUBMIT_ONLY, FORCE_SUBMIT)
        turn = self._answer(reply, reads_allowed=False)
        submits = [c for c in reply.tool_calls if c.name == SUBMIT_REPORT]
        if not submits:
            written = text_call_format(reply.content) or self.written_call
            if written is not None:
                raise _Failed(
                    "no_report",
                    f"the model wrote a tool call as text, as {written}, which is not a format"
                    " Lookout reads, instead of calling submit_report"
                    f" ({self.stats.stopped_by}, {self.stats.steps} model calls)",
                )
            raise _Failed(
                "no_report",
                f"the agent did not call submit_report ({self.stats.stopped_by}, "
                f"{self.stats.steps} model calls)",
            )
        return self._take_report(reply, submits, turn)

    def _take_report(
        self, reply: ChatReply, submits: list[ToolCall], turn: Turn
    ) -> SubmittedReport:
        problems, report = self._check_submission(submits)
        if report is not None and not problems:
            return self._accepted(report, repaired=False)
        self.trace.note("report_rejected", {"problems": problems, "repair": True})
        self._respond(reply, turn, {"error": repair_request(problems, self.known_ids)})
        repair = self._ask(SUBMIT_ONLY, FORCE_SUBMIT)
        turn = self._answer(repair, reads_allowed=False)
        submits = [c for c in repair.tool_calls if c.name == SUBMIT_REPORT]
        problems, report = self._check_submission(submits)
        if report is not None and not problems:
            return self._accepted(report, repaired=True)
        self.trace.note("report_rejected", {"problems": problems, "repair": False})
        raise _Failed(
            "contract_invalid",
            "the agent's report was still invalid after one repair turn: " + "; ".join(problems),
        )

    def _check_submission(
        self, submits: list[ToolCall]
    ) -> tuple[list[str], SubmittedReport | None]:
        if not submits:
            return ["submit_report was not called"], None
        if len(submits) > 1:
            return [
                f"submit_report was called {len(submits)} times in one turn; call it exactly once"
            ], None
        report, problems = read_report(submits[0].arguments)
        if report is None:
            return problems, None
        return verify(report, self.known_ids), report

    def _accepted(self, report: SubmittedReport, *, repaired: bool) -> SubmittedReport:
        self.stats.ended = "repaired" if repaired else "submitted"
        self.stats.confidence = report.confidence
        return report

    # -- one model call --------------------------------------------------------

    def _ask(self, tools: list[dict[str, Any]], tool_choice: Any) -> ChatReply:
        self.trace.append(
            "model_request",
            {
                "step": self.stats.steps + 1,
                "model": self.stats.model,
                "tool_choice": tool_choice,
                "tools": [t["function"]["name"] for t in tools],
                "message_count": len(self.messages),
                "messages": self.messages[self._sent :],
            },
        )
        self._sent = len(self.messages)
        too_big = self.budget.fit()
        if too_big is not None:
            raise _Failed("prompt_budget", too_big)
        while True:
            try:
                reply = self.client.complete(
                    self.messages, tools, tool_choice, deadline=self.deadline
                )
                break
            except ContextOverflowError as exc:
                gone = self.budget.shrink(exc.body)
                if gone is not None:
                    raise _Failed("context_overflow", gone) from None
        self.stats.count(reply)
        reply = self._capped(reply)
        self.trace.note("model_response", {"step": self.stats.steps, **reply.to_trace()})
        self.messages.append(reply.assistant_message())
        return reply

    def _capped(self, reply: ChatReply) -> ChatReply:
        """The turn within the caps on tool calls (``checks.agent.tool_caps``)."""
        capped = cap_calls(
            reply,
            per_turn=self.llm.max_tool_calls_per_turn,
            per_run=self.llm.max_tool_calls_per_run,
            made=self.dispatcher.calls,
        )
        if capped.trace is not None:
            self.trace.note("tool_calls_dropped", capped.trace)
            self._dropped = capped.note
        return capped.reply

    def _on_retry(self, note: RetryNote) -> None:
        self.trace.append(
            "model_retry",
            {
                "attempt": note.attempt,
                "status": note.status,
                "wait_s": note.wait_s,
                "reason": note.reason,
            },
        )

    # -- tool calls --------------------------------------------------------------

    def _answer(self, reply: ChatReply, *, reads_allowed: bool = True) -> Turn:
        """Answer the turn's calls (all but ``submit_report``) and append their results."""
        if not reply.tool_calls:
            self.messages.append({"role": "user", "content": NO_TOOL_CALL})
            return Turn()
        turn = self.dispatcher.dispatch(reply.tool_calls, reads_allowed=reads_allowed)
        for call_id, result in turn.results.items():
            self.messages.append(tool_message(call_id, result))
        if self._dropped:
            self.messages.append({"role": "user", "content": self._dropped})
            self._dropped = ""
        return turn

    def _respond(self, reply: ChatReply, turn: Turn, submit_result: dict[str, Any]) -> None:
        """Answer the ``submit_report`` calls of ``reply`` (the others are answered already)."""
        for call in reply.tool_calls:
            if call.id not in turn.results:
                self.dispatcher.record(call, submit_result)
                self.messages.append(tool_message(call.id, submit_result))

    # -- budgets -----------------------------------------------------------------

    def _time_left(self) -> float:
        return float("inf") if self.deadline is None else self.deadline - time.monotonic()


def run_agent(
    task: AgentTask,
    source: Source,
    settings: Settings,
    *,
    checks: Sequence[CheckResult] = (),
    check_evidence: Sequence[Evidence] = (),
    trace: TraceSink,
    model: str | None = None,
    deadline: float | None = None,
) -> AgentResult:
    """Run the agent on one automation and return its verified report or why there is none.

    Args:
        task: goal, instructions, source name and dialect.
        source: the read-only source the tools query.
        settings: ``llm`` (endpoint and budgets), ``limits`` (query budgets), secrets.
        checks: the declared checks' results.
        check_evidence: the declared checks' ``C…`` evidence.
        trace: where every request, response, tool call and result is written as it
            happens (before the next wait at the latest; see ``checks.agent.trace``).
        model: the automation's model override (default ``settings.llm.model``).
        deadline: ``time.monotonic()`` value of the automation's time limit.

    Raises:
        LLMError: no LLM is configured (base URL or model unset). Failures of
            the endpoint during the run do not raise: they end the run with
            ``report`` None.
    """
    with make_decision_model(settings.decision) as ranker:
        loop = AgentLoop(
            task,
            source,
            settings,
            checks=checks,
            check_evidence=check_evidence,
            trace=trace,
            model=model,
            deadline=deadline,
            ranker=ranker,
        )
        return loop.run()
