"""Tool calls a model wrote into ``content`` instead of ``tool_calls``.

Some providers and chat templates (design notes §2) return a tool call as
text. ``tool_calls_in_content`` recognises exactly the formats listed in its
docstring and nothing else: anything else stays text. No guessing.
"""

from __future__ import annotations

import json
import re
from typing import Any

_TAGGED = re.compile(r"<tool_call>\s*(.*?)\s*</tool_call>", re.DOTALL)
_FENCED = re.compile(r"\A```(?:json)?\s*\n?(.*?)\n?```\Z", re.DOTALL)


def tool_calls_in_content(content: str, offered: set[str]) -> list[tuple[str, str]]:
    """Return the tool calls written into ``content``, as (name, arguments JSON) pairs.

    Exactly these formats are recognised, and nothing else:

    1. One or more ``<tool_call>{JSON}</tool_call>`` blocks (the Hermes and
       Qwen chat templates); text outside the blocks is dropped.
    2. The whole content — after trimming whitespace and one optional
       surrounding ```` ```json ```` / ```` ``` ```` fence — is one JSON object, or a
       JSON list of objects (the Llama 3.1 JSON tool-calling style).

    Each object must be ``{"name": N, "arguments": A}`` or ``{"name": N,
    "parameters": A}`` where ``N`` is one of the ``offered`` tool names and ``A``
    a JSON object or a string holding one. If any object in the content fails
    that, nothing is taken (the content stays text): no guessing.
    """
    text = content.strip()
    tagged = _TAGGED.findall(text)
    if tagged:
        candidates: list[Any] = []
        for block in tagged:
            try:
                candidates.append(json.loads(block))
            except json.JSONDecodeError:
                return []
    else:
        fenced = _FENCED.match(text)
        if fenced:
            text = fenced.group(1).strip()
        if not text.startswith(("{", "[")):
            return []
        try:
            parsed = json.loads(text)
        except json.JSONDecodeError:
            return []
        candidates = parsed if isinstance(parsed, list) else [parsed]
    calls = []
    for obj in candidates:
        call = _content_call(obj, offered)
        if call is None:
            return []
        calls.append(call)
    return calls


def _content_call(obj: Any, offered: set[str]) -> tuple[str, str] | None:
    if not isinstance(obj, dict) or set(obj) - {"name", "arguments", "parameters"}:
        return None
    name = obj.get("name")
    args = obj.get("arguments", obj.get("parameters"))
    if not isinstance(name, str) or name not in offered:
        return None
    if isinstance(args, str):
        try:
            args = json.loads(args)
        except json.JSONDecodeError:
            return None
    if not isinstance(args, dict):
        return None
    return name, json.dumps(args)
