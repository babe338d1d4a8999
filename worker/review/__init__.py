"""The review service: what the review page, its JSON API and ``/metrics`` ask of the store.

Synchronous and free of any web framework, so a route (``worker.web``) only
parses its input, calls one function here and formats the result:

- ``board``: the list — one row per open incident or latest report per automation;
- ``report_view``, ``trace_of``: one report, and its agent trace;
- ``record``, ``run_now``, ``outcomes``: actions with who and when, and the
  labelled outcomes resolves leave;
- ``stats``: the numbers ``/metrics`` exports, computed at each scrape.
"""

from worker.review.actions import ActionRequest, Outcome, RunNowResult, outcomes, record, run_now
from worker.review.board import board
from worker.review.detail import report_view, trace_of
from worker.review.stats import Stats, stats
from worker.review.views import ReportView, TraceEventView
from worker.review.vocabulary import (
    RESOLVE_LABELS,
    Action,
    ActionKind,
    BoardPage,
    BoardRow,
    Filters,
    InvalidAction,
    NotFound,
    QuickFilter,
    ResolveReason,
    ReviewError,
    ReviewState,
)

__all__ = [
    "RESOLVE_LABELS",
    "Action",
    "ActionKind",
    "ActionRequest",
    "BoardPage",
    "BoardRow",
    "Filters",
    "InvalidAction",
    "NotFound",
    "Outcome",
    "QuickFilter",
    "ReportView",
    "ResolveReason",
    "ReviewError",
    "ReviewState",
    "RunNowResult",
    "Stats",
    "TraceEventView",
    "board",
    "outcomes",
    "record",
    "report_view",
    "run_now",
    "stats",
    "trace_of",
]
