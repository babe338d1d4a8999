"""The review list's stored rows are what a full scan of the runs and incidents gives, always.

Every writer of runs and incidents keeps them (``checks.store.list_rows``): runs
completed, in error, skipped (created so, by the dispatcher), failed, reaped;
runs ending out of order; incidents opening and closing. After each step the
rows kept are compared with ``scanned`` (every run read again) and with the
list's rule written in Python over every run, on SQLite and PostgreSQL; and on
PostgreSQL a run that ends while its automation's incident opens is listed
whichever transaction commits first.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor, wait
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select, update

from checks.clock import utcnow
from checks.report import Finding, RunReport, Status
from checks.store.alert_tables import IncidentRow
from checks.store.incidents import decide_run_events
from checks.store.list_rows import (
    COLUMNS,
    REPORT,
    incident_opened,
    lock,
    rebuild,
    runs_ended,
    scanned,
)
from checks.store.review_tables import ListRow
from checks.store.run_tables import RunRow, table_of
from checks.store.store import Store
from tests.stored_reports import store_report
from worker.review import Filters, board
from worker.service.queue_records import NewRun
from worker.service.run_queue import RunQueue

T0 = dt.datetime(2026, 6, 1, tzinfo=dt.UTC)
HOUR = dt.timedelta(hours=1)
NA, CLEAR = Finding.NEEDS_ATTENTION, Finding.CLEAR
DEFINITION = {"owner": "ops", "tags": ["rates"], "severity": "high", "source": "flights"}


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    url = (
        f"sqlite:///{tmp_path / 'list.db'}"
        if request.param == "sqlite"
        else request.getfixturevalue("empty_pg_url")
    )
    opened = Store(url)
    yield opened
    opened.close()


def kept(store: Store) -> list[tuple[Any, ...]]:
    table = table_of(ListRow)
    with store.engine.connect() as conn:
        rows = conn.execute(select(table).order_by(table.c.automation, table.c.incident_id))
        return [tuple(r) for r in rows]


def full_scan(store: Store) -> list[tuple[Any, ...]]:
    found = scanned().subquery()
    with store.engine.connect() as conn:
        query = select(*(found.c[c] for c in COLUMNS)).order_by(
            found.c.automation, found.c.incident_id
        )
        return [tuple(r) for r in conn.execute(query)]


def by_rule(store: Store) -> set[tuple[str, int, int | None]]:
    """(automation, run id, incident id) of every listed row, by the list's rule, in Python."""
    with store.session() as session:
        runs = session.execute(
            select(
                RunRow.id, RunRow.automation, RunRow.scheduled_for, RunRow.status, RunRow.finding
            )
        ).all()
        table = IncidentRow
        incidents = session.execute(
            select(table.id, table.automation, table.kind, table.opened_run_id).where(
                table.open_key.is_not(None)
            )
        ).all()
    shown: set[tuple[str, int, int | None]] = set()
    for incident in incidents:
        of_kind = [
            r
            for r in runs
            if r.automation == incident.automation
            and r.id >= (incident.opened_run_id or 0)
            and (
                r.status == "error"
                if incident.kind == "error"
                else (r.status, r.finding) == ("completed", "needs_attention")
            )
        ]
        if of_kind:
            newest = max(of_kind, key=lambda r: (r.scheduled_for, r.id))
            shown.add((incident.automation, newest.id, incident.id))
    with_incidents = {automation for automation, _, _ in shown}
    for automation in {r.automation for r in runs} - with_incidents:
        mine = [r for r in runs if r.automation == automation]
        reported = [r for r in mine if r.status in ("completed", "error")]
        skipped = [r for r in mine if r.status == "skipped"]
        if reported or skipped:
            latest = max(reported or skipped, key=lambda r: r.scheduled_for)
            shown.add((automation, latest.id, None))
    return shown


def listed(store: Store) -> set[tuple[str, int, int | None]]:
    rows = board(store, Filters(page_size=500), now=utcnow()).rows
    return {(r.automation, r.run_id, r.incident_id) for r in rows}


def agree(store: Store) -> None:
    assert kept(store) == full_scan(store)
    assert listed(store) == by_rule(store)


def stored(
    store: Store, name: str, hours: float, status: Status, finding: Finding | None = None
) -> RunReport:
    """A run stored the way ``lookout run`` stores one, then its incidents moved."""
    report = RunReport(
        automation=name,
        scheduled_for=T0 + hours * HOUR,
        status=status,
        finding=finding,
        definition=DEFINITION,
        second_opinion={"urgency": "act_soon", "flags": ["changed_since_last_run"]},
    )
    store_report(store, report)
    decide_run_events(store.engine, report, now=T0 + hours * HOUR, announce=False)
    return report


def test_the_kept_rows_follow_every_writer_of_runs_and_incidents(store: Store) -> None:
    queue = RunQueue(store)
    assert kept(store) == [] and listed(store) == set()
    # completed runs, an attention incident opening, continuing and resolving
    stored(store, "a", 0, Status.COMPLETED, CLEAR)
    agree(store)
    first = stored(store, "a", 1, Status.COMPLETED, NA)
    agree(store)
    [(_, run_id, incident_id)] = listed(store)
    assert (run_id, incident_id is not None) == (first.run_id, True)
    stored(store, "a", 2, Status.ERROR)  # an error incident beside the attention one
    agree(store)
    assert len(listed(store)) == 2
    later = stored(store, "a", 3, Status.COMPLETED, NA)  # closes the error, continues attention
    agree(store)
    assert {r for _, r, _ in listed(store)} == {later.run_id}
    stored(store, "a", 4, Status.COMPLETED, CLEAR)  # resolves it: the report shows again
    agree(store)
    assert {(a, i) for a, _, i in listed(store)} == {("a", None)}
    # a run of an older slot ending last: the newer report stays
    stored(store, "a", -5, Status.COMPLETED, NA)
    agree(store)
    # skipped slots (the dispatcher's) list only an automation with nothing else
    down = "the source was down"
    skip = [NewRun("b", T0 + k * HOUR, "flights", DEFINITION, reason=down) for k in (1, 2)]
    skip.append(NewRun("a", T0 + 9 * HOUR, "flights", DEFINITION, reason="busy"))
    queue.record(skip, {}, now=T0)
    agree(store)
    assert ("b", None) in {(a, i) for a, _, i in listed(store)}
    assert store.create_run("c", T0, status=Status.SKIPPED, definition=DEFINITION) is not None
    assert store.create_run("c", T0 - HOUR, status=Status.ERROR, error="no source") is not None
    agree(store)  # in error beats skipped, though older
    # failures: Store.fail_run, RunQueue.fail, and the reaper giving up
    queued = queue.record([NewRun("b", T0 + 3 * HOUR, "flights", DEFINITION)], {}, now=T0)
    info = queue.run_info(queued[0].id)
    assert info is not None and queue.claim(info, lease_s=60, max_attempts=3) == 1
    assert queue.fail(queued[0].id, "worker lost", attempt=1)
    agree(store)
    started = store.start_run("d", T0, lease_s=60, definition=DEFINITION)
    assert started is not None and store.fail_run(*started, "internal error")
    agree(store)
    reaped = store.start_run("e", T0, lease_s=-1, definition=DEFINITION)  # its process is gone
    requeued = queue.record([NewRun("e", T0 + HOUR, "flights", DEFINITION)], {}, now=T0)
    info = queue.run_info(requeued[0].id)
    assert info is not None and queue.claim(info, lease_s=-1, max_attempts=3) == 1
    result = queue.reap(utcnow(), max_attempts=3)
    assert reaped is not None and result.gave_up == [reaped[0]]
    assert [q.id for q in result.requeued] == [requeued[0].id]  # queued again: not listed
    agree(store)
    assert {r for a, r, _ in listed(store) if a == "e"} == {reaped[0]}
    # an error incident whose newest run came after other kinds of runs
    for hours, status, finding in [(0, Status.ERROR, None), (1, Status.COMPLETED, NA),
                                   (2, Status.ERROR, None), (3, Status.ERROR, None)]:  # fmt: skip
        stored(store, "f", hours, status, finding)
        agree(store)
    assert len([a for a, _, _ in listed(store) if a == "f"]) == 2


def test_an_incident_lists_its_newest_run_of_its_kind_since_the_run_that_opened_it(
    store: Store,
) -> None:
    stored(store, "a", 0, Status.COMPLETED, CLEAR)
    newer = RunReport("a", T0 + 5 * HOUR, Status.COMPLETED, finding=NA, definition=DEFINITION)
    store_report(store, newer)  # a newer slot's problem, stored first and not planned yet
    older = RunReport("a", T0 + 2 * HOUR, Status.COMPLETED, finding=NA, definition=DEFINITION)
    store_report(store, older)
    decide_run_events(store.engine, older, now=T0, announce=False)  # opens the incident at its id
    agree(store)
    decide_run_events(
        store.engine, newer, now=T0, announce=False
    )  # older than one planned: no move
    agree(store)
    [(_, run_id, incident_id)] = listed(store)
    assert incident_id is not None and run_id == older.run_id  # the newer one came before it
    last = stored(store, "a", 6, Status.COMPLETED, NA)
    agree(store)
    assert listed(store) == {("a", last.run_id, incident_id)}


def test_the_board_store_rebuild_gives_the_kept_rows(store: Store) -> None:
    stored(store, "a", 0, Status.COMPLETED, NA)
    stored(store, "b", 0, Status.SKIPPED)
    stored(store, "c", 0, Status.ERROR)
    before = kept(store)
    with store.engine.begin() as conn:
        rebuild(conn)
    assert kept(store) == before == full_scan(store)
    assert {row[1] for row in before} >= {REPORT}


def test_a_run_deleted_by_hand_takes_its_row_and_the_list_still_answers(store: Store) -> None:
    first = stored(store, "a", 0, Status.COMPLETED, CLEAR)
    second = stored(store, "a", 1, Status.COMPLETED, CLEAR)
    stored(store, "b", 0, Status.COMPLETED, CLEAR)
    assert listed(store) == {("a", second.run_id, None), ("b", 3, None)}
    with store.engine.begin() as conn:
        conn.execute(table_of(RunRow).delete().where(table_of(RunRow).c.id == second.run_id))
    # the row went with its run (a foreign key, as every table of a run's): no page error
    assert listed(store) == {("b", 3, None)}
    with store.engine.begin() as conn:
        rebuild(conn)  # and the rows built again list the automation's earlier report
    assert listed(store) == {("a", first.run_id, None), ("b", 3, None)}
    agree(store)


def test_many_slots_skipped_at_once_keep_each_automations_newest(store: Store) -> None:
    slots = [
        NewRun(name, T0 + k * HOUR, "flights", DEFINITION, reason="catch-up skipped")
        for k in range(600)
        for name in ("a", "b")
    ]  # 1,200 runs: more than one statement's worth of run ids
    RunQueue(store).record(slots, {}, now=T0)
    agree(store)
    slot = COLUMNS.index("scheduled_for")
    assert {(row[0], row[slot]) for row in kept(store)} == {(a, T0 + 599 * HOUR) for a in "ab"}


def _needs_attention(name: str, hours: float) -> RunReport:
    return RunReport(name, T0 + hours * HOUR, Status.COMPLETED, finding=NA, definition=DEFINITION)


def _blocked(pool: ThreadPoolExecutor, call: Any) -> Future[Any]:
    """``call`` started in a thread, shown to wait (on a row lock) for half a second."""
    started = pool.submit(call)
    assert wait([started], timeout=0.5).not_done == {started}
    return started


@pytest.mark.slow
def test_a_run_ending_while_its_incident_opens_is_listed_either_way(empty_pg_url: str) -> None:
    """PostgreSQL: whichever commits first, the other's later statement sees it."""
    store = Store(empty_pg_url)
    pool = ThreadPoolExecutor(1)
    runs, incidents = table_of(RunRow), table_of(IncidentRow)
    try:
        # a run ends and has not committed yet: the incident opening meanwhile waits
        opening = _needs_attention("a", 0)
        store_report(store, opening)  # ended, not planned yet
        started = store.start_run("a", T0 + HOUR, lease_s=600, definition=DEFINITION)
        assert started is not None
        with store.engine.connect() as other:
            transaction = other.begin()
            ended = {"status": "completed", "finding": "needs_attention", "finished_at": T0}
            other.execute(update(runs).where(runs.c.id == started[0]).values(ended))
            runs_ended(other, [started[0]])
            planning = _blocked(pool, lambda: decide_run_events(store.engine, opening, now=T0))
            transaction.commit()
        assert planning.result().new
        agree(store)
        assert {r for a, r, i in listed(store) if i is not None} == {started[0]}
        # an incident opens (as decide_run_events opens one) and has not committed yet: a run ending
        # meanwhile waits, then lists itself as the incident's newest run
        first = _needs_attention("b", 0)
        store_report(store, first)
        started = store.start_run("b", T0 + HOUR, lease_s=600, definition=DEFINITION)
        assert started is not None and first.run_id is not None
        with store.engine.connect() as other:
            transaction = other.begin()
            lock(other, "b")
            opened = other.execute(
                incidents.insert()
                .values(automation="b", kind="attention", open_key="b:attention", opened_at=T0)
                .values(opened_run_id=first.run_id, reminders=0)
                .returning(incidents.c.id)
            ).scalar_one()
            incident_opened(other, opened)
            later = _needs_attention("b", 1)
            ending = _blocked(pool, lambda: store.finish_run(*started, later))
            transaction.commit()
        assert ending.result() is True
        agree(store)
        assert ("b", started[0], opened) in listed(store)
    finally:
        pool.shutdown()
        store.close()
