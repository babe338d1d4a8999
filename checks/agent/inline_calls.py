"""Tool calls a model wrote into ``content`` instead of ``tool_calls``.

Some providers and chat templates (docs/design.md, The agent's tools) return a tool call as
text. ``tool_calls_in_content`` recognises exactly the formats listed in its
docstring and nothing else: anything else stays text. No guessing.
``text_call_format`` only names the format of a call written as text that was
not recognised, so the run can say so instead of "did not call submit_report".
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


# Markers of tool calls written as text, by the chat template that writes them.
_TEXT_CALL_FORMATS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("<tool_call> tags (Hermes, Qwen)", re.compile(r"<tool_call>|</tool_call>")),
    ("[TOOL_CALLS] (Mistral)", re.compile(r"\[TOOL_CALLS\]")),
    ("<|python_tag|> (Llama 3)", re.compile(r"<\|python_tag\|>")),
    ("<function=…> (Llama 3.1)", re.compile(r"<function=[\w.-]+>")),
    ("<｜tool▁calls▁begin｜> (DeepSeek)", re.compile(r"<｜tool▁call")),
    ("<|tool_call|> (Phi, Granite)", re.compile(r"<\|tool_calls?\|>")),
    ("```tool_code (Gemma)", re.compile(r"```tool_code")),
    ("functools[…] (Firefunction)", re.compile(r"functools\[")),
    (
        'a JSON {"name": …, "arguments": …} object',
        re.compile(r'\{\s*"(?:name|function)"\s*:\s*"[^"]+"\s*,\s*"(?:arguments|parameters)"'),
    ),
)


def text_call_format(content: str | None) -> str | None:
    """Return the format of a tool call written into ``content`` as text, or None.

    Only for content ``tool_calls_in_content`` did not take: it says which
    chat template's markers the text holds (``<tool_call>`` tags with broken
    JSON, Mistral's ``[TOOL_CALLS]``, Llama's ``<|python_tag|>``, a JSON call of
    a tool not offered, …), so the error can say what the model did.
    """
    if not content:
        return None
    for label, pattern in _TEXT_CALL_FORMATS:
        if pattern.search(content):
            return label
    return None
