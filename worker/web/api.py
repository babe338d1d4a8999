"""The JSON API: everything the pages show and every action, under ``/api/…``.

Every route needs a login session or ``Authorization: Bearer TOKEN``
(``worker.web.auth``) and a role (``worker.web.roles``): reading needs
``viewer``, an action ``reviewer``, run-now ``admin``; a POST authenticated
by the session cookie also needs the ``X-CSRF-Token`` header. The schema
is served at ``/api/openapi.json``
(behind the same access; no documentation UI is served, since it would load
scripts from a CDN). Responses are the service's own dataclasses
(``worker.review``), so the schema is theirs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Query, Request
from pydantic import AwareDatetime, BaseModel, Field

from checks.settings.review import Role
from worker.review import (
    Action,
    ActionKind,
    ActionRequest,
    BoardPage,
    Filters,
    Outcome,
    QuickFilter,
    ReportView,
    ResolveReason,
    RunNowResult,
    TraceEventView,
    board,
    outcomes,
    record,
    report_view,
    run_now,
    trace_of,
)
from worker.review.actions import MAX_COMMENT_CHARS, MAX_NAME_CHARS
from worker.review.vocabulary import MAX_PAGE
from worker.web.auth import Identity, require_csrf
from worker.web.context import RunId, web_of
from worker.web.markdown import render_summary
from worker.web.roles import ACT, READ, RUN_NOW, requires

router = APIRouter(prefix="/api", tags=["review"])
Who = Annotated[Identity, Depends(requires(Role.VIEWER, READ))]
Reviewer = Annotated[Identity, Depends(requires(Role.REVIEWER, ACT))]
Admin = Annotated[Identity, Depends(requires(Role.ADMIN, RUN_NOW))]


@dataclass(frozen=True)
class ReportDocument:
    """A report (``ReportView``) and its summary rendered as sanitised HTML."""

    report: ReportView
    summary_html: str


class ActionBody(BaseModel):
    """An action on a run. Fields other than ``kind`` apply to the kinds named."""

    kind: Literal["acknowledge", "assign", "snooze", "comment", "resolve"]
    assignee: str | None = Field(
        default=None, max_length=MAX_NAME_CHARS, description="assign: who; empty: nobody"
    )
    until: AwareDatetime | None = Field(
        default=None, description="snooze: when it ends (after now, within 90 days)"
    )
    reason: ResolveReason | None = Field(default=None, description="resolve: why (required)")
    comment: str | None = Field(
        default=None, max_length=MAX_COMMENT_CHARS, description="comment: the text; resolve: a note"
    )


@router.get("/me", summary="Who the request acts as")
def me(who: Who) -> Identity:
    """Return the identity actions of this request are recorded under, and its role."""
    return who


@router.get("/board", summary="The list: open incidents and latest reports, filtered")
def get_board(
    request: Request,
    _: Who,
    f: Annotated[list[QuickFilter], Query(description="quick filters, all must hold")] = [],  # noqa: B006
    owner: str | None = None,
    tag: str | None = None,
    source: str | None = None,
    q: Annotated[str | None, Query(max_length=200, description="text search")] = None,
    page: Annotated[int, Query(ge=1, le=MAX_PAGE)] = 1,
    page_size: Annotated[int | None, Query(ge=1, le=500)] = None,
) -> BoardPage:
    """Return one page of the list, most urgent first."""
    web = web_of(request)
    size = page_size or web.settings.review.page_size
    filters = Filters(tuple(dict.fromkeys(f)), owner, tag, source, q, page, size)
    return board(web.store, filters, now=web.clock())


@router.get("/runs/{run_id}", summary="One report: everything its page shows but the trace")
def get_report(request: Request, run_id: RunId, _: Who) -> ReportDocument:
    """Return the report of one run, with its summary as sanitised HTML."""
    web = web_of(request)
    view = report_view(web.store, run_id, secrets=web.settings.secrets(), now=web.clock())
    return ReportDocument(view, render_summary(view.summary))


@router.get("/runs/{run_id}/trace", summary="The agent's trace of one run")
def get_trace(request: Request, run_id: RunId, _: Who) -> list[TraceEventView]:
    """Return every event of the run's agent trace, in order (empty when no agent ran)."""
    web = web_of(request)
    return trace_of(web.store, run_id, secrets=web.settings.secrets())


@router.post("/runs/{run_id}/actions", status_code=201, summary="Record an action on a run")
def post_action(request: Request, run_id: RunId, body: ActionBody, who: Reviewer) -> Action:
    """Acknowledge, assign, snooze, comment or resolve; recorded with who and when."""
    require_csrf(request, who, None)
    web = web_of(request)
    action = ActionRequest(
        ActionKind(body.kind), body.assignee, body.until, body.reason, body.comment
    )
    return record(web.store, run_id, action, actor=who.name, now=web.clock())


@router.post("/runs/{run_id}/run-now", status_code=202, summary="Queue a run of its automation now")
def post_run_now(request: Request, run_id: RunId, who: Admin) -> RunNowResult:
    """Queue a run of the run's automation for the workers, as ``lookout run-now`` does."""
    require_csrf(request, who, None)
    web = web_of(request)
    return run_now(web.store, web.settings, run_id, actor=who.name, now=web.clock(), send=web.send)


@router.get("/outcomes", summary="Runs labelled by a resolve, for measuring the decision model")
def get_outcomes(
    request: Request,
    _: Who,
    automation: str | None = None,
    limit: Annotated[int, Query(ge=1, le=5000)] = 500,
) -> list[Outcome]:
    """Return labelled outcomes, newest first, with the decision model's answers as they were."""
    return outcomes(web_of(request).store, automation=automation, limit=limit)


@router.get("/openapi.json", include_in_schema=False)
def openapi(request: Request, _: Who) -> dict[str, Any]:
    """Return the OpenAPI schema of the API and the operations endpoints (pages left out)."""
    schema: dict[str, Any] = request.app.openapi()
    return schema
