"""The list in SQL: its statements do not grow with the rows; its filters, counts and order agree.

Stores from ``board_store.build`` (every automation's runs, incidents,
deliveries and actions as the run path leaves them), on SQLite and PostgreSQL.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import event

from checks.store.list_rows import rebuild
from checks.store.run_tables import RunRow
from checks.store.store import Store
from tests.worker.review.board_store import build
from worker.review import Filters, QuickFilter, board, stats
from worker.review.vocabulary import BoardRow

NOW = dt.datetime(2026, 5, 20, tzinfo=dt.UTC)


class Statements:
    """Counts the statements an engine sends."""

    def __init__(self, store: Store) -> None:
        self.count = 0
        event.listen(store.engine, "before_cursor_execute", self._seen)

    def _seen(self, *_: Any) -> None:
        self.count += 1


def statements_of(store: Store, filters: Filters) -> int:
    counter = Statements(store)
    board(store, filters, now=NOW)
    return counter.count


@pytest.fixture(params=["sqlite", "postgresql"])
def big_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    """60 automations, 300 runs, built by ``board_store.build``, on each database."""
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'board.db'}"
    else:
        url = request.getfixturevalue("empty_pg_url")
    build(url, 60, 300)
    store = Store(url)
    yield store
    store.close()


@pytest.mark.slow
def test_a_request_sends_the_same_statements_for_10_or_300_automations(tmp_path: Path) -> None:
    small_url, large_url = (f"sqlite:///{tmp_path / n}" for n in ("small.db", "large.db"))
    build(small_url, 10, 50)
    build(large_url, 300, 1500)
    small, large = Store(small_url), Store(large_url)
    for filters in [
        Filters(),
        Filters(page=2, page_size=5),
        Filters(quick=(QuickFilter.NEEDS_ME, QuickFilter.UNREVIEWED), q="bench"),
        Filters(tag="rates", source="flights", page=99),
    ]:
        assert board(large, filters, now=NOW).total > board(small, filters, now=NOW).total > 0
        assert statements_of(small, filters) == statements_of(large, filters) <= 10, filters
    small_stats, large_stats = Statements(small), Statements(large)
    stats(small, now=NOW)
    stats(large, now=NOW)
    assert small_stats.count == large_stats.count
    small.close()
    large.close()


def _passes(row: BoardRow, quick: QuickFilter) -> bool:
    """Each quick filter as the page's rows state it (computed in Python from their actions)."""
    return {
        QuickFilter.NEEDS_ME: row.needs_me,
        QuickFilter.DISAGREEMENTS: "double_check_disagrees" in row.flags,
        QuickFilter.CHANGED: "changed_since_last_run" in row.flags,
        QuickFilter.UNREVIEWED: row.review.actions == 0,
        QuickFilter.DELIVERY_FAILED: row.delivery.state == "failed",
    }[quick]


@pytest.mark.slow
def test_the_sql_filters_and_counts_agree_with_each_rows_own_state(big_store: Store) -> None:
    everything = board(big_store, Filters(page_size=500), now=NOW)
    rows = everything.rows
    assert everything.total == len(rows)
    assert len({r.automation for r in rows}) == 60  # a row per automation, or per open incident
    assert everything.total == everything.counts[QuickFilter.UNREVIEWED] + sum(
        1 for r in rows if r.review.actions
    )
    for quick in QuickFilter:
        chosen = board(big_store, Filters(quick=(quick,), page_size=500), now=NOW)
        assert [r.run_id for r in chosen.rows] == [r.run_id for r in rows if _passes(r, quick)]
        assert chosen.total == everything.counts[quick], quick
    assert 0 < everything.counts[QuickFilter.NEEDS_ME] < everything.total
    assert everything.counts[QuickFilter.DELIVERY_FAILED] > 0
    assert everything.owners == sorted({r.owner for r in rows if r.owner})
    assert everything.tags == sorted({t for r in rows for t in r.tags})
    assert everything.sources == ["flights"]
    owner = rows[0].owner
    assert owner is not None
    mine = board(big_store, Filters(owner=owner.upper(), page_size=500), now=NOW)
    assert [r.run_id for r in mine.rows] == [r.run_id for r in rows if r.owner == owner]
    tagged = board(big_store, Filters(tag="rates", page_size=500), now=NOW)
    assert [r.run_id for r in tagged.rows] == [r.run_id for r in rows if "rates" in r.tags]


def test_urgency_then_severity_then_problems_then_newest(big_store: Store) -> None:
    rows = board(big_store, Filters(page_size=500), now=NOW).rows
    ranks = ("nothing_to_do", "worth_a_look", "act_soon", "act_now")
    severities = {"low": 0, "medium": 1, "high": 2}

    def key(row: BoardRow) -> tuple[int, int, int, float]:
        problem = row.status == "error" or row.finding == "needs_attention"
        urgency = row.urgency or ("worth_a_look" if problem else "nothing_to_do")
        at = row.finished_at or row.scheduled_for
        return (
            -ranks.index(urgency),
            -severities[row.severity or "medium"],
            -int(problem),
            -at.timestamp(),
        )

    assert [key(r) for r in rows] == sorted(key(r) for r in rows)
    assert {r.urgency for r in rows} >= {None, "act_soon"}  # some with a decision model, some not
    last = -(-len(rows) // 7)
    pages = [board(big_store, Filters(page=p, page_size=7), now=NOW) for p in (1, 2, last, 99)]
    assert [r.run_id for p in pages[:2] for r in p.rows] == [r.run_id for r in rows[:14]]
    assert pages[2].rows == pages[3].rows and pages[3].page == last  # past the last: the last
    assert [r.run_id for r in pages[3].rows] == [r.run_id for r in rows[(last - 1) * 7 :]]


def test_tags_and_text_are_matched_exactly_even_with_wildcards(tmp_path: Path) -> None:
    store = Store(f"sqlite:///{tmp_path / 'tags.db'}")
    at = dt.datetime(2026, 5, 1, tzinfo=dt.UTC)
    with store.session() as session:
        for i, (name, tags, owner) in enumerate(
            [("a", ["50%", "x_y"], "Ops"), ("b", ["50", "xzy"], "ops"), ("c", [], None)]
        ):
            session.add(
                RunRow(
                    automation=name,
                    scheduled_for=at + dt.timedelta(hours=i),
                    status="completed",
                    finding="clear",
                    summary=f"all {i} fine",
                    created_at=at,
                    finished_at=at + dt.timedelta(hours=i),
                    definition={"owner": owner, "tags": tags, "description": "100% covered"},
                )
            )
        session.flush()
        rebuild(session.connection())  # written straight into runs: the list's rows from them

    def names(**filters: Any) -> list[str]:
        return [r.automation for r in board(store, Filters(**filters), now=NOW).rows]

    assert names() == ["c", "b", "a"]
    assert names(tag="50%") == ["a"] and names(tag="x_y") == ["a"] and names(tag="5") == []
    assert names(tag="50") == ["b"]
    assert names(owner="OPS") == ["b", "a"]
    assert names(q="0%") == ["c", "b", "a"] and names(q="_") == [] and names(q="ALL 1") == ["b"]
    page = board(store, Filters(), now=NOW)
    assert page.tags == ["50", "50%", "x_y", "xzy"] and page.owners == ["Ops", "ops"]
    store.close()
