"""The session cookie: who is logged in and the CSRF token, signed with HMAC-SHA256.

The cookie holds ``BASE64(JSON).BASE64(HMAC)``; its content is readable by
its holder but cannot be changed without the key (``review.secret_key``).
Every visitor gets a session, logged in or not, so that the login form
itself carries a CSRF token. A session is refused once
``review.session_max_age_s`` has passed since it was issued (at the login
for a logged-in one). The cookie is ``HttpOnly``, ``SameSite=Lax``, and
``Secure`` when the request came over HTTPS.

``SessionMiddleware`` loads the session into ``request.state.session``
before the route runs and writes the cookie back when the session is new
or the route replaced it (login, logout). It also sets the security headers
of every response (Content-Security-Policy allowing only the page's own
scripts and styles, no framing, no sniffing).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
import time
from dataclasses import asdict, dataclass

from starlette.middleware.base import BaseHTTPMiddleware, RequestResponseEndpoint
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp

COOKIE = "lookout_session"
SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'"
    ),
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "same-origin",
}


@dataclass(frozen=True)
class Session:
    """One visitor's session.

    Attributes:
        csrf: the token every form post must carry (URL-safe text).
        user: the logged-in user's name, or None.
        issued_at: Unix time in seconds the session was made.
    """

    csrf: str
    user: str | None = None
    issued_at: int = 0

    @classmethod
    def new(cls, user: str | None = None) -> Session:
        """Return a fresh session with a new CSRF token."""
        return cls(secrets.token_urlsafe(32), user, int(time.time()))


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class SessionCodec:
    """Signs and checks session cookies.

    Args:
        key: the signing key (``review.secret_key``), any length.
        max_age_s: a session older than this, in seconds, is refused.
    """

    def __init__(self, key: str, max_age_s: int) -> None:
        self._key = hashlib.sha256(b"lookout-session:" + key.encode("utf-8")).digest()
        self.max_age_s = max_age_s

    def _sign(self, payload: str) -> str:
        return _b64(hmac.new(self._key, payload.encode("ascii"), hashlib.sha256).digest())

    def dumps(self, session: Session) -> str:
        """Return the cookie value of a session."""
        payload = _b64(json.dumps(asdict(session), separators=(",", ":")).encode("utf-8"))
        return f"{payload}.{self._sign(payload)}"

    def loads(self, value: str | None, *, now: float | None = None) -> Session | None:
        """Return the session in a cookie value, or None when it is absent, forged or expired."""
        if not value or value.count(".") != 1:
            return None
        payload, signature = value.split(".")
        if not hmac.compare_digest(signature, self._sign(payload)):
            return None
        try:
            data = json.loads(_unb64(payload))
            session = Session(str(data["csrf"]), data.get("user"), int(data["issued_at"]))
        except (ValueError, KeyError, TypeError):
            return None
        age = (time.time() if now is None else now) - session.issued_at
        return session if 0 <= age <= self.max_age_s else None


class SessionMiddleware(BaseHTTPMiddleware):
    """Loads and stores the session cookie, and sets the security headers (module docstring)."""

    def __init__(self, app: ASGIApp, codec: SessionCodec) -> None:
        super().__init__(app)
        self.codec = codec

    async def dispatch(self, request: Request, call_next: RequestResponseEndpoint) -> Response:
        """Run the route with ``request.state.session`` set; write the cookie if it changed."""
        loaded = self.codec.loads(request.cookies.get(COOKIE))
        session = loaded or Session.new()
        request.state.session = session
        response = await call_next(request)
        current: Session = request.state.session
        if loaded is None or current is not session:
            response.set_cookie(
                COOKIE,
                self.codec.dumps(current),
                max_age=self.codec.max_age_s,
                path="/",
                httponly=True,
                samesite="lax",
                secure=request.url.scheme == "https",
            )
        for name, value in SECURITY_HEADERS.items():
            response.headers.setdefault(name, value)
        if not request.url.path.startswith("/static/"):
            response.headers.setdefault("Cache-Control", "no-store")
        return response
