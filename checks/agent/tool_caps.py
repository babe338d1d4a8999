"""How many of a turn's tool calls run: at most so many per turn, and per run.

A model can answer one turn with thousands of calls (one did: 3,000 calls ran
40 s, used 664 MB and built a next prompt of about 5.7 million tokens). The
calls past the caps never reach the conversation, the trace or the tools;
``submit_report`` is always kept; the model is told how many were dropped.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from checks.agent.chat_client import ChatReply
from checks.agent.toolspec import SUBMIT_REPORT


@dataclass(frozen=True)
class Capped:
    """A turn after the caps.

    Attributes:
        reply: the turn with only the calls that run.
        note: what the model is told of the dropped calls ("" when none were).
        trace: the ``tool_calls_dropped`` event's payload, or None.
    """

    reply: ChatReply
    note: str = ""
    trace: dict[str, Any] | None = None


def cap_calls(reply: ChatReply, *, per_turn: int, per_run: int, made: int) -> Capped:
    """Keep at most ``per_turn`` read calls of ``reply``, and no more than ``per_run - made``.

    Args:
        reply: the model's turn.
        per_turn: ``llm.max_tool_calls_per_turn``.
        per_run: ``llm.max_tool_calls_per_run``.
        made: the tool calls the run made before this turn.
    """
    left = max(0, per_run - made)
    cap = min(per_turn, left)
    reads = [c for c in reply.tool_calls if c.name != SUBMIT_REPORT]
    if len(reads) <= cap:
        return Capped(reply)
    kept = set(map(id, reads[:cap]))
    calls = [c for c in reply.tool_calls if c.name == SUBMIT_REPORT or id(c) in kept]
    received = len(reply.tool_calls)
    note = (
        f"{received - len(calls)} of the {received} tool calls of your last turn were not run:"
        f" at most {per_turn} run per turn and {per_run} per run ({left} were left)."
        " Call only what you need."
    )
    trace = {"received": received, "kept": len(calls), "cap": cap}
    return Capped(dataclasses.replace(reply, tool_calls=calls), note, trace)
