"""The pages: the list, a report, the actions' forms, login and logout.

Plain HTML forms that work without JavaScript; htmx (vendored in
``static/``, no CDN) boosts links and forms into in-place swaps and keeps
the list's filters in the URL. Every form post carries the session's CSRF
token; what each role may do is checked in ``worker.web.roles`` (the
report page only hides the buttons a role cannot use). An action redirects
back to its report (303) so a reload never posts twice.
"""

from __future__ import annotations

import datetime as dt
from math import ceil
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Form, HTTPException, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from starlette.datastructures import QueryParams

from checks.settings.review import Role
from worker.review import (
    ActionKind,
    ActionRequest,
    Filters,
    InvalidAction,
    QuickFilter,
    ResolveReason,
    board,
    record,
    report_view,
    run_now,
    trace_of,
)
from worker.review.vocabulary import MAX_PAGE, unknown_reason
from worker.web.auth import Identity, csrf_matches, require_csrf, safe_next
from worker.web.context import RunId, web_of
from worker.web.markdown import render_summary
from worker.web.roles import ACT, READ, RUN_NOW, requires
from worker.web.session import Session
from worker.web.templating import query

router = APIRouter(include_in_schema=False)
Who = Annotated[Identity, Depends(requires(Role.VIEWER, READ))]
Reviewer = Annotated[Identity, Depends(requires(Role.REVIEWER, ACT))]
Admin = Annotated[Identity, Depends(requires(Role.ADMIN, RUN_NOW))]
SNOOZE_HOURS = {"1": "1 hour", "4": "4 hours", "24": "1 day", "72": "3 days", "168": "1 week"}
DONE = {
    "acknowledge": "Acknowledged.",
    "assign": "Assignment saved.",
    "snooze": "Snoozed.",
    "comment": "Comment added.",
    "resolve": "Resolved; the reason is kept as this run's labelled outcome.",
}


def _render(
    request: Request, name: str, context: dict[str, Any], status_code: int = 200
) -> HTMLResponse:
    web = web_of(request)
    session: Session = request.state.session
    base = {"request": request, "csrf": session.csrf, "now": web.clock(), "identity": None}
    response: HTMLResponse = web.templates.TemplateResponse(
        request, name, {**base, **context}, status_code=status_code
    )
    return response


def error_page(request: Request, status: int, message: str) -> HTMLResponse:
    """Return the error page (used by the app's exception handlers)."""
    identity = web_of(request).access.identify(request)
    return _render(
        request, "error.html", {"identity": identity, "status": status, "message": message}, status
    )


def parse_filters(params: QueryParams, page_size: int) -> tuple[Filters, dict[str, Any]]:
    """Return the list's filters from its URL, and the parameters as given (for links).

    Unknown quick filters are ignored; text filters are cut to 200 characters.
    """
    known = {q.value for q in QuickFilter}
    quick = tuple(QuickFilter(v) for v in dict.fromkeys(params.getlist("f")) if v in known)
    text = {k: (params.get(k) or "").strip()[:200] or None for k in ("owner", "tag", "source", "q")}
    try:
        page = min(max(1, int(params.get("page") or 1)), MAX_PAGE)
    except ValueError:
        page = 1
    filters = Filters(quick, text["owner"], text["tag"], text["source"], text["q"], page, page_size)
    given: dict[str, Any] = {"f": [q.value for q in quick], **text}
    return filters, given


@router.get("/", response_class=HTMLResponse)
def list_page(request: Request, who: Who) -> HTMLResponse:
    """The list; with ``HX-Target: board`` only the table, and its clean URL (live filtering)."""
    web = web_of(request)
    filters, given = parse_filters(request.query_params, web.settings.review.page_size)
    page = board(web.store, filters, now=web.clock())
    context = {"identity": who, "page": page, "filters": filters, "params": given}
    if request.headers.get("hx-target") != "board":
        return _render(request, "list.html", context)
    response = _render(request, "_board.html", context)
    response.headers["HX-Push-Url"] = "/" + query(
        given, page=filters.page if filters.page > 1 else None
    )
    return response


def _report(
    request: Request, run_id: int, who: Identity, *, error: str | None = None, status: int = 200
) -> HTMLResponse:
    web = web_of(request)
    secrets = web.settings.secrets()
    view = report_view(web.store, run_id, secrets=secrets, now=web.clock())
    done = request.query_params.get("done")
    queued = request.query_params.get("queued")
    notice = DONE.get(done or "")
    if done == "run_now" and queued and queued.isdigit():
        notice = f"Queued run {queued} for the workers."
    context = {
        "identity": who,
        "r": view,
        "summary_html": render_summary(view.summary),
        "trace": trace_of(web.store, run_id, secrets=secrets),
        "notice": notice,
        "error": error,
        "snooze_hours": SNOOZE_HOURS,
    }
    return _render(request, "report.html", context, status)


@router.get("/runs/{run_id}", response_class=HTMLResponse)
def report_page(request: Request, run_id: RunId, who: Who) -> HTMLResponse:
    """One report: finding, second opinion, summary, checks, evidence, diff, timeline, trace."""
    return _report(request, run_id, who)


def _action_request(
    kind: str,
    assignee: str | None,
    snooze: str | None,
    reason: str | None,
    comment: str | None,
    now: dt.datetime,
) -> ActionRequest:
    """Turn the form's fields into an action request, or raise ``InvalidAction``."""
    try:
        action = ActionKind(kind)
    except ValueError:
        raise InvalidAction("unknown action") from None
    try:
        why = ResolveReason(reason) if reason else None
    except ValueError:
        raise InvalidAction(unknown_reason(reason)) from None
    until = None
    if action == ActionKind.SNOOZE:
        if snooze not in SNOOZE_HOURS:
            raise InvalidAction("choose how long to snooze")
        until = now + dt.timedelta(hours=int(snooze))
    return ActionRequest(action, assignee, until, why, comment)


@router.post("/runs/{run_id}/actions", response_class=HTMLResponse)
def act(
    request: Request,
    run_id: RunId,
    who: Reviewer,
    kind: Annotated[str, Form()],
    csrf_token: Annotated[str | None, Form()] = None,
    assignee: Annotated[str | None, Form()] = None,
    snooze: Annotated[str | None, Form()] = None,
    reason: Annotated[str | None, Form()] = None,
    comment: Annotated[str | None, Form()] = None,
) -> Response:
    """Record one action from the report page's forms, then show the report again.

    Needs the ``reviewer`` role. Run now has its own route (``admin``), as in the API.
    """
    require_csrf(request, who, csrf_token)
    web = web_of(request)
    now = web.clock()
    try:
        if kind == ActionKind.RUN_NOW:
            raise InvalidAction("run now has its own form: POST /runs/ID/run-now")
        request_ = _action_request(kind, assignee, snooze, reason, comment, now)
        record(web.store, run_id, request_, actor=who.name, now=now)
    except InvalidAction as exc:
        return _report(request, run_id, who, error=str(exc), status=422)
    return RedirectResponse(f"/runs/{run_id}?done={request_.kind.value}#review", status_code=303)


@router.post("/runs/{run_id}/run-now", response_class=HTMLResponse)
def run_now_page(
    request: Request,
    run_id: RunId,
    who: Admin,
    csrf_token: Annotated[str | None, Form()] = None,
) -> Response:
    """Queue a run of the run's automation (``admin``), then show the report again."""
    require_csrf(request, who, csrf_token)
    web = web_of(request)
    now = web.clock()
    result = run_now(web.store, web.settings, run_id, actor=who.name, now=now, send=web.send)
    target = f"/runs/{run_id}?done=run_now&queued={result.queued_run_id}#review"
    return RedirectResponse(target, status_code=303)


@router.get("/login", response_class=HTMLResponse)
def login_page(request: Request, next: str | None = None) -> Response:
    """The login form (straight to ``next`` when already logged in or in local mode)."""
    target = safe_next(next)
    if web_of(request).access.identify(request) is not None:
        return RedirectResponse(target, status_code=303)
    return _render(request, "login.html", {"next": target, "message": None})


@router.post("/login", response_class=HTMLResponse)
def login(
    request: Request,
    username: Annotated[str, Form(max_length=100)],
    password: Annotated[str, Form(max_length=1000)],
    csrf_token: Annotated[str | None, Form()] = None,
    next: Annotated[str | None, Form()] = None,
) -> Response:
    """Check the credentials; on success start a new session (new CSRF token) and go to ``next``.

    Failed logins back off per client address and per user name, and only a
    few passwords are checked at once (``worker.web.login_limits``): past
    either, the answer is 429 with ``Retry-After``, before any password is checked.
    """
    target = safe_next(next)
    web = web_of(request)
    if not csrf_matches(request, csrf_token):
        context = {"next": target, "message": "The form expired; please try again."}
        return _render(request, "login.html", context, 403)
    client = request.client.host if request.client else "unknown"
    wait = web.login_limits.wait_s(client, username)
    if wait > 0:
        return _too_many(
            request, target, f"Too many failed logins; try again in {ceil(wait)} s.", wait
        )
    with web.login_limits.checking() as free:
        if not free:
            return _too_many(request, target, "Too many logins at once; try again in a moment.", 1)
        ok = web.access.login(username, password)
    if not ok:
        web.login_limits.failed(client, username)
        context = {"next": target, "message": "Wrong user name or password."}
        return _render(request, "login.html", context, 401)
    web.login_limits.succeeded(client, username)
    request.state.session = Session.new(username, web.sessions.start(username))
    return RedirectResponse(target, status_code=303)


def _too_many(request: Request, target: str, message: str, wait_s: float) -> HTMLResponse:
    response = _render(request, "login.html", {"next": target, "message": message}, 429)
    response.headers["Retry-After"] = str(max(1, ceil(wait_s)))
    return response


@router.post("/logout")
def logout(request: Request, csrf_token: Annotated[str | None, Form()] = None) -> Response:
    """End the session, in the store too (a copy of the cookie no longer works), then log in.

    Without the session's CSRF token the session is kept and the answer says so
    (403): a cross-site page must not log anyone out, and nobody may believe
    they were logged out when they were not.
    """
    if not csrf_matches(request, csrf_token):
        raise HTTPException(
            status_code=403,
            detail="not logged out: the form's CSRF token is missing or wrong; reload the page",
        )
    session: Session = request.state.session
    web_of(request).sessions.end(session.sid)
    request.state.session = Session.new()
    return RedirectResponse("/login", status_code=303)
