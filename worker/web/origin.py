"""Which hosts the app answers, and that state-changing requests come from its own pages.

- ``Host`` must be one of ``allowed_hosts(settings)`` (Starlette's
  ``TrustedHostMiddleware``), in every mode: a page on another site that
  rebinds its own name to this machine's address (DNS rebinding) sends its own
  name as ``Host`` and is refused with 400. ``/healthz`` answers whatever the
  ``Host``, for probes that use an address.
- A ``POST`` (or any method that is not ``GET``, ``HEAD`` or ``OPTIONS``)
  whose ``Origin`` names a host that is not allowed (or is ``null``) is
  refused with 403; without ``Origin``, one a browser marks
  ``Sec-Fetch-Site: cross-site`` is refused too. API clients send neither.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.responses import PlainTextResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from checks.settings.config import Settings

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1", "[::1]")
_SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
_ANY_HOST = ("/healthz",)


def allowed_hosts(settings: Settings) -> list[str]:
    """Return the names ``Host`` may carry.

    They are the loopback names, the address listened on, the public name of
    ``review_base_url`` and ``review.allowed_hosts`` (``*.example.com`` allowed).
    """
    names = list(LOOPBACK_NAMES)
    if settings.review.host not in ("0.0.0.0", "::", ""):
        names.append(settings.review.host)
    public = urlsplit(settings.review_base_url).hostname
    if public:
        names.append(public)
    names.extend(settings.review.allowed_hosts)
    return list(dict.fromkeys(names))


class HostCheck:
    """``TrustedHostMiddleware`` over every path but ``/healthz``."""

    def __init__(self, app: ASGIApp, hosts: list[str]) -> None:
        self.app = app
        self.checked = TrustedHostMiddleware(app, allowed_hosts=hosts, www_redirect=False)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Pass ``/healthz`` and non-HTTP scopes through; check ``Host`` on the rest."""
        if scope["type"] == "http" and scope["path"] not in _ANY_HOST:
            await self.checked(scope, receive, send)
        else:
            await self.app(scope, receive, send)


def host_allowed(name: str, hosts: list[str]) -> bool:
    """Whether ``name`` (no port) is one of ``hosts``, as ``TrustedHostMiddleware`` matches."""
    name = name.lower()
    for pattern in hosts:
        pattern = pattern.lower().strip("[]")
        if pattern == "*" or name.strip("[]") == pattern:
            return True
        if pattern.startswith("*.") and name.endswith(pattern[1:]):
            return True
    return False


class SameOrigin:
    """Refuses a state-changing request from another site (see the module docstring)."""

    def __init__(self, app: ASGIApp, hosts: list[str]) -> None:
        self.app = app
        self.hosts = hosts

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Answer 403 to a cross-site state-changing request; pass everything else on."""
        if scope["type"] == "http" and scope["method"] not in _SAFE_METHODS:
            headers = {
                k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]
            }
            origin = headers.get("origin")
            if origin is None:
                cross = headers.get("sec-fetch-site") == "cross-site"
            else:
                name = urlsplit(origin).hostname if origin != "null" else None
                cross = not name or not host_allowed(name, self.hosts)
            if cross:
                response = PlainTextResponse(
                    "cross-site request refused: post from the review page itself", 403
                )
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)
