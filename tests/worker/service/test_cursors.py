"""Schedule cursors written by ``RunQueue.record``: many in one statement, never moved back."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from pathlib import Path

import pytest

from checks.store.store import Store
from tests.worker.service.service_support import clean_store
from worker.service.queue_records import Cursor
from worker.service.run_queue import RunQueue

UTC = dt.UTC
NOON = dt.datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
DAILY = "0 1 * * *|UTC|any"
HOURLY = "0 * * * *|UTC|any"


@pytest.fixture(params=["postgresql", "sqlite"])
def queue(request: pytest.FixtureRequest, pg_url: str, tmp_path: Path) -> Iterator[RunQueue]:
    url = pg_url if request.param == "postgresql" else f"sqlite:///{tmp_path}/lookout.db"
    store = Store(url)
    if request.param == "postgresql":  # shared by the session; the SQLite file is new
        clean_store(store)
    try:
        yield RunQueue(store)
    finally:
        store.close()


def test_a_first_tick_creates_every_cursor_at_once(queue: RunQueue) -> None:
    # Names whose sorted order differs from their numbers: the order written must not matter.
    cursors = {
        f"automation-{n}": Cursor(DAILY, NOON + dt.timedelta(minutes=n)) for n in range(2_500)
    }
    queue.record([], cursors, now=NOON)
    assert queue.cursors() == cursors


def test_a_cursor_never_moves_back_on_its_key_and_restarts_on_a_new_one(queue: RunQueue) -> None:
    first = {name: Cursor(DAILY, NOON) for name in ("ahead", "behind", "edited")}
    queue.record([], first, now=NOON)
    earlier, later = NOON - dt.timedelta(hours=1), NOON + dt.timedelta(hours=1)
    queue.record(
        [],
        {
            "ahead": Cursor(DAILY, later),  # moves on
            "behind": Cursor(DAILY, earlier),  # a slower dispatcher: stays where it was
            "edited": Cursor(HOURLY, earlier),  # a new schedule: starts where it was seen
            "new": Cursor(HOURLY, earlier),
        },
        now=later,
    )
    assert queue.cursors() == {
        "ahead": Cursor(DAILY, later),
        "behind": Cursor(DAILY, NOON),
        "edited": Cursor(HOURLY, earlier),
        "new": Cursor(HOURLY, earlier),
    }


def test_a_naive_cursor_time_is_refused(queue: RunQueue) -> None:
    with pytest.raises(Exception, match="naive datetime"):
        queue.record([], {"naive": Cursor(DAILY, NOON.replace(tzinfo=None))}, now=NOON)
