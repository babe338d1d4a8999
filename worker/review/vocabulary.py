"""The review service's vocabulary: actions, filters, review state, and the list's rows.

These frozen dataclasses are what ``worker.review`` returns and what the JSON
API serialises as is (FastAPI derives the OpenAPI schema from them). Times
are zone-aware UTC.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from enum import StrEnum

from checks.errors import LookoutError


class ReviewError(LookoutError):
    """A review request that cannot be done; the message is safe to show."""


class NotFound(ReviewError):
    """The run or automation named does not exist (HTTP 404)."""


class InvalidAction(ReviewError):
    """An action whose input breaks a rule, e.g. a snooze into the past (HTTP 422)."""


class ActionKind(StrEnum):
    """What a person can do about a report."""

    ACKNOWLEDGE = "acknowledge"
    ASSIGN = "assign"
    SNOOZE = "snooze"
    COMMENT = "comment"
    RESOLVE = "resolve"
    RUN_NOW = "run_now"


class ResolveReason(StrEnum):
    """Why a report was resolved; kept as the run's labelled outcome.

    ``fixed``: the problem was real and has been fixed; ``expected``: the data
    is as it should be for a reason the automation does not know; ``no_action_needed``:
    real but not worth acting on; ``false_positive``: the report was wrong.
    """

    FIXED = "fixed"
    EXPECTED = "expected"
    NO_ACTION_NEEDED = "no_action_needed"
    FALSE_POSITIVE = "false_positive"


RESOLVE_LABELS: dict[ResolveReason, str] = {
    ResolveReason.FIXED: "Fixed",
    ResolveReason.EXPECTED: "Expected",
    ResolveReason.NO_ACTION_NEEDED: "No action needed",
    ResolveReason.FALSE_POSITIVE: "False positive",
}


def unknown_reason(value: object) -> str:
    """The message for a resolve reason that is not one of ``ResolveReason``, listing them.

    ``value`` is what the request sent, shown as its ``repr`` cut to 40 characters.
    """
    allowed = ", ".join(reason.value for reason in ResolveReason)
    shown = repr(value) if len(repr(value)) <= 40 else repr(value)[:39] + "…"
    return f"unknown resolve reason {shown}: the reason is one of {allowed}"


class QuickFilter(StrEnum):
    """The list's quick filters; several given together must all hold.

    ``needs_me``: Needs attention (or in error), not acknowledged, resolved or
    snoozed; ``disagreements``: the second opinion disagrees with the finding;
    ``changed``: changed since the last run; ``unreviewed``: nobody has acted on
    it; ``delivery_failed``: an alert of it was not delivered in full.
    """

    NEEDS_ME = "needs_me"
    DISAGREEMENTS = "disagreements"
    CHANGED = "changed"
    UNREVIEWED = "unreviewed"
    DELIVERY_FAILED = "delivery_failed"


URGENCY_ORDER = ("nothing_to_do", "worth_a_look", "act_soon", "act_now")
"""The decision model's urgencies, lowest first (``checks.opinion.second_opinion.Urgency``)."""


MAX_PAGE = 100_000
"""The last page number read (the API refuses a larger one; the page shows this one):
past it the row offset outgrows the store's integers."""


@dataclass(frozen=True)
class Filters:
    """What the list shows: quick filters, facets, text search and the page.

    Attributes:
        quick: quick filters, all of which must hold.
        owner: the automation's owner, exactly (case-insensitive).
        tag: one of the automation's tags, exactly.
        source: the run's source, exactly.
        q: text searched (case-insensitive) in the automation's name,
            description, owner and the run's summary.
        page: 1-based page number, at most ``MAX_PAGE``.
        page_size: rows per page.
    """

    quick: tuple[QuickFilter, ...] = ()
    owner: str | None = None
    tag: str | None = None
    source: str | None = None
    q: str | None = None
    page: int = 1
    page_size: int = 50


@dataclass(frozen=True)
class Action:
    """One recorded action (see ``checks.store.review_tables.ReviewActionRow``)."""

    id: int
    run_id: int
    automation: str
    incident_id: int | None
    kind: ActionKind
    actor: str
    at: dt.datetime
    assignee: str | None = None
    until: dt.datetime | None = None
    reason: ResolveReason | None = None
    comment: str | None = None
    queued_run_id: int | None = None


@dataclass(frozen=True)
class ReviewState:
    """Where a report stands with the people reviewing it: the fold of its actions.

    Attributes:
        acknowledged_by: who acknowledged it last, or None.
        acknowledged_at: when.
        assignee: who it is assigned to (None: nobody).
        snoozed_until: the latest snooze's end, even if past (see ``snoozed``).
        resolved_reason: the latest resolve's reason, or None.
        resolved_by: who resolved it.
        resolved_at: when.
        comments: how many comments it has.
        actions: how many actions of any kind it has.
    """

    acknowledged_by: str | None = None
    acknowledged_at: dt.datetime | None = None
    assignee: str | None = None
    snoozed_until: dt.datetime | None = None
    resolved_reason: ResolveReason | None = None
    resolved_by: str | None = None
    resolved_at: dt.datetime | None = None
    comments: int = 0
    actions: int = 0

    def snoozed(self, now: dt.datetime) -> bool:
        """Whether a snooze is still running at ``now``."""
        return self.snoozed_until is not None and self.snoozed_until > now


@dataclass(frozen=True)
class DeliveryStatus:
    """The alerts of a list row, counted by their channel's latest delivery.

    ``state``: ``failed`` (a channel's latest delivery failed or only its
    fallback went out), ``pending`` (sending or deferred), ``sent``, or
    ``none`` (no alert was sent for it).
    """

    state: str = "none"
    sent: int = 0
    failed: int = 0
    pending: int = 0
    failed_channels: tuple[str, ...] = ()


@dataclass(frozen=True)
class BoardRow:
    """One row of the list: an open incident, or an automation's latest report.

    Attributes:
        run_id: the run shown: the incident's latest run, or the latest report.
        incident_id: the open incident, when the row is one.
        incident_kind: ``attention`` or ``error``, when the row is an incident.
        opened_at: when the incident opened.
        flags: the second opinion's flags.
        urgency: the second opinion's urgency, or None.
        goal_met: P(goal met) from the second opinion, or None.
        last_run_at: when the automation's latest run of any kind finished.
        finished_at: when the run shown finished.
        severity: the automation's severity (``low``, ``medium``, ``high``), as written.
        what_is_wrong: what is wrong, in one line (``worker.review.what_is_wrong``):
            the first failing check with its value and expectation, the
            error's reason, ``name: not evaluated: reason``…; None when Clear.
            Untrusted text.
    """

    automation: str
    run_id: int
    status: str
    finding: str | None
    scheduled_for: dt.datetime
    finished_at: dt.datetime | None
    last_run_at: dt.datetime | None
    incident_id: int | None = None
    incident_kind: str | None = None
    opened_at: dt.datetime | None = None
    flags: tuple[str, ...] = ()
    urgency: str | None = None
    goal_met: float | None = None
    owner: str | None = None
    tags: tuple[str, ...] = ()
    source: str | None = None
    description: str | None = None
    severity: str | None = None
    what_is_wrong: str | None = None
    delivery: DeliveryStatus = field(default_factory=DeliveryStatus)
    review: ReviewState = field(default_factory=ReviewState)
    needs_me: bool = False


@dataclass(frozen=True)
class BoardPage:
    """One page of the list, and the choices of its facets over all rows.

    Attributes:
        rows: this page's rows, most urgent first (``worker.review.board`` gives the order).
        total: rows matching the filters, over all pages.
        pages: number of pages (at least 1).
        owners: every owner among the unfiltered rows (for the owner filter).
        tags: every tag among the unfiltered rows.
        sources: every source among the unfiltered rows.
        counts: rows matching each quick filter alone, over the unfiltered rows.
    """

    rows: list[BoardRow]
    total: int
    page: int
    page_size: int
    pages: int
    owners: list[str]
    tags: list[str]
    sources: list[str]
    counts: dict[str, int]
