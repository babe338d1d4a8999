"""Answering one assistant turn's tool calls: checked, cached, concurrent, traced.

For each call, in the order the model made them: a ``tool_call`` trace event;
arguments checked against the tool's schema (``checks.agent.toolspec``); then

- bad arguments or an unknown tool: ``{error}`` with the reason;
- the same tool with the same arguments (canonical JSON) as an earlier call
  of the run: the earlier result, from the run's cache (``cache_hits``);
- otherwise the read tool runs on a worker thread, so the read calls of one
  turn run concurrently.

Results are then settled in call order (query ids follow the order of the
calls, not of completion) and written as ``tool_result`` events, whole.
``submit_report`` calls are counted but left to the caller.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from checks.agent.chat_client import ToolCall
from checks.agent.tools import ToolBox, ToolCallWork
from checks.agent.toolspec import SUBMIT_REPORT, ToolArgumentError, check_arguments
from checks.agent.trace import TraceSink

ONLY_SUBMIT = "only submit_report may be called now"


@dataclass
class Turn:
    """The results of one turn's calls, by call id (``submit_report`` calls excluded).

    ``repeated`` is True when the run's last ``repeat_limit`` calls were identical.
    """

    results: dict[str, dict[str, Any]] = field(default_factory=dict)
    repeated: bool = False


class Dispatcher:
    """Runs tool calls for one agent run. Close it (or use ``with``) to stop its threads.

    Args:
        tools: the read tools over the run's source.
        trace: where ``tool_call`` and ``tool_result`` events go.
        max_workers: threads for the read calls of one turn.
        repeat_limit: identical consecutive calls that flag ``Turn.repeated``.
    """

    def __init__(
        self, tools: ToolBox, trace: TraceSink, *, max_workers: int, repeat_limit: int
    ) -> None:
        self.tools = tools
        self.trace = trace
        self.repeat_limit = repeat_limit
        self.calls = 0
        self.cache_hits = 0
        self.results: dict[str, tuple[str, dict[str, Any]]] = {}
        self._cache: dict[str, dict[str, Any]] = {}
        self._last_key: str | None = None
        self._repeats = 0
        self._pool = ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="lookout-tool")

    def close(self) -> None:
        """Wait for running calls and stop the threads."""
        self._pool.shutdown(wait=True)

    def __enter__(self) -> Dispatcher:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def dispatch(self, calls: Sequence[ToolCall], *, reads_allowed: bool = True) -> Turn:
        """Answer every call but ``submit_report``; see the module docstring.

        Args:
            calls: the turn's tool calls, in the model's order.
            reads_allowed: False in the final and repair turns, where read
                calls are answered with an error instead of running.
        """
        turn = Turn()
        futures: dict[str, Future[ToolCallWork]] = {}
        plan: list[tuple[ToolCall, str, dict[str, Any] | None]] = []
        for call in calls:
            self.calls += 1
            self.trace.note(
                "tool_call", {"id": call.id, "name": call.name, "arguments": call.arguments}
            )
            key = f"{call.name}\x00{canonical(call.arguments)}"
            turn.repeated |= self._note_repeat(key)
            if call.name == SUBMIT_REPORT:
                continue
            try:
                args = check_arguments(call.name, call.arguments)
            except ToolArgumentError as exc:
                plan.append((call, key, {"error": str(exc)}))
                continue
            if not reads_allowed:
                plan.append((call, key, {"error": ONLY_SUBMIT}))
                continue
            if key not in self._cache and key not in futures:
                futures[key] = self._pool.submit(self.tools.run, call.name, args)
            plan.append((call, key, None))
        if futures:  # the calls are written before their results are waited for
            self.trace.flush()
        for call, key, result in plan:
            cached = result is None and key not in futures
            if result is None:
                if key in futures:
                    self._cache[key] = self.tools.settle(futures.pop(key).result())
                else:
                    self.cache_hits += 1
                result = self._cache[key]
            self.record(call, result, cached=cached)
            turn.results[call.id] = result
        return turn

    def record(self, call: ToolCall, result: dict[str, Any], *, cached: bool = False) -> None:
        """Keep a call's result for the run and write its ``tool_result`` event."""
        self.results[call.id] = (call.name, result)
        self.trace.note(
            "tool_result", {"id": call.id, "name": call.name, "cached": cached, "result": result}
        )

    def _note_repeat(self, key: str) -> bool:
        self._repeats = self._repeats + 1 if key == self._last_key else 1
        self._last_key = key
        return self._repeats >= self.repeat_limit


def canonical(arguments: str) -> str:
    """Return arguments as canonical JSON (sorted keys), or the raw text when not JSON."""
    try:
        return json.dumps(json.loads(arguments), sort_keys=True)
    except json.JSONDecodeError:
        return arguments
