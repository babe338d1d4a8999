"""A scripted, OpenAI-compatible chat-completions server for tests and dry runs.

It speaks real HTTP on 127.0.0.1 and the chat-completions wire format
(``POST /v1/chat/completions``; response ``{id, object: "chat.completion",
created, model, choices: [{index, message: {role, content, tool_calls},
finish_reason, logprobs}], usage: {prompt_tokens, completion_tokens,
total_tokens[, cost]}}``, the shape documented in OpenAI's API reference, with
OpenRouter's optional ``usage.cost`` in USD). Nothing here is a model: every
answer comes from the script.

A script is a list of steps, answered in order, one per request. A step is a
mapping (or, in-process only, a callable taking the request body and returning
a mapping):

- ``{"tool_calls": [{"name": N, "arguments": {...} | "raw text", "id"?: ID}]}``:
  an assistant message with tool calls (``finish_reason`` ``tool_calls``). A
  string ``arguments`` is sent unchanged, so malformed JSON can be scripted.
- ``{"content": "text"}``: a plain assistant message (``finish_reason`` ``stop``).
  Both keys may be given together.
- ``{"error": {"status": 429, "headers": {"Retry-After": "1"}, "body": {...}}}``:
  an HTTP error with those headers and JSON body.
- optional in any answer: ``"finish_reason"``, ``"usage"`` (merged over the
  estimate: prompt ≈ request chars / 4, completion ≈ message chars / 4), and
  ``"delay_s"`` (sleep before answering).

When the script runs out, ``default`` (a step, or None) answers every further
request; without it the server answers HTTP 400 ``fake LLM script exhausted``
so an over-long conversation fails loudly instead of looping.

Run from another process with
``python -m checks.fake_llm --port N --script FILE [--log FILE]``; the script
file is JSON or YAML holding a list of steps or ``{steps: [...], default: {...}}``,
and ``--log`` appends every request received as one JSON line.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import yaml

Step = Mapping[str, Any] | Callable[[dict[str, Any]], Mapping[str, Any]]


@dataclass(frozen=True)
class RecordedRequest:
    """One request the fake received: path, headers (lower-case names) and JSON body."""

    path: str
    headers: dict[str, str]
    body: dict[str, Any]


class FakeLLM:
    """The scripted server; a context manager that starts and stops it.

    Args:
        script: the steps, answered in order.
        default: the step answering every request after the script ran out.
        port: TCP port on 127.0.0.1; 0 picks a free one (see ``base_url``).
        log_path: when set, every request is also appended to this file as a JSON line.
    """

    def __init__(
        self,
        script: Sequence[Step] = (),
        *,
        default: Step | None = None,
        port: int = 0,
        log_path: str | Path | None = None,
    ) -> None:
        self.script = list(script)
        self.default = default
        self.requests: list[RecordedRequest] = []
        self.log_path = Path(log_path) if log_path else None
        self._lock = threading.Lock()
        self._served = 0
        self._server = _Server(("127.0.0.1", port), _handler_for(self))
        self._server.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        """The TCP port the server listens on."""
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        """The OpenAI base URL to configure, e.g. ``http://127.0.0.1:5123/v1``."""
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def chat_requests(self) -> list[dict[str, Any]]:
        """The bodies of the chat-completions requests received so far, in order."""
        return [r.body for r in self.requests if r.path.endswith("/chat/completions")]

    def start(self) -> FakeLLM:
        """Serve in a daemon thread; return self."""
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the socket."""
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> FakeLLM:
        return self.start()

    def __exit__(self, *_: object) -> None:
        self.stop()

    def serve_forever(self) -> None:
        """Serve in the calling thread until interrupted, then close the socket."""
        try:
            self._server.serve_forever()
        except KeyboardInterrupt:
            pass
        finally:
            self._server.server_close()

    def next_step(self, record: RecordedRequest) -> tuple[int, Mapping[str, Any] | None]:
        """Record a request; return its serial (1-based) and the step answering it.

        The step is None when the script is exhausted and there is no default.
        """
        with self._lock:
            self.requests.append(record)
            serial = len(self.requests)
            if self.log_path is not None:
                with self.log_path.open("a", encoding="utf-8") as log:
                    log.write(json.dumps({"path": record.path, "body": record.body}) + "\n")
            in_script = self._served < len(self.script)
            step = self.script[self._served] if in_script else self.default
            self._served += 1
        if step is None:
            return serial, None
        return serial, (step(record.body) if callable(step) else step)


def completion(step: Mapping[str, Any], body: Mapping[str, Any], serial: int) -> dict[str, Any]:
    """Build the chat-completion JSON answering ``body`` from one scripted step."""
    message: dict[str, Any] = {"role": "assistant", "content": step.get("content")}
    calls = []
    for i, call in enumerate(step.get("tool_calls") or [], start=1):
        args = call.get("arguments", {})
        calls.append(
            {
                "id": call.get("id") or f"call_{serial}_{i}",
                "type": "function",
                "function": {
                    "name": call["name"],
                    "arguments": args if isinstance(args, str) else json.dumps(args),
                },
            }
        )
    if calls:
        message["tool_calls"] = calls
    prompt_tokens = len(json.dumps(body.get("messages", []))) // 4
    completion_tokens = len(json.dumps(message)) // 4 + 1
    usage: dict[str, Any] = {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
    }
    usage.update(step.get("usage") or {})
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


class _Server(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        """Stay quiet when a client hung up first (a client-side timeout in a test)."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


def _handler_for(fake: FakeLLM) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            """Keep test output quiet."""

        def _send(
            self, status: int, payload: Any, headers: Mapping[str, str] | None = None
        ) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in (headers or {}).items():
                self.send_header(name, str(value))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            if self.path.rstrip("/").endswith("/models"):
                self._send(200, {"object": "list", "data": [{"id": "fake", "object": "model"}]})
            else:
                self._send(404, {"error": {"message": f"no route {self.path}"}})

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            if not self.path.rstrip("/").endswith("/chat/completions"):
                self._send(404, {"error": {"message": f"no route {self.path}"}})
                return
            try:
                body = json.loads(raw or b"{}")
            except json.JSONDecodeError:
                self._send(400, {"error": {"message": "request body is not JSON"}})
                return
            headers = {k.lower(): v for k, v in self.headers.items()}
            record = RecordedRequest(self.path, headers, body)
            serial, step = fake.next_step(record)
            if step is None:
                self._send(400, {"error": {"message": "fake LLM script exhausted"}})
                return
            if step.get("delay_s"):
                time.sleep(float(step["delay_s"]))
            error = step.get("error")
            if error is not None:
                payload = error.get("body") or {"error": {"message": f"HTTP {error['status']}"}}
                self._send(int(error["status"]), payload, error.get("headers"))
                return
            self._send(200, completion(step, body, serial))

    return Handler


def load_script(path: str | Path) -> tuple[list[Step], Step | None]:
    """Read a script file (JSON or YAML): a list of steps or ``{steps, default}``.

    Raises:
        ValueError: the file holds neither shape.
    """
    data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    if isinstance(data, list):
        return data, None
    if isinstance(data, dict) and isinstance(data.get("steps", []), list):
        return list(data.get("steps", [])), data.get("default")
    raise ValueError(f"{path}: a script is a list of steps or a mapping with 'steps'")


def main(argv: Sequence[str] | None = None) -> None:
    """Serve a script file until interrupted; print the base URL first."""
    parser = argparse.ArgumentParser(prog="python -m checks.fake_llm", description=__doc__)
    parser.add_argument("--port", type=int, default=0, help="TCP port on 127.0.0.1 (0: any free)")
    parser.add_argument("--script", required=True, help="JSON or YAML script file")
    parser.add_argument("--log", help="append every request received to this JSONL file")
    args = parser.parse_args(argv)
    steps, default = load_script(args.script)
    fake = FakeLLM(steps, default=default, port=args.port, log_path=args.log)
    print(fake.base_url, flush=True)
    fake.serve_forever()


if __name__ == "__main__":
    main()
