"""A scripted, OpenAI-compatible chat-completions server for tests and dry runs.

It speaks real HTTP on 127.0.0.1 and the chat-completions wire format
(``POST /v1/chat/completions``; response ``{id, object: "chat.completion",
created, model, choices: [{index, message: {role, content, tool_calls},
finish_reason, logprobs}], usage: {prompt_tokens, completion_tokens,
total_tokens, prompt_tokens_details, completion_tokens_details[, cost]}}``,
the shape of the ``openai`` package's ``ChatCompletion``, with OpenRouter's
optional ``usage.cost`` in USD), and ``GET /v1/models`` (one ``Model``,
``fake``). Nothing here is a model: every answer comes from the script.

A script is a list of steps, answered in order, one per request. A step is a
mapping (or, in-process only, a callable taking the request body and returning
a mapping):

- ``{"tool_calls": [{"name": N, "arguments": {...} | "raw text", "id"?: ID}]}``:
  an assistant message with tool calls (``finish_reason`` ``tool_calls``). A
  string ``arguments`` is sent unchanged, so malformed JSON can be scripted;
  with ``"as_object": true`` an object is sent as a JSON object, not as text
  (as Ollama's OpenAI-compatible endpoint does).
- ``{"content": "text"}``: a plain assistant message (``finish_reason`` ``stop``).
  Both keys may be given together.
- ``{"error": {"status": 429, "headers": {"Retry-After": "1"}, "body": {...}}}``:
  an HTTP error with those headers and JSON body.
- optional in any answer: ``"finish_reason"``, ``"usage"`` (merged over the
  estimate: prompt ≈ request chars / 4, completion ≈ message chars / 4), and
  ``"delay_s"`` (sleep before answering).

When the script runs out, ``default`` (a step, or None) answers every further
request; without it the server answers HTTP 400 ``fake LLM script exhausted``
so an over-long conversation fails loudly instead of looping. With ``repeat``
the script starts over at each new conversation — a request whose messages
hold no assistant turn yet — and when it ran out, so every run of an
automation gets the whole script.

Run from another process with
``python -m checks.fakes.llm_server --port N --script FILE [--repeat] [--log FILE]``;
the script file is JSON or YAML holding a list of steps or
``{steps: [...], default: {...}}``, and ``--log`` appends every request
received as one JSON line.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from checks.fakes.openai_wire import chat_usage, model_list
from checks.fakes.scripted_server import FakeServer, Response, load_script
from checks.fakes.scripted_server import RecordedRequest as RecordedRequest
from checks.fakes.scripted_server import Step as Step


class FakeLLM(FakeServer):
    """The scripted server; a context manager that starts and stops it.

    Args:
        script: the steps, answered in order.
        default: the step answering every request after the script ran out.
        port: TCP port on 127.0.0.1; 0 picks a free one (see ``base_url``).
        log_path: when set, every request is also appended to this file as a JSON line.
        repeat: start the script over at each new conversation (no assistant
            message yet) and when it ran out, instead of answering ``default``.
        strict: refuse what llama-cpp-python's server refuses, and answer in its
            shape (``strict_refusal``, ``strict_answer``), so the fast tests
            catch what a real local server breaks on. The default; False gives
            the looser OpenAI shape (refusal field, token details).
        n_ctx: the context window, in estimated tokens, of the strict mode.
    """

    name = "fake LLM"

    def __init__(
        self,
        script: Sequence[Step] = (),
        *,
        default: Step | None = None,
        port: int = 0,
        log_path: str | Path | None = None,
        repeat: bool = False,
        strict: bool = True,
        n_ctx: int = 8192,
    ) -> None:
        super().__init__(script, default=default, port=port, log_path=log_path, repeat=repeat)
        self.strict = strict
        self.n_ctx = n_ctx

    @property
    def base_url(self) -> str:
        """The OpenAI base URL to configure, e.g. ``http://127.0.0.1:5123/v1``."""
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def chat_requests(self) -> list[dict[str, Any]]:
        """The bodies of the chat-completions requests received so far, in order."""
        return [r.body for r in self.requests if r.path.endswith("/chat/completions")]

    def accepts(self, path: str) -> bool:
        """Serve ``POST …/chat/completions`` only."""
        return path.rstrip("/").endswith("/chat/completions")

    def respond(self, step: Mapping[str, Any], body: Mapping[str, Any], serial: int) -> Response:
        """A scripted HTTP error, or the chat completion built from ``step``."""
        error = step.get("error")
        if error is not None:
            payload = error.get("body") or {"error": {"message": f"HTTP {error['status']}"}}
            return int(error["status"]), payload, error.get("headers")
        answer = completion(step, body, serial)
        return 200, strict_answer(answer) if self.strict else answer, None

    def refuse(self, body: Mapping[str, Any]) -> Response | None:
        """In strict mode, what llama-cpp-python's server refuses (``strict_refusal``)."""
        return strict_refusal(body, self.n_ctx) if self.strict else None

    def starts_over(self, body: Mapping[str, Any]) -> bool:
        """A conversation starts with a request holding no assistant message yet."""
        messages = body.get("messages")
        if not isinstance(messages, list):
            return False
        return not any(isinstance(m, dict) and m.get("role") == "assistant" for m in messages)

    def get(self, path: str) -> Response | None:
        """``GET …/models``: the model list, one model named ``fake``."""
        return (200, model_list(["fake"]), None) if path.rstrip("/").endswith("/models") else None


def completion(step: Mapping[str, Any], body: Mapping[str, Any], serial: int) -> dict[str, Any]:
    """Build the chat-completion JSON answering ``body`` from one scripted step."""
    message: dict[str, Any] = {
        "role": "assistant",
        "content": step.get("content"),
        "refusal": None,
    }
    calls = []
    for i, call in enumerate(step.get("tool_calls") or [], start=1):
        args = call.get("arguments", {})
        calls.append(
            {
                "id": call.get("id") or f"call_{serial}_{i}",
                "type": "function",
                "function": {
                    "name": call["name"],
                    "arguments": args
                    if isinstance(args, str) or call.get("as_object")
                    else json.dumps(args),
                },
            }
        )
    if calls:
        message["tool_calls"] = calls
    prompt_tokens = len(json.dumps(body.get("messages", []))) // 4
    completion_tokens = len(json.dumps(message)) // 4 + 1
    usage = chat_usage(prompt_tokens, completion_tokens, step.get("usage"))
    return {
        "id": f"chatcmpl-fake-{serial}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model", "fake"),
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": step.get("finish_reason") or ("tool_calls" if calls else "stop"),
                "logprobs": None,
            }
        ],
        "usage": usage,
    }


def _error(status: int, message: str, kind: str, code: str | None) -> Response:
    """llama-cpp-python's error body (``llama_cpp/server/errors.py``: ``ErrorResponse``)."""
    error = {"message": message, "type": kind, "param": "messages" if code else None, "code": code}
    return status, {"error": error}, None


def strict_refusal(body: Mapping[str, Any], n_ctx: int) -> Response | None:
    """The error llama-cpp-python's server (chatml-function-calling) gives ``body``, or None.

    - an assistant message whose ``content`` is null or missing: HTTP 500 (its
      request model matches no message type and the error is not mapped to a
      400: seen against llama-cpp-python 0.3.36, "7 validation errors: …
      Input should be 'system'"; ``""`` is accepted);
    - a prompt of ``n_ctx`` tokens or more (estimated: characters / 4): HTTP 400
      ``context_length_exceeded``;
    - stricter than the server: no ``max_tokens`` is HTTP 400, since without it
      the server writes until its context is full.
    """
    messages = body.get("messages") or []
    for i, message in enumerate(messages):
        if message.get("role") == "assistant" and not isinstance(message.get("content"), str):
            return _error(
                500,
                f"validation errors: ('body', 'messages', {i}): an assistant message's content"
                " must be a string",
                "internal_server_error",
                None,
            )
    prompt = len(json.dumps(messages)) // 4
    if prompt >= n_ctx:
        asked = prompt + int(body.get("max_tokens") or 0)
        return _error(
            400,
            f"This model's maximum context length is {n_ctx} tokens. However, you requested "
            f"{asked} tokens ({prompt} in the messages, {body.get('max_tokens')} in the "
            "completion). Please reduce the length of the messages or completion.",
            "invalid_request_error",
            "context_length_exceeded",
        )
    if not isinstance(body.get("max_tokens"), int):
        return _error(400, "strict fake: max_tokens is required", "invalid_request_error", None)
    return None


_GENERATED_ID = re.compile(r"call_\d+_\d+")


def strict_answer(answer: dict[str, Any]) -> dict[str, Any]:
    """A completion in llama-cpp-python's shape: ~60-character call ids, three usage counts.

    Its message has no ``refusal`` and its ``usage`` no token details (a
    script's own ``usage`` keys, such as ``cost``, stay).
    """
    choice = answer["choices"][0]
    message = {k: v for k, v in choice["message"].items() if k != "refusal"}
    for call in message.get("tool_calls") or []:
        if _GENERATED_ID.fullmatch(call["id"]):  # a scripted id is sent as written
            digest = hashlib.sha256(f"{answer['id']}/{call['id']}".encode()).hexdigest()
            call["id"] = f"call__{digest[:54]}"  # 60 characters, unique per call
    usage = answer["usage"]
    return {
        **answer,
        "choices": [{**choice, "message": message}],
        # the three counts, and whatever the script added (OpenRouter's cost)
        "usage": {k: v for k, v in usage.items() if not k.endswith("_details")},
    }


_AUTOMATION = re.compile(r"^Automation: (.+)$", re.M)
_FENCED = re.compile(r"```json\n(.*)\n```", re.S)


def one_query_agent(queries: Mapping[str, str]) -> Callable[[Mapping[str, Any]], dict[str, Any]]:
    """A step (for ``default``) that plays a two-call agent, per automation.

    Its first answer in a conversation calls ``execute_query`` with
    ``queries[automation]`` (the automation named in the first user message);
    once the result is back it calls ``submit_report``, citing ``Q1``:
    ``clear`` when the query returned no rows or a first cell of 0, else
    ``needs_attention``. Nothing here is a model: it is a fixed rule, so the
    same data always gives the same finding.
    """

    def step(body: Mapping[str, Any]) -> dict[str, Any]:
        messages = body.get("messages") or []
        opening = next((m.get("content") or "" for m in messages if m.get("role") == "user"), "")
        named = _AUTOMATION.search(opening)
        sql = queries.get(named.group(1).strip() if named else "", "SELECT 1")
        results = [m for m in messages if m.get("role") == "tool"]
        if not results:
            return {"tool_calls": [{"name": "execute_query", "arguments": {"sql": sql}}]}
        fenced = _FENCED.search(results[-1].get("content") or "")
        result = json.loads(fenced.group(1)) if fenced else {}
        rows = result.get("rows") or []
        quiet = not rows or rows[0][:1] == [0]
        finding = "clear" if quiet else "needs_attention"
        summary = (
            f"The query returned {result.get('row_count', 0)} rows [Q1]."
            if "error" not in result
            else "The query failed."
        )
        report = {"finding": finding, "summary": summary, "evidence": ["Q1"], "confidence": "high"}
        return {"tool_calls": [{"name": "submit_report", "arguments": report}]}

    return step


def main(argv: Sequence[str] | None = None) -> None:
    """Serve a script file until interrupted; print the base URL first."""
    parser = argparse.ArgumentParser(prog="python -m checks.fakes.llm_server", description=__doc__)
    parser.add_argument("--port", type=int, default=0, help="TCP port on 127.0.0.1 (0: any free)")
    parser.add_argument("--script", required=True, help="JSON or YAML script file")
    parser.add_argument("--log", help="append every request received to this JSONL file")
    parser.add_argument(
        "--repeat",
        action="store_true",
        help="start the script over at each new conversation (every run gets all of it)",
    )
    parser.add_argument(
        "--lenient",
        action="store_true",
        help="accept what llama-cpp-python's server refuses (strict is the default)",
    )
    args = parser.parse_args(argv)
    steps, default = load_script(args.script)
    fake = FakeLLM(
        steps,
        default=default,
        port=args.port,
        log_path=args.log,
        repeat=args.repeat,
        strict=not args.lenient,
    )
    print(fake.base_url, flush=True)
    fake.serve_forever()


if __name__ == "__main__":
    main()
