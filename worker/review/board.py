"""The review list: one row per open incident, else the latest report per automation.

The rows: every automation's latest report (its newest completed or errored
run; a skipped one only when it has nothing else), replaced by one row per
open incident when it has any (each showing the incident's newest run of its
kind). Each row has its review state (``worker.review.state``), its alerts'
delivery status, and what is wrong in one line (``worker.review.what_is_wrong``).

Order: the decision model's urgency, most urgent first (a row without one, a
run in error or no decision model, ranks as ``worth_a_look`` when it is a
problem, else as ``nothing_to_do``); then the automation's severity (high,
medium, low; none given counts as the default, medium); then problems (Needs
attention, error) before the rest; then newest first.

Everything over all rows — the rows themselves, the filters, the order, the
page, the counts of each quick filter, the facets' choices — is computed in SQL
(``_board``: common table expressions over ``runs``, ``alert_incidents``,
``review_actions`` and ``alert_deliveries``), from plain columns of ``runs``
(``checks.store.list_columns``), never by parsing JSON per row. A request sends
a fixed number of statements whatever the number of rows: the counts and
facets, the page's run ids, then for those runs only their columns, actions,
deliveries, checks with a problem and each automation's last run.
"""

from __future__ import annotations

import datetime as dt
import functools
import math
from collections.abc import Iterable, Sequence
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
from sqlalchemy.orm import Session, aliased, load_only
from sqlalchemy.sql.selectable import CTE

from checks.opinion.second_opinion import read_opinion
from checks.report import CheckOutcome, CheckResult, Finding, Status
from checks.store.alert_tables import DeliveryRow, IncidentRow
from checks.store.list_columns import TAG_SEPARATOR, split_tags
from checks.store.review_tables import ReviewActionRow
from checks.store.run_tables import CheckRow, RunRow, UTCDateTime
from checks.store.store import Store, check_result
from worker.alerts.delivery_log import FAILED_STATUSES
from worker.review.state import actions_for, fold, needs_me, subject_actions
from worker.review.vocabulary import (
    URGENCY_ORDER,
    BoardPage,
    BoardRow,
    DeliveryStatus,
    Filters,
    QuickFilter,
)
from worker.review.what_is_wrong import what_is_wrong

_REPORTED = (str(Status.COMPLETED), str(Status.ERROR))
_SEVERITY_RANK = {"low": 0, "medium": 1, "high": 2}
_DEFAULT_SEVERITY_RANK = _SEVERITY_RANK["medium"]  # the model's default severity
_SHOWN = [  # what a row shows of its run: never the definition, agent or evidence JSON
    getattr(RunRow, c)
    for c in (
        "automation",
        "status",
        "finding",
        "scheduled_for",
        "finished_at",
        "second_opinion",
        "owner",
        "tags",
        "source",
        "definition_source",
        "description",
        "severity",
        "error",
        "summary",
    )
]
_SENT = [getattr(DeliveryRow, c) for c in ("run_id", "incident_id", "channel", "status")]


def opinion_fields(
    opinion: dict[str, Any] | None,
) -> tuple[tuple[str, ...], str | None, float | None]:
    """Return (flags, urgency, P(goal met)) from a stored ``second_opinion``; absent parts empty."""
    read = read_opinion(opinion)
    return read.flags, read.urgency, read.goal_met


def _carried(run: Any) -> list[Any]:
    """A listed row's columns of its run: what the order, quick filters and facets read.

    All of them are in ``ix_runs_list`` (PostgreSQL: as included columns), so
    the rows are read from that index alone, never from the runs' wide rows.
    """
    return [
        run.automation.label("automation"),
        run.owner.label("owner"),
        run.tags.label("tags"),
        func.coalesce(run.source, run.definition_source).label("source"),
        run.flags.label("flags"),
        run.urgency.label("urgency"),
        run.severity.label("severity"),
        run.status.label("status"),
        run.finding.label("finding"),
        func.coalesce(run.finished_at, run.scheduled_for).label("at"),
    ]


def _listed() -> CTE:
    """Every row: its run id and incident id (None for a report) with its run's list columns."""
    reported = case((RunRow.status.in_(_REPORTED), RunRow.scheduled_for))
    skipped = case((RunRow.status == str(Status.SKIPPED), RunRow.scheduled_for))
    latest = (  # one pass: the newest report, else (nothing reported) the newest skipped run
        select(
            RunRow.automation,
            func.coalesce(func.max(reported), func.max(skipped)).label("at"),
        )
        .group_by(RunRow.automation)
        .subquery("latest")
    )
    run = aliased(RunRow, name="incident_run")
    of_kind = or_(
        and_(IncidentRow.kind == "error", run.status == str(Status.ERROR)),
        and_(
            IncidentRow.kind != "error",
            run.status == str(Status.COMPLETED),
            run.finding == str(Finding.NEEDS_ATTENTION),
        ),
    )
    newest = func.row_number().over(
        partition_by=IncidentRow.id, order_by=(run.scheduled_for.desc(), run.id.desc())
    )
    ranked = (
        select(
            run.id.label("run_id"),
            IncidentRow.id.label("incident_id"),
            *_carried(run),
            newest.label("n"),
        )
        .join(
            run,
            and_(
                run.automation == IncidentRow.automation,
                run.id >= func.coalesce(IncidentRow.opened_run_id, 0),
                of_kind,
            ),
        )
        .where(IncidentRow.open_key.is_not(None))
        .cte("incident_runs")
    )
    incidents = select(*(c for c in ranked.c if c.name != "n")).where(ranked.c.n == 1)
    report = aliased(RunRow, name="report_run")
    reports = (
        select(
            report.id.label("run_id"),
            cast(null(), Integer).label("incident_id"),
            *_carried(report),
        )
        .join(
            latest,
            and_(report.automation == latest.c.automation, report.scheduled_for == latest.c.at),
        )
        .where(report.automation.not_in(select(ranked.c.automation).where(ranked.c.n == 1)))
    )
    return union_all(incidents, reports).cte("listed")


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


class _Shape(NamedTuple):
    """What a request's statement depends on besides its values: the filters given."""

    owner: bool
    tag: bool
    source: bool
    q: bool
    quick: tuple[QuickFilter, ...]

    @classmethod
    def of(cls, filters: Filters) -> _Shape:
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


def _params(filters: Filters, now: dt.datetime, offset: int, size: int) -> dict[str, Any]:
    """The values of a request's statement (``_statement``)."""
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


def _matches(listed: CTE, run: Any, shape: _Shape) -> ColumnElement[bool]:
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


def _board(shape: _Shape) -> CTE:
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


def _chosen(board: CTE, shape: _Shape) -> ColumnElement[bool]:
    return and_(board.c.matches == 1, *(_quick(board, q) for q in shape.quick))


@functools.lru_cache(maxsize=64)
def _statement(shape: _Shape) -> Select[Any]:
    """The overview's statement for one shape of filters, built once per process.

    Building it costs more CPU than PostgreSQL spends running it; its values
    (the filters', the time, the page) are bound per request (``_params``).
    """
    return _overview(_board(shape), shape)


def _overview(board: CTE, shape: _Shape) -> Select[Any]:
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


def _delivery_status(rows: Sequence[DeliveryRow]) -> DeliveryStatus:
    """Count each channel by its latest delivery (by id)."""
    latest: dict[str, DeliveryRow] = {}
    for row in sorted(rows, key=lambda r: r.id):
        latest[row.channel] = row
    failed = tuple(sorted(c for c, r in latest.items() if r.status in FAILED_STATUSES))
    pending = sum(1 for r in latest.values() if r.status in ("sending", "deferred"))
    sent = sum(1 for r in latest.values() if r.status == "sent")
    if failed:
        state = "failed"
    elif pending:
        state = "pending"
    else:
        state = "sent" if sent else "none"
    return DeliveryStatus(state, sent, len(failed), pending, failed)


def _problem_checks(session: Session, run_ids: Sequence[int]) -> dict[int, list[CheckResult]]:
    """The checks of these runs that did not pass, in order, by run (one statement)."""
    not_passed = or_(
        CheckRow.outcome.in_([str(o) for o in CheckOutcome if o is not CheckOutcome.PASSED]),
        and_(
            CheckRow.outcome.is_(None), or_(CheckRow.passed.is_(None), CheckRow.passed.is_(False))
        ),
    )
    query = (
        select(CheckRow)
        .where(CheckRow.run_id.in_(run_ids), not_passed)
        .order_by(CheckRow.run_id, CheckRow.position)
    )
    found: dict[int, list[CheckResult]] = {}
    for row in session.scalars(query):
        found.setdefault(row.run_id, []).append(check_result(row))
    return found


def _page_rows(
    session: Session, picked: Sequence[tuple[int, int | None]], now: dt.datetime
) -> list[BoardRow]:
    """The page's rows in full, in the order given: a fixed number of statements for any page."""
    if not picked:
        return []
    run_ids = [run_id for run_id, _ in picked]
    incident_ids = [i for _, i in picked if i is not None]
    shown = select(RunRow).options(load_only(*_SHOWN)).where(RunRow.id.in_(run_ids))
    runs = {r.id: r for r in session.scalars(shown)}
    query = select(IncidentRow).where(IncidentRow.id.in_(incident_ids))
    incidents = {i.id: i for i in session.scalars(query)}
    actions = actions_for(session, run_ids, incident_ids)
    clause = or_(DeliveryRow.run_id.in_(run_ids), DeliveryRow.incident_id.in_(incident_ids))
    by_run: dict[int, list[DeliveryRow]] = {}
    by_incident: dict[int, list[DeliveryRow]] = {}
    for d in session.scalars(select(DeliveryRow).options(load_only(*_SENT)).where(clause)):
        if d.run_id is not None:
            by_run.setdefault(d.run_id, []).append(d)
        if d.incident_id is not None:
            by_incident.setdefault(d.incident_id, []).append(d)
    checks = _problem_checks(session, run_ids)
    automations = sorted({r.automation for r in runs.values()})
    last_run = dict(
        session.execute(
            select(RunRow.automation, func.max(RunRow.finished_at))
            .where(RunRow.automation.in_(automations))
            .group_by(RunRow.automation)
        ).all()
    )
    rows: list[BoardRow] = []
    for run_id, incident_id in picked:
        run = runs[run_id]
        incident = incidents.get(incident_id) if incident_id is not None else None
        review = fold(subject_actions(actions, run_id, incident_id))
        sent = by_run.get(run_id, [])
        if incident_id is not None:
            sent = sent + by_incident.get(incident_id, [])
        mine = {d.id: d for d in sent}  # a delivery of both the run and the incident: once
        flags, urgency, goal_met = opinion_fields(run.second_opinion)
        rows.append(
            BoardRow(
                automation=run.automation,
                run_id=run.id,
                status=run.status,
                finding=run.finding,
                scheduled_for=run.scheduled_for,
                finished_at=run.finished_at,
                last_run_at=last_run.get(run.automation),
                incident_id=incident_id,
                incident_kind=incident.kind if incident else None,
                opened_at=incident.opened_at if incident else None,
                flags=flags,
                urgency=urgency,
                goal_met=goal_met,
                owner=run.owner,
                tags=split_tags(run.tags),
                source=run.source or run.definition_source,
                description=run.description,
                severity=run.severity,
                what_is_wrong=what_is_wrong(
                    run.status, run.finding, run.error, run.summary or "", checks.get(run.id, [])
                ),
                delivery=_delivery_status(list(mine.values())),
                review=review,
                needs_me=needs_me(run.status, run.finding, review, now),
            )
        )
    return rows


def _facets(found: Iterable[Any]) -> tuple[list[str], list[str], list[str]]:
    owners: set[str] = set()
    tags: set[str] = set()
    sources: set[str] = set()
    for facet, value in found:
        if facet == "owner":
            owners.add(value)
        elif facet == "tags":
            tags.update(split_tags(value))
        else:
            sources.add(value)
    return sorted(owners), sorted(tags), sorted(sources)


def board(store: Store, filters: Filters, *, now: dt.datetime) -> BoardPage:
    """Return one page of the list.

    Args:
        store: the report store.
        filters: what to show; a page past the last gives the last page.
        now: the current time (aware); decides whether a snooze still runs.
    """
    size = max(1, filters.page_size)
    with store.session() as session:
        statement = _statement(_Shape.of(filters))
        found = session.execute(
            statement, _params(filters, now, (filters.page - 1) * size, size)
        ).all()
        counted = {r.name: int(r.n) for r in found if r.part == "count"}
        total = counted["total"]
        pages = max(1, math.ceil(total / size))
        page = min(max(1, filters.page), pages)
        if page != filters.page:  # past the last page (rare): the last page instead
            found = session.execute(statement, _params(filters, now, (page - 1) * size, size)).all()
        picked = [
            (int(r.run_id), r.incident_id)
            for r in sorted((r for r in found if r.part == "row"), key=lambda r: r.position)
        ]
        owners, tags, sources = _facets(
            (r.part, r.name) for r in found if r.part not in ("row", "count")
        )
        rows = _page_rows(session, picked, now)
    return BoardPage(
        rows=rows,
        total=total,
        page=page,
        page_size=size,
        pages=pages,
        owners=owners,
        tags=tags,
        sources=sources,
        counts={str(q): counted[str(q)] for q in QuickFilter},
    )
