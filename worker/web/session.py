"""The session cookie: who is logged in and the CSRF token, signed with HMAC-SHA256.

The cookie holds ``BASE64(JSON).BASE64(HMAC)``; its content is readable by
its holder but cannot be changed without the key (``review.secret_key``).
Every visitor gets a session, logged in or not, so that the login form
itself carries a CSRF token. A session is refused once
``review.session_max_age_s`` has passed since it was issued (at the login
for a logged-in one). A logged-in session also carries a random id that the
store keeps (``SessionRegistry``, table ``web_sessions``) until logout or
expiry: a copied cookie stops working at logout. The cookie is ``HttpOnly``,
``SameSite=Lax``, and ``Secure`` when the request came over HTTPS (behind a
proxy, as its ``X-Forwarded-Proto`` says when ``review.trusted_proxies``
names it); such responses also carry ``Strict-Transport-Security``.

``SessionMiddleware`` loads the session into ``request.state.session``
before the route runs and writes the cookie back when the session is new
or the route replaced it (login, logout). It also sets the security headers
of every response (Content-Security-Policy allowing only the page's own
scripts and styles, no framing, no sniffing).
"""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import hmac
import json
import secrets
import time
from dataclasses import asdict, dataclass

from sqlalchemy import delete
from starlette.middleware.base import BaseHTTPMiddleware, RequestResponseEndpoint
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp

from checks.clock import utcnow
from checks.store.review_tables import WebSessionRow
from checks.store.store import Store

COOKIE = "lookout_session"
HSTS = "max-age=31536000"
"""``Strict-Transport-Security`` of every HTTPS response (one year; RFC 6797)."""
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
        sid: a logged-in session's id, registered in the store (``SessionRegistry``).
    """

    csrf: str
    user: str | None = None
    issued_at: int = 0
    sid: str | None = None

    @classmethod
    def new(cls, user: str | None = None, sid: str | None = None) -> Session:
        """Return a fresh session with a new CSRF token."""
        return cls(secrets.token_urlsafe(32), user, int(time.time()), sid)


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
            session = Session(
                str(data["csrf"]), data.get("user"), int(data["issued_at"]), data.get("sid")
            )
        except (ValueError, KeyError, TypeError):
            return None
        age = (time.time() if now is None else now) - session.issued_at
        return session if 0 <= age <= self.max_age_s else None


def _digest(sid: str) -> str:
    return hashlib.sha256(sid.encode("ascii", "replace")).hexdigest()


class SessionRegistry:
    """Logged-in sessions kept in the store, so that logout ends them for good.

    Args:
        store: the report store (table ``web_sessions``).
        max_age_s: how long a session lasts, in seconds (``review.session_max_age_s``).
    """

    def __init__(self, store: Store, max_age_s: int) -> None:
        self.store = store
        self.max_age_s = max_age_s

    def start(self, user: str) -> str:
        """Register a new session of ``user``; return its id (for the cookie only).

        Expired sessions are deleted on the way.
        """
        sid = secrets.token_urlsafe(32)
        now = utcnow()
        with self.store.session() as session:
            session.execute(delete(WebSessionRow).where(WebSessionRow.expires_at < now))
            session.add(
                WebSessionRow(
                    id=_digest(sid),
                    user=user,
                    created_at=now,
                    expires_at=now + dt.timedelta(seconds=self.max_age_s),
                )
            )
        return sid

    def valid(self, sid: str | None, user: str) -> bool:
        """Whether ``sid`` is a live session of ``user``."""
        if not sid:
            return False
        with self.store.session() as session:
            row = session.get(WebSessionRow, _digest(sid))
            return row is not None and row.user == user and row.expires_at > utcnow()

    def end(self, sid: str | None) -> None:
        """Delete a session (logout); nothing happens for an unknown id."""
        if sid:
            with self.store.session() as session:
                session.execute(delete(WebSessionRow).where(WebSessionRow.id == _digest(sid)))


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
        if request.url.scheme == "https":
            response.headers.setdefault("Strict-Transport-Security", HSTS)
        if not request.url.path.startswith("/static/"):
            response.headers.setdefault("Cache-Control", "no-store")
        return response
