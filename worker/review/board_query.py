"""The list's statement: every row over all rows, filtered, ordered, paged and counted in SQL.

The rows come from ``list_rows`` (``checks.store.list_rows``: each automation's
latest report and each open incident's newest run of its kind, with the run's
list columns, kept by the writers of runs and incidents): every open incident
with a run, and the latest report of every automation without one. Over them,
in one statement (``statement``, common table expressions read by each part,
the board computed once): each row's review state from ``review_actions``,
whether a channel's latest delivery failed from ``alert_deliveries``, the
filters, the order, the page's run ids, the count of each quick filter and the
facets' choices — never a JSON document parsed, never a statement per row.
The statement is built once per shape of filters (``Shape``) and its values
bound per request (``parameters``).
"""

from __future__ import annotations

import datetime as dt
import functools
from typing import Any, NamedTuple

from sqlalchemy import (
    ColumnElement,
    Integer,
    Select,
    Text,
    and_,
    bindparam,
    case,
    cast,
    func,
    literal,
    null,
    or_,
    select,
    union,
    union_all,
)
from sqlalchemy.orm import aliased
from sqlalchemy.sql.selectable import CTE

from checks.report import Finding, Status
from checks.store.alert_tables import DeliveryRow
from checks.store.list_columns import TAG_SEPARATOR
from checks.store.list_rows import REPORT
from checks.store.review_tables import ListRow, ReviewActionRow
from checks.store.run_tables import RunRow, UTCDateTime, table_of
from worker.alerts.delivery_log import FAILED_STATUSES
from worker.review.vocabulary import URGENCY_ORDER, Filters, QuickFilter

_SEVERITY_RANK = {"low": 0, "medium": 1, "high": 2}
_DEFAULT_SEVERITY_RANK = _SEVERITY_RANK["medium"]  # the model's default severity
_CARRIED = (  # a listed row's columns of its run: what the order, quick filters and facets read
    "automation",
    "owner",
    "tags",
    "source",
    "flags",
    "urgency",
    "severity",
    "status",
    "finding",
    "at",
)


def _listed() -> CTE:
    """Every row: its run id and incident id (None for a report) with its run's list columns.

    Read from the stored rows (``checks.store.list_rows``): each open incident
    with a run of its kind, and the latest report of every automation without one.
    """
    rows = table_of(ListRow)
    with_incidents = select(rows.c.automation).where(rows.c.incident_id != REPORT)
    return (
        select(
            rows.c.run_id,
            func.nullif(rows.c.incident_id, REPORT).label("incident_id"),
            *(rows.c[c] for c in _CARRIED),
        )
        .where(or_(rows.c.incident_id != REPORT, rows.c.automation.not_in(with_incidents)))
        .cte("listed")
    )


def _review(listed: CTE) -> CTE:
    """Per row (by run id): actions, whether acknowledged or resolved, the latest snooze's id."""
    action = ReviewActionRow
    on_run = select(listed.c.run_id.label("key"), action.id.label("action_id"), action.kind).join(
        action, action.run_id == listed.c.run_id
    )
    on_incident = select(listed.c.run_id, action.id, action.kind).join(
        action, action.incident_id == listed.c.incident_id
    )
    acted = union(on_run, on_incident).subquery("acted")  # UNION: an action counted once
    return (
        select(
            acted.c.key,
            func.count().label("actions"),
            func.max(case((acted.c.kind == "acknowledge", 1), else_=0)).label("acked"),
            func.max(case((acted.c.kind == "resolve", 1), else_=0)).label("resolved"),
            func.max(case((acted.c.kind == "snooze", acted.c.action_id))).label("snooze_id"),
        )
        .group_by(acted.c.key)
        .cte("review")
    )


def _failed_alerts(listed: CTE) -> CTE:
    """Run ids of the rows whose alerts have a channel whose latest delivery failed.

    A row's deliveries are those of its run and of its incident. Read from the
    failed deliveries (few) rather than from every row's deliveries: a failed
    one counts when no newer delivery of the same channel is among the row's.
    """

    def newer(failed: Any, row_column: Any, column: Any) -> ColumnElement[bool]:
        later = aliased(DeliveryRow, name="later")
        return ~(
            select(later.id)
            .where(
                getattr(later, column) == row_column,
                later.channel == failed.channel,
                later.id > failed.id,
            )
            .exists()
        )

    parts = []
    for on in ("run_id", "incident_id"):
        failed = aliased(DeliveryRow, name=f"failed_by_{on}")
        parts.append(
            select(listed.c.run_id.label("key"))
            .join(failed, getattr(failed, on) == listed.c[on])
            .where(
                failed.status.in_(sorted(FAILED_STATUSES)),
                newer(failed, listed.c.run_id, "run_id"),
                newer(failed, listed.c.incident_id, "incident_id"),
            )
        )
    return union(*parts).cte("failed_alerts")


class Shape(NamedTuple):
    """What a request's statement depends on besides its values: the filters given."""

    owner: bool
    tag: bool
    source: bool
    q: bool
    quick: tuple[QuickFilter, ...]

    @classmethod
    def of(cls, filters: Filters) -> Shape:
        """The shape of ``filters``."""
        return cls(
            bool(filters.owner),
            bool(filters.tag),
            bool(filters.source),
            bool(filters.q),
            tuple(filters.quick),
        )


def _contains(text: str) -> str:
    """A ``LIKE … ESCAPE '/'`` pattern for values containing ``text`` (its ``%``, ``_`` kept)."""
    return "%" + text.replace("/", "//").replace("%", "/%").replace("_", "/_") + "%"


def parameters(filters: Filters, now: dt.datetime, offset: int, size: int) -> dict[str, Any]:
    """The values of a request's statement (``statement``)."""
    params: dict[str, Any] = {"board_now": now, "board_offset": offset, "board_limit": size}
    if filters.owner:
        params["board_owner"] = filters.owner
        params["board_owner_lower"] = filters.owner.lower()
    if filters.tag:
        params["board_tag"] = _contains(f"{TAG_SEPARATOR}{filters.tag}{TAG_SEPARATOR}")
    if filters.source:
        params["board_source"] = filters.source
    if filters.q:
        params["board_q"] = _contains(filters.q.lower())
    return params


def _matches(listed: CTE, run: Any, shape: Shape) -> ColumnElement[bool]:
    """The facets and text search (not the quick filters) over a row's columns.

    ``run`` is the row's run, joined only for a text search (its description and summary).
    """
    clauses: list[ColumnElement[bool]] = []
    if shape.owner:
        clauses.append(
            or_(
                listed.c.owner == bindparam("board_owner", type_=Text()),
                func.lower(listed.c.owner) == bindparam("board_owner_lower", type_=Text()),
            )
        )
    if shape.tag:
        clauses.append(listed.c.tags.like(bindparam("board_tag", type_=Text()), escape="/"))
    if shape.source:
        clauses.append(listed.c.source == bindparam("board_source", type_=Text()))
    if shape.q:
        searched = (listed.c.automation, run.description, listed.c.owner, run.summary)
        clauses.append(
            or_(
                *(
                    func.lower(func.coalesce(column, "")).like(
                        bindparam("board_q", type_=Text()), escape="/"
                    )
                    for column in searched
                )
            )
        )
    return and_(*clauses) if clauses else literal(True)


def _flag(column: Any, flag: str) -> ColumnElement[bool]:
    found: ColumnElement[bool] = column.like(f"%,{flag},%")  # ",a,b,"; a flag is [a-z_]
    return found


def _board(shape: Shape) -> CTE:
    """Every row with what the order, the quick filters and the facets need (no JSON read)."""
    listed = _listed()
    review = _review(listed)
    failed = _failed_alerts(listed)
    run = aliased(RunRow, name="board_run")
    snooze = aliased(ReviewActionRow, name="snooze")
    problem = or_(
        listed.c.status == str(Status.ERROR),
        and_(
            listed.c.status == str(Status.COMPLETED),
            listed.c.finding == str(Finding.NEEDS_ATTENTION),
        ),
    )
    is_problem = case((problem, 1), else_=0)
    ranks = {u: i for i, u in enumerate(URGENCY_ORDER)}  # a problem without one: worth_a_look
    urgency = case(ranks, value=listed.c.urgency, else_=is_problem * ranks["worth_a_look"])
    severity = case(_SEVERITY_RANK, value=listed.c.severity, else_=_DEFAULT_SEVERITY_RANK)
    waits = and_(
        problem,
        func.coalesce(review.c.acked, 0) == 0,
        func.coalesce(review.c.resolved, 0) == 0,
        or_(snooze.until.is_(None), snooze.until <= bindparam("board_now", type_=UTCDateTime())),
    )
    rows = (
        select(
            listed.c.run_id,
            listed.c.incident_id,
            listed.c.automation,
            listed.c.owner,
            listed.c.tags,
            listed.c.source,
            listed.c.flags,
            urgency.label("urgency_rank"),
            severity.label("severity_rank"),
            is_problem.label("problem"),
            listed.c.at,
            case((waits, 1), else_=0).label("needs_me"),
            case((func.coalesce(review.c.actions, 0) == 0, 1), else_=0).label("unreviewed"),
            case((listed.c.run_id.in_(select(failed.c.key)), 1), else_=0).label("failed"),
            case((_matches(listed, run, shape), 1), else_=0).label("matches"),
        )
        .outerjoin(review, review.c.key == listed.c.run_id)
        .outerjoin(snooze, snooze.id == review.c.snooze_id)
    )
    if shape.q:  # only a text search reads the runs' rows (their description and summary)
        rows = rows.join(run, run.id == listed.c.run_id)
    return rows.cte("board").prefix_with("MATERIALIZED")  # read by every part: computed once


def _quick(board: CTE, quick: QuickFilter) -> ColumnElement[bool]:
    """Whether a row passes one quick filter (``QuickFilter`` says what each means)."""
    if quick == QuickFilter.NEEDS_ME:
        return board.c.needs_me == 1
    if quick == QuickFilter.DISAGREEMENTS:
        return _flag(board.c.flags, "double_check_disagrees")
    if quick == QuickFilter.CHANGED:
        return _flag(board.c.flags, "changed_since_last_run")
    if quick == QuickFilter.UNREVIEWED:
        return board.c.unreviewed == 1
    return board.c.failed == 1


def _chosen(board: CTE, shape: Shape) -> ColumnElement[bool]:
    return and_(board.c.matches == 1, *(_quick(board, q) for q in shape.quick))


@functools.lru_cache(maxsize=64)
def statement(shape: Shape) -> Select[Any]:
    """The overview's statement for one shape of filters, built once per process.

    Building it costs more CPU than PostgreSQL spends running it; its values
    (the filters', the time, the page) are bound per request (``parameters``).
    """
    return _overview(_board(shape), shape)


def _overview(board: CTE, shape: Shape) -> Select[Any]:
    """One statement for everything over all rows: the page's run ids, the counts, the facets.

    Its rows are ``(part, position, run_id, incident_id, name, n)``: ``part`` is
    ``row`` (a row of the page at ``position``, 0-based), ``count`` (``name``:
    ``total`` or a quick filter; ``n`` its count) or a facet, ``owner`` / ``tags``
    / ``source`` (``name`` one value, over the unfiltered rows). The board is
    computed once for all of them (a materialized common table expression).
    """
    order = (
        board.c.urgency_rank.desc(),
        board.c.severity_rank.desc(),
        board.c.problem.desc(),
        board.c.at.desc(),
        board.c.run_id.desc(),
    )
    page = (
        select(board.c.run_id, board.c.incident_id, *(c.element for c in order))
        .where(_chosen(board, shape))
        .order_by(*order)
        .offset(bindparam("board_offset", type_=Integer()))
        .limit(bindparam("board_limit", type_=Integer()))
        .subquery("page")
    )
    position = func.row_number().over(
        order_by=(
            page.c.urgency_rank.desc(),
            page.c.severity_rank.desc(),
            page.c.problem.desc(),
            page.c.at.desc(),
            page.c.run_id.desc(),
        )
    )
    none = cast(null(), Integer)
    parts: list[Any] = [
        select(
            literal("row").label("part"),
            (position - 1).label("position"),
            page.c.run_id,
            page.c.incident_id,
            cast(null(), Text).label("name"),
            none.label("n"),
        )
    ]
    counts = [("total", _chosen(board, shape))] + [(str(q), _quick(board, q)) for q in QuickFilter]
    sums = select(  # every count in one pass over the board
        *(
            func.coalesce(func.sum(case((where, 1), else_=0)), 0).label(f"n{i}")
            for i, (_, where) in enumerate(counts)
        )
    ).subquery("counted")
    names = union_all(
        *(
            select(literal(i).label("i"), literal(name).label("name"))
            for i, (name, _) in enumerate(counts)
        )
    ).subquery("count_names")
    parts.append(
        select(
            literal("count"),
            none,
            none,
            none,
            cast(names.c.name, Text),
            case({i: sums.c[f"n{i}"] for i in range(len(counts))}, value=names.c.i),
        ).select_from(names.join(sums, literal(True)))
    )
    for facet, column in (
        ("owner", board.c.owner),
        ("tags", board.c.tags),
        ("source", board.c.source),
    ):
        parts.append(
            select(literal(facet), none, none, none, cast(column, Text), none)
            .where(column.is_not(None), column != "")
            .group_by(column)
        )
    return union_all(*parts)  # type: ignore[return-value]
