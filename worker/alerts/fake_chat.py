"""Local stand-ins for the chat services: real HTTP on 127.0.0.1, scripted, recording.

No machine running Lookout's tests reaches Slack, Teams, Google Chat or
Discord; these servers answer the way the services document instead, so the
senders are tested over real HTTP. One server plays one service:

- ``slack``: 200 ``ok``; 400 ``invalid_blocks`` when a section's text is over
  3,000 characters, a header's over 150, or there are over 50 blocks;
  400 ``no_text`` when there is neither text nor blocks.
- ``teams``: 202 with an empty body; 400 when the body is not a message with an
  Adaptive Card attachment carrying ``contentUrl``; 413 over 28 KB.
- ``google_chat``: 200 with the created message, in the thread its
  ``thread.threadKey`` names when ``messageReplyOption`` asks to reply
  (the same key gives the same thread); 400 over 32,000 bytes.
- ``discord``: 204, or 200 with the message under ``?wait=true``; 400
  (code 50035) when ``content`` is over 2,000 characters or the embeds over 6,000.
- ``webhook``: 200 ``{"ok": true}`` (also what Apprise's ``json://`` posts to).

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
from dataclasses import asdict, dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlsplit

SERVICES = ("slack", "teams", "google_chat", "discord", "webhook")
DEFAULT_PATHS = {
    "slack": "/services/T0000FAKE/B0000FAKE/FakeSlackToken0123456789",
    "teams": "/workflows/fake/triggers/manual/invoke?api-version=1&sig=FakeTeamsSig0123456789",
    "google_chat": "/v1/spaces/FAKESPACE/messages?key=FakeGoogleKey0123&token=FakeGoogleToken0123",
    "discord": "/api/webhooks/123456789/FakeDiscordToken0123456789",
    "webhook": "/hooks/lookout",
}


@dataclass(frozen=True)
class Reply:
    """A scripted answer: status, body (text), headers, and a delay before answering (seconds)."""

    status: int
    body: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0


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


def _slack(doc: Any) -> Reply:
    if not isinstance(doc, dict) or not (doc.get("text") or doc.get("blocks")):
        return Reply(400, "no_text")
    blocks = doc.get("blocks") or []
    if len(blocks) > 50:
        return Reply(400, "invalid_blocks")
    for block in blocks:
        text = (block.get("text") or {}).get("text", "")
        if len(text) > (150 if block.get("type") == "header" else 3000):
            return Reply(400, "invalid_blocks")
    return Reply(200, "ok")


def _teams(doc: Any, size: int) -> Reply:
    if size > 28_000:
        return Reply(413, "Request Entity Too Large")
    try:
        attachment = doc["attachments"][0]
        ok = (
            doc["type"] == "message"
            and attachment["contentType"] == "application/vnd.microsoft.card.adaptive"
            and "contentUrl" in attachment
            and attachment["content"]["type"] == "AdaptiveCard"
        )
    except (KeyError, IndexError, TypeError):
        ok = False
    return Reply(202) if ok else Reply(400, '{"error":{"code":"InvalidRequestContent"}}')


def _discord(doc: Any, wait: bool) -> Reply:
    content = doc.get("content", "") if isinstance(doc, dict) else ""
    embeds = doc.get("embeds", []) if isinstance(doc, dict) else []
    total = sum(
        len(e.get("title", ""))
        + len(e.get("description", ""))
        + len(e.get("footer", {}).get("text", ""))
        + sum(len(f["name"]) + len(f["value"]) for f in e.get("fields", []))
        for e in embeds
    )
    if len(content) > 2000 or total > 6000:
        return Reply(400, '{"code": 50035, "message": "Invalid Form Body"}')
    if wait:
        return Reply(200, json.dumps({"id": str(time.time_ns()), "content": content}))
    return Reply(204)


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
        """Return a channel config (``type``, ``url``) pointing at this fake, plus ``fields``."""
        return {"type": self.service, "url": self.url(), **fields}

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
            return _slack(doc)
        if self.service == "teams":
            return _teams(doc, size)
        if self.service == "discord":
            return _discord(doc, recorded.query.get("wait") == "true")
        if self.service == "google_chat":
            return self._google_chat(doc, recorded.query, size)
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
    try:
        fake._server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        fake._server.server_close()


if __name__ == "__main__":
    main()
