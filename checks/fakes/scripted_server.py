"""What the scripted fake servers share (``fakes.llm_server``, ``fakes.decision_server``).

A ``FakeServer`` speaks real HTTP on 127.0.0.1, takes JSON ``POST`` bodies,
records every request and answers them from a script: a list of steps answered
in order, one per request, then ``default`` for every further request (without
one: HTTP 400 ``<name> script exhausted``). With ``repeat`` the script starts
over instead: from its first step when it ran out, and at each request a fake
reads as the start of a new conversation (``starts_over``), so several runs
in a row each get the whole script. A step is a mapping or, in-process
only, a callable taking the request body and returning one; any step may say
``"delay_s"`` to sleep before answering. How a step becomes a response, and
which paths are served, is each fake's own wire format: a subclass implements
``accepts`` and ``respond`` (and ``get`` for ``GET`` routes such as a model list).

Every request gets an answer, never a dropped connection, as a real API does:
a body sent with ``Content-Encoding: zstd`` (what ``typesafe-sdk`` sends for
bodies of 1 KiB or more when zstd is installed) is decoded when a zstd decoder
is importable (``compression.zstd`` from Python 3.14, else ``backports.zstd``)
and refused with 415 otherwise, like any other encoding; a body that does not
decompress, is not UTF-8 JSON or is not a JSON object is a 400; a bug in a
script (a step the fake cannot render) is a 500 saying so. Every response
carries a request id in ``request_id_header``, as the real APIs do.
"""

from __future__ import annotations

import json
import sys
import threading
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Self

import yaml

Step = Mapping[str, Any] | Callable[[dict[str, Any]], Mapping[str, Any]]
Response = tuple[int, Any, Mapping[str, str] | None]
"""An answer: HTTP status, JSON payload and extra headers (or None)."""


def _zstd_decompressor() -> Callable[[bytes], bytes] | None:
    """Return a zstd ``decompress`` function, or None when no decoder is installed."""
    try:
        from compression.zstd import decompress  # Python 3.14+
    except ImportError:
        try:
            from backports.zstd import decompress
        except ImportError:
            return None
    return decompress  # type: ignore[no-any-return]


ZSTD_DECOMPRESS = _zstd_decompressor()
"""The zstd decoder in use, or None: then a zstd body is refused with 415."""


class BadRequest(Exception):
    """A request body the fake refuses: the HTTP status and the message it answers with."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def decode_body(raw: bytes, encoding: str | None) -> dict[str, Any]:
    """Return a request body as a JSON object, after undoing its ``Content-Encoding``.

    Raises:
        BadRequest: 415 for an encoding other than ``identity`` or (with a
            decoder installed) ``zstd``; 400 for a body that does not
            decompress, is not UTF-8 JSON, or is not a JSON object.
    """
    encoding = (encoding or "identity").strip().lower()
    if encoding == "zstd" and ZSTD_DECOMPRESS is not None:
        try:
            raw = ZSTD_DECOMPRESS(raw)
        except Exception as exc:  # each decoder raises its own error type
            raise BadRequest(400, f"the zstd request body does not decompress: {exc}") from None
    elif encoding != "identity":
        raise BadRequest(415, f"Content-Encoding {encoding!r} is not supported")
    try:
        body = json.loads(raw or b"{}")
    except ValueError:  # JSONDecodeError, and UnicodeDecodeError for bytes that are not UTF-8
        raise BadRequest(400, "request body is not JSON") from None
    if not isinstance(body, dict):
        raise BadRequest(400, "request body is not a JSON object")
    return body


@dataclass(frozen=True)
class RecordedRequest:
    """One request the fake received: path, headers (lower-case names) and JSON body."""

    path: str
    headers: dict[str, str]
    body: dict[str, Any]


class FakeServerHandler(BaseHTTPRequestHandler):
    """Answers JSON ``POST`` requests from the script of ``self.server.fake``."""

    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        """Keep test output quiet."""

    def send_json(
        self, status: int, payload: Any, headers: Mapping[str, str] | None = None
    ) -> None:
        """Send ``payload`` as a JSON response with ``status``, a request id and ``headers``."""
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header(self.server.fake.request_id_header, f"req_{uuid.uuid4().hex}")
        for name, value in (headers or {}).items():
            self.send_header(name, str(value))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        """Answer a ``GET`` route of the fake (``get``), else 404."""
        answer = self.server.fake.get(self.path)
        if answer is None:
            self.send_json(404, {"error": {"message": f"no route {self.path}"}})
        else:
            self.send_json(*answer)

    def do_POST(self) -> None:
        """Record the request and send the answer of the next step (module docstring)."""
        fake = self.server.fake
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if not fake.accepts(self.path):
            self.send_json(404, {"error": {"message": f"no route {self.path}"}})
            return
        try:
            body = decode_body(raw, self.headers.get("Content-Encoding"))
        except BadRequest as exc:
            self.send_json(exc.status, {"error": {"message": exc.message}})
            return
        headers = {k.lower(): v for k, v in self.headers.items()}
        refused = fake.refuse(body)
        if refused is not None:  # recorded, but no step of the script is used
            fake.record(RecordedRequest(self.path, headers, body))
            self.send_json(*refused)
            return
        try:
            serial, step = fake.next_step(RecordedRequest(self.path, headers, body))
            if step is None:
                self.send_json(400, {"error": {"message": f"{fake.name} script exhausted"}})
                return
            if step.get("delay_s"):
                time.sleep(float(step["delay_s"]))
            answer = fake.respond(step, body, serial)
        except Exception as exc:  # a script the fake cannot render: say so, never hang up
            message = f"{fake.name} cannot answer from its script: {type(exc).__name__}: {exc}"
            self.send_json(500, {"error": {"message": message[:500]}})
            return
        self.send_json(*answer)


class _Server(ThreadingHTTPServer):
    fake: FakeServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Stay quiet when a client hung up first (a client-side timeout in a test)."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class FakeServer:
    """A scripted fake server; a context manager that starts and stops it.

    Args:
        script: the steps, answered in order.
        default: the step answering every request after the script ran out.
        port: TCP port on 127.0.0.1; 0 picks a free one.
        log_path: when set, every request is also appended to this file as a JSON line.
        repeat: start the script over when it runs out and at each new
            conversation (``starts_over``), instead of answering ``default``.
    """

    name = "fake"
    """Names the fake in the ``script exhausted`` error."""
    request_id_header = "x-request-id"
    """The response header carrying a request id (OpenAI's name; each fake may use its own)."""
    handler_class: type[FakeServerHandler] = FakeServerHandler

    def __init__(
        self,
        script: Sequence[Step] = (),
        *,
        default: Step | None = None,
        port: int = 0,
        log_path: str | Path | None = None,
        repeat: bool = False,
    ) -> None:
        self.script = list(script)
        self.default = default
        self.repeat = repeat
        self._position = 0  # the next step of the script
        self.requests: list[RecordedRequest] = []
        self.log_path = Path(log_path) if log_path else None
        self._lock = threading.Lock()
        self._server = _Server(("127.0.0.1", port), self.handler_class)
        self._server.fake = self
        self._server.daemon_threads = True
        self._thread: threading.Thread | None = None

    def accepts(self, path: str) -> bool:
        """Whether ``POST path`` is served (otherwise: 404)."""
        raise NotImplementedError

    def respond(self, step: Mapping[str, Any], body: Mapping[str, Any], serial: int) -> Response:
        """Return the response answering request ``body`` (number ``serial``) from ``step``."""
        raise NotImplementedError

    def get(self, path: str) -> Response | None:
        """Return the answer to ``GET path``, or None for 404 (no ``GET`` route by default)."""
        return None

    def refuse(self, body: Mapping[str, Any]) -> Response | None:
        """Return the error a real server answers to ``body`` before any step, or None.

        None by default: every request gets the next step.
        """
        return None

    def record(self, record: RecordedRequest) -> None:
        """Record a request that uses no step (one ``refuse`` answered)."""
        with self._lock:
            self.requests.append(record)
            self._log(record)

    def starts_over(self, body: Mapping[str, Any]) -> bool:
        """Whether request ``body`` begins a new conversation (with ``repeat``: from step 1).

        None does by default: each request stands alone, and the script starts
        over only when it ran out.
        """
        return False

    @property
    def port(self) -> int:
        """The TCP port the server listens on."""
        return int(self._server.server_address[1])

    def start(self) -> Self:
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

    def __enter__(self) -> Self:
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

    def _log(self, record: RecordedRequest) -> None:
        if self.log_path is not None:
            with self.log_path.open("a", encoding="utf-8") as log:
                log.write(json.dumps({"path": record.path, "body": record.body}) + "\n")

    def next_step(self, record: RecordedRequest) -> tuple[int, Mapping[str, Any] | None]:
        """Record a request; return its serial (1-based) and the step answering it.

        The step is None when the script is exhausted and there is no default.
        """
        with self._lock:
            self.requests.append(record)
            serial = len(self.requests)
            self._log(record)
            if self.repeat and (
                self._position >= len(self.script) or self.starts_over(record.body)
            ):
                self._position = 0
            index, self._position = self._position, self._position + 1
            step = self.script[index] if index < len(self.script) else self.default
        if step is None:
            return serial, None
        return serial, (step(record.body) if callable(step) else step)


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
