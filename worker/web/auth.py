"""Who is asking: a logged-in user, an API token, or the local mode; and CSRF on form posts.

- A session (``worker.web.session``) names a user still in ``review.users``,
  and its id is still registered (not logged out, not expired).
- ``Authorization: Bearer TOKEN`` names a token of ``review.tokens``; it acts
  as ``token:NAME``. A bearer header that matches nothing is refused even
  when a session is present.
- The local mode (``lookout serve --local``) lets a request from a loopback
  address act as ``local``, with the ``admin`` role, without logging in. It must be switched on
  explicitly, ``lookout serve`` refuses it on a non-loopback address, and a
  request from any other address is still refused.

Each identity carries the role of its user or token
(``ReviewSettings.role_of``); what a role may do is checked in
``worker.web.roles``. Pages send whoever is not known to ``/login``; the API and ``/metrics``
answer 401 with ``WWW-Authenticate: Bearer``. A state-changing request
authenticated by the session cookie (or the local mode) must carry the
session's CSRF token, as the ``csrf_token`` form field or the
``X-CSRF-Token`` header; one authenticated by a bearer token needs none (a
browser never sends one on its own).
"""

from __future__ import annotations

import functools
import hmac
import ipaddress
import secrets
from dataclasses import dataclass
from typing import Literal
from urllib.parse import quote

from fastapi import HTTPException, Request

from checks.settings.review import ReviewSettings, Role
from worker.web.passwords import hash_password, token_owner, verify_password
from worker.web.session import Session, SessionRegistry

Via = Literal["session", "token", "local"]


@functools.cache
def _dummy_hash() -> str:
    """A hash an unknown user's password is checked against, so it costs the same time."""
    return hash_password(secrets.token_urlsafe(16))


@dataclass(frozen=True)
class Identity:
    """Who a request acts as.

    Attributes:
        name: what actions record as who did them (``alice``, ``token:ci``, ``local``).
        via: how it was known.
        role: what it may do (``worker.web.roles``).
    """

    name: str
    via: Via
    role: Role


class LoginRequired(Exception):
    """A page was asked for without an identity; the app answers with a redirect to /login."""

    def __init__(self, next_path: str) -> None:
        super().__init__(next_path)
        self.next_path = next_path


def is_loopback(host: str | None) -> bool:
    """Whether ``host`` is a loopback address or ``localhost``."""
    if not host:
        return False
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


class Access:
    """The users, tokens and local mode of one app.

    Args:
        review: the ``review:`` settings (hashes only).
        local: the local mode is on (no login from loopback addresses).
        sessions: where logged-in sessions are registered (None: the cookie
            alone decides, for tests of the cookie itself).
    """

    def __init__(
        self, review: ReviewSettings, *, local: bool, sessions: SessionRegistry | None = None
    ) -> None:
        self.review = review
        self.local = local
        self.sessions = sessions

    def login(self, user: str, password: str) -> bool:
        """Whether the password is the user's; an unknown user costs the same time."""
        entry = self.review.users.get(user)
        hashed = entry.hash if entry else None
        ok = verify_password(password, hashed or _dummy_hash())
        return ok and hashed is not None

    def identify(self, request: Request) -> Identity | None:
        """Return who the request acts as, or None (see the module docstring)."""
        header = request.headers.get("authorization", "")
        if header:
            scheme, _, token = header.partition(" ")
            if scheme.lower() != "bearer" or not token.strip():
                return None
            name = token_owner(token.strip(), self.review.token_hashes())
            if name is None:
                return None
            return Identity(f"token:{name}", "token", self.review.role_of(self.review.tokens[name]))
        session: Session | None = getattr(request.state, "session", None)
        if (
            session is not None
            and session.user
            and session.user in self.review.users
            and (self.sessions is None or self.sessions.valid(session.sid, session.user))
        ):
            role = self.review.role_of(self.review.users[session.user])
            return Identity(session.user, "session", role)
        client = request.client.host if request.client else None
        if self.local and is_loopback(client):
            return Identity("local", "local", Role.ADMIN)  # one person on this machine
        return None


def _access(request: Request) -> Access:
    access: Access = request.app.state.web.access
    return access


def api_identity(request: Request) -> Identity:
    """FastAPI dependency of the API and ``/metrics``: the identity, or 401."""
    identity = _access(request).identify(request)
    if identity is None:
        raise HTTPException(
            status_code=401,
            detail="log in, or send Authorization: Bearer TOKEN",
            headers={"WWW-Authenticate": 'Bearer realm="lookout"'},
        )
    return identity


def page_identity(request: Request) -> Identity:
    """FastAPI dependency of the pages: the identity, or a redirect to the login page."""
    identity = _access(request).identify(request)
    if identity is None:
        path = request.url.path + (f"?{request.url.query}" if request.url.query else "")
        raise LoginRequired(path)
    return identity


def is_api(request: Request) -> bool:
    """Whether the request is for the API or ``/metrics`` (answered in JSON or text, not pages)."""
    return request.url.path.startswith(("/api/", "/metrics"))


def identity_of(request: Request) -> Identity:
    """The identity, or what nobody known gets: 401 on the API (``api_identity``), else login."""
    return api_identity(request) if is_api(request) else page_identity(request)


def csrf_matches(request: Request, given: str | None) -> bool:
    """Whether ``given`` is the CSRF token of the request's session (constant-time)."""
    session: Session | None = getattr(request.state, "session", None)
    return (
        session is not None
        and bool(given)
        and hmac.compare_digest((given or "").encode(), session.csrf.encode())
    )


def csrf_ok(request: Request, identity: Identity, form_token: str | None) -> bool:
    """Whether a state-changing request carries the session's CSRF token (or needs none)."""
    if identity.via == "token":
        return True
    return csrf_matches(request, form_token or request.headers.get("x-csrf-token"))


def require_csrf(request: Request, identity: Identity, form_token: str | None) -> None:
    """Raise 403 unless ``csrf_ok``."""
    if not csrf_ok(request, identity, form_token):
        raise HTTPException(status_code=403, detail="missing or wrong CSRF token; reload the page")


def login_url(next_path: str) -> str:
    """Return ``/login?next=…`` for a local path."""
    return "/login?next=" + quote(safe_next(next_path), safe="")


def safe_next(path: str | None) -> str:
    """Return ``path`` if it is a path on this site, else ``/`` (no open redirects)."""
    if not path or not path.startswith("/") or path.startswith("//") or "\\" in path:
        return "/"
    return path
