"""What a request body may be: sent by someone known (the API), and at most ``max_bytes``.

FastAPI reads and parses a route's body before it resolves the route's
dependencies, login included; this ASGI middleware runs before it:

- an ``/api/…`` request with a body (any method but GET, HEAD and OPTIONS)
  from nobody known (``worker.web.auth.Access.identify``) gets 401 before one
  byte of its body is read;
- a body over ``max_bytes`` gets 413: at once when its ``Content-Length`` says
  so, else as soon as the bytes received pass it (a chunked upload).

Pages' forms (login, the actions) are bounded the same way; their login is
checked by the routes, on a body that is small by then.
"""

from __future__ import annotations

import json

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from worker.web.auth import Access

_NO_BODY = frozenset({"GET", "HEAD", "OPTIONS"})


async def _answer(send: Send, status: int, detail: str, headers: list[tuple[bytes, bytes]]) -> None:
    body = json.dumps({"detail": detail}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                *headers,
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


class BodyGuard:
    """ASGI middleware; see the module docstring. Add it inside the session middleware.

    Args:
        app: the application it wraps.
        access: who is known (the app's ``Access``).
        max_bytes: the largest body taken, in bytes (``review.max_body_bytes``).
    """

    def __init__(self, app: ASGIApp, *, access: Access, max_bytes: int) -> None:
        self.app = app
        self.access = access
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Refuse an unknown sender's or an oversized body; else pass the request on."""
        if scope["type"] != "http" or scope["method"] in _NO_BODY:
            await self.app(scope, receive, send)
            return
        too_large = f"the request body is over {self.max_bytes:,} bytes"
        if scope["path"].startswith("/api/"):
            known = await run_in_threadpool(self.access.identify, Request(scope))
            if known is None:
                challenge = [(b"www-authenticate", b'Bearer realm="lookout"')]
                await _answer(send, 401, "log in, or send Authorization: Bearer TOKEN", challenge)
                return
        length = dict(scope["headers"]).get(b"content-length")
        if length is not None and (not length.isdigit() or int(length) > self.max_bytes):
            await _answer(send, 413, too_large, [(b"connection", b"close")])
            return
        received = 0
        state = {"started": False, "answered": False}

        async def counted() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request" and not state["answered"]:
                received += len(message.get("body", b""))
                if received > self.max_bytes and not state["started"]:
                    # FastAPI turns any error while reading into its own 400: answer here,
                    # then tell the app the client is gone and drop what it sends
                    state["answered"] = True
                    await _answer(send, 413, too_large, [(b"connection", b"close")])
                    return {"type": "http.disconnect"}
            return message

        async def sending(message: Message) -> None:
            if state["answered"]:
                return
            state["started"] = state["started"] or message["type"] == "http.response.start"
            await send(message)

        await self.app(scope, counted, sending)
