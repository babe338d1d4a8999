"""The review app: ``create_app(settings)`` builds the FastAPI application.

Routes are thin: each parses its input, calls one function of
``worker.review`` (synchronous; FastAPI runs plain ``def`` routes in its
thread pool, so the event loop never waits on the store) and formats the
result as a page, JSON or Prometheus text. Modules:

- ``worker.web.pages``: the list, a report, the actions' forms, login and logout;
- ``worker.web.api``: the same under ``/api/…`` as JSON (schema at ``/api/openapi.json``);
- ``worker.web.ops``: ``/healthz`` (no login) and ``/metrics``;
- ``worker.web.auth``, ``worker.web.session``: access, the signed cookie and CSRF;
- ``worker.web.markdown``: the summary as sanitised HTML.

Around them: the ``Host`` check and the cross-site check of state-changing
requests (``worker.web.origin``), the session (``worker.web.session``), and,
when ``review.trusted_proxies`` is set, uvicorn's ``ProxyHeadersMiddleware``
so that the scheme and the client address come from those proxies'
``X-Forwarded-*`` headers.

Errors map to statuses: ``NotFound`` 404 (a run id that is not a number, or
too large to be one, too), ``InvalidAction`` 422,
``StoreError`` and a store that cannot be reached (SQLAlchemy's
``OperationalError``) 503; a page asked for without login redirects to ``/login``.
"""

from __future__ import annotations

import datetime as dt
import logging
import secrets
from collections.abc import Callable
from importlib.resources import files

from fastapi import FastAPI, Request
from fastapi.exception_handlers import http_exception_handler
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from sqlalchemy.exc import OperationalError
from starlette.exceptions import HTTPException as StarletteHTTPException
from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware

from checks.clock import utcnow
from checks.errors import StoreError
from checks.settings.config import Settings
from checks.store.store import Store
from worker.review import InvalidAction, NotFound, ReviewError
from worker.review.actions import Send
from worker.review.vocabulary import unknown_reason
from worker.web import api, ops, pages
from worker.web.auth import Access, LoginRequired, is_api, login_url
from worker.web.body_guard import BodyGuard
from worker.web.context import Web, celery_send
from worker.web.login_limits import LoginLimits
from worker.web.metrics import make_registry
from worker.web.origin import HostCheck, SameOrigin, allowed_hosts
from worker.web.session import SessionCodec, SessionMiddleware, SessionRegistry
from worker.web.templating import make_templates

log = logging.getLogger("lookout.web")


async def _invalid(request: Request, exc: RequestValidationError) -> Response:
    """A request FastAPI could not parse: a bad run id is a 404; a bad resolve reason lists them."""
    errors = exc.errors()
    if any(tuple(e.get("loc", ()))[:2] == ("path", "run_id") for e in errors):
        message = f"no run with id {request.path_params.get('run_id', '')}"[:100]
        if is_api(request):
            return JSONResponse({"detail": message}, status_code=404)
        return pages.error_page(request, 404, message)
    for error in errors:
        if tuple(error.get("loc", ())) == ("body", "reason"):
            return JSONResponse({"detail": unknown_reason(error.get("input"))}, status_code=422)
    # where and what, never the input itself back (FastAPI's own handler echoes it)
    shown = [{k: e[k] for k in ("loc", "msg", "type") if k in e} for e in errors[:20]]
    return JSONResponse({"detail": shown}, status_code=422)


def _handlers(app: FastAPI) -> None:
    @app.exception_handler(LoginRequired)
    def _login(request: Request, exc: LoginRequired) -> Response:
        target = login_url(exc.next_path)
        if request.headers.get("hx-request"):
            return Response(status_code=200, headers={"HX-Redirect": target})
        return RedirectResponse(target, status_code=303)

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> Response:
        if is_api(request) or exc.status_code == 405:
            return await http_exception_handler(request, exc)
        return pages.error_page(request, exc.status_code, str(exc.detail))

    app.exception_handler(RequestValidationError)(_invalid)

    @app.exception_handler(ReviewError)
    def _review(request: Request, exc: ReviewError) -> Response:
        status = (
            404 if isinstance(exc, NotFound) else 422 if isinstance(exc, InvalidAction) else 400
        )
        if is_api(request):
            return JSONResponse({"detail": str(exc)}, status_code=status)
        return pages.error_page(request, status, str(exc))

    @app.exception_handler(StoreError)
    @app.exception_handler(OperationalError)
    def _store(request: Request, exc: Exception) -> Response:
        log.error("the store failed: %s", exc)
        message = "the report store cannot be reached; try again shortly"
        if is_api(request):
            return JSONResponse({"detail": message}, status_code=503)
        return pages.error_page(request, 503, message)


def create_app(
    settings: Settings,
    *,
    store: Store | None = None,
    local: bool | None = None,
    send: Send | None = None,
    clock: Callable[[], dt.datetime] | None = None,
) -> FastAPI:
    """Build the review app.

    Args:
        settings: the settings; ``settings.review`` holds users, tokens and the key.
        store: the report store (default: opened from ``settings.store_url``,
            migrations applied).
        local: the local mode (default ``settings.review.local``). The caller
            must refuse it on a non-loopback address (``lookout serve`` does);
            the app itself still serves it only to loopback clients.
        send: sends a queued run's message ("run now"; default: the Celery app).
        clock: the current time (default: the system clock, UTC).

    Raises:
        StoreError: the store cannot be opened.
    """
    review = settings.review
    key = review.secret_key
    if not key:
        key = secrets.token_urlsafe(32)
        log.warning("review.secret_key is not set: sessions end when this process stops")
    if review.without_role():
        log.warning(
            "%s written without a role: they get review.default_role, %s",
            ", ".join(review.without_role()),
            review.default_role,
        )
    opened = store or Store(settings.store_url)
    sessions = SessionRegistry(opened, review.session_max_age_s)
    web = Web(
        settings=settings,
        store=opened,
        access=Access(review, local=review.local if local is None else local, sessions=sessions),
        templates=make_templates(),
        send=send or celery_send,
        sessions=sessions,
        login_limits=LoginLimits(free=review.login_attempts, max_s=review.login_backoff_max_s),
        clock=clock or utcnow,
    )
    app = FastAPI(
        title="Lookout review API",
        summary="Reports, second opinions, evidence and review actions of Lookout.",
        version="1",
        docs_url=None,
        redoc_url=None,
        openapi_url=None,
    )
    app.state.web = web
    app.state.metrics = make_registry(web.store, web.clock)
    hosts = allowed_hosts(settings)
    # Added last runs first: proxy headers, then Host, then Origin, then the session, then
    # the body's sender and size (before FastAPI reads a body, which it does before logins).
    app.add_middleware(BodyGuard, access=web.access, max_bytes=review.max_body_bytes)
    app.add_middleware(SessionMiddleware, codec=SessionCodec(key, review.session_max_age_s))
    app.add_middleware(SameOrigin, hosts=hosts)
    app.add_middleware(HostCheck, hosts=hosts)
    if review.trusted_proxies:
        app.add_middleware(ProxyHeadersMiddleware, trusted_hosts=review.trusted_proxies)
    app.mount("/static", StaticFiles(directory=str(files("worker.web") / "static")), name="static")
    app.include_router(pages.router)
    app.include_router(api.router)
    app.include_router(ops.router)
    _handlers(app)
    return app
