"""The trace table: appended event by event (noted ones with the next), secrets redacted."""

from __future__ import annotations

import datetime as dt
import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from checks.agent import trace
from checks.agent.trace import MemoryTrace, TraceWriter, read_trace, to_jsonl
from checks.store.store import Store

SLOT = dt.datetime(2026, 11, 30, 6, 0, tzinfo=dt.UTC)
SECRET = "sk-trace-secret-9999"


@pytest.fixture(params=["sqlite", "postgresql"])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path}/lookout.db"
    return str(request.getfixturevalue("pg_url"))


@pytest.fixture
def store(url: str) -> Iterator[Store]:
    s = Store(url)
    yield s
    if s.engine.dialect.name == "postgresql":
        with s.engine.begin() as conn:
            conn.exec_driver_sql("TRUNCATE runs RESTART IDENTITY CASCADE")
    s.close()


def new_run(store: Store) -> int:
    run_id = store.create_run("traced", SLOT)
    assert run_id is not None
    assert store.claim_run(run_id, lease_s=60) == 1
    return run_id


def test_each_event_is_committed_when_appended(store: Store, url: str) -> None:
    run_id = new_run(store)
    writer = TraceWriter(store, run_id, secrets=[SECRET])
    writer.append("model_request", {"step": 1, "messages": [{"role": "user", "content": "hi"}]})
    other = Store(url)  # another connection pool, as a reader after a crash would be
    try:
        events = read_trace(other, run_id)
        assert [(e.seq, e.kind, e.payload["step"]) for e in events] == [(1, "model_request", 1)]
        writer.append("model_response", {"content": "ok"})
        assert [e.seq for e in read_trace(other, run_id)] == [1, 2]
    finally:
        other.close()


def test_secrets_are_redacted_before_writing(store: Store) -> None:
    run_id = new_run(store)
    writer = TraceWriter(store, run_id, secrets=[SECRET])
    writer.append("model_error", {"error": f"bad key {SECRET}", "url": "https://x/?api_key=abc123"})
    (event,) = read_trace(store, run_id)
    assert event.payload == {"error": "bad key ***", "url": "https://x/?api_key=***"}


def test_a_reclaimed_run_continues_the_numbering(store: Store) -> None:
    run_id = new_run(store)
    TraceWriter(store, run_id).append("agent_start", {})
    TraceWriter(store, run_id).append("agent_start", {})
    assert [e.seq for e in read_trace(store, run_id)] == [1, 2]


def test_jsonl(store: Store) -> None:
    run_id = new_run(store)
    writer = TraceWriter(store, run_id)
    writer.append("tool_call", {"id": "c1", "name": "execute_query", "arguments": "{}"})
    writer.append("tool_result", {"id": "c1", "result": {"id": "Q1", "rows": [["é"]]}})
    lines = to_jsonl(read_trace(store, run_id)).splitlines()
    records = [json.loads(line) for line in lines]
    assert [(r["seq"], r["kind"]) for r in records] == [(1, "tool_call"), (2, "tool_result")]
    assert records[1]["result"] == {"id": "Q1", "rows": [["é"]]}
    assert dt.datetime.fromisoformat(records[0]["at"]).tzinfo is not None


def test_events_go_with_their_run(store: Store) -> None:
    run_id = new_run(store)
    TraceWriter(store, run_id).append("agent_start", {})
    with store.engine.begin() as conn:
        conn.exec_driver_sql("DELETE FROM runs")
        assert conn.exec_driver_sql("SELECT count(*) FROM trace_events").scalar() == 0


def test_memory_trace() -> None:
    trace = MemoryTrace(secrets=[SECRET])
    trace.append("model_error", {"error": SECRET})
    assert [(e.seq, e.kind, e.payload) for e in trace.events] == [
        (1, "model_error", {"error": "***"})
    ]


def test_a_superseded_attempt_cannot_append_and_numbers_never_clash(store: Store) -> None:
    run_id = new_run(store)  # attempt 1
    old = TraceWriter(store, run_id, attempt=1)
    old.append("agent_start", {"who": "old"})
    with store.engine.begin() as conn:  # attempt 1's lease runs out; the reaper requeues it
        conn.exec_driver_sql("UPDATE runs SET status = 'queued', lease_expires_at = NULL")
    assert store.claim_run(run_id, lease_s=60) == 2
    new = TraceWriter(store, run_id, attempt=2)
    new.append("agent_start", {"who": "new"})
    old.append("model_request", {"who": "old"})  # the paused old attempt resumes
    new.append("model_request", {"who": "new"})
    events = read_trace(store, run_id)
    assert [(e.seq, e.attempt, e.kind, e.payload["who"]) for e in events] == [
        (1, 1, "agent_start", "old"),
        (2, 2, "agent_start", "new"),
        (3, 2, "model_request", "new"),
    ]
    assert old.superseded and not new.superseded
    assert json.loads(to_jsonl(events).splitlines()[1])["attempt"] == 2
    report = store.get_run(run_id)
    assert report is not None and report.status == "running" and report.attempt == 2


def test_two_writers_of_one_attempt_never_take_the_same_number(store: Store) -> None:
    run_id = new_run(store)
    first, second = TraceWriter(store, run_id, attempt=1), TraceWriter(store, run_id, attempt=1)
    with store.engine.connect() as held:  # the first writer's transaction, paused mid-way
        with held.begin():
            held.execute(
                trace._append(1, True),
                {"run_id": run_id, "at_1": SLOT, "kind_1": "first", "payload_1": {}, "attempt": 1},
            )
            second.note("second", {})  # two events, one statement
            waiting = threading.Thread(target=second.append, args=("second, too", {}))
            waiting.start()  # it waits for the run's row lock, its snapshot taken before
            time.sleep(0.5)
        waiting.join(timeout=30)
    first.append("third", {})
    assert [(e.seq, e.kind) for e in read_trace(store, run_id)] == [
        (1, "first"),
        (2, "second"),
        (3, "second, too"),
        (4, "third"),
    ]


def test_noted_events_are_written_with_the_next_append(store: Store, url: str) -> None:
    run_id = new_run(store)
    writer = TraceWriter(store, run_id, secrets=[SECRET], attempt=1)
    writer.note("model_response", {"content": f"key {SECRET}"})
    writer.note("tool_call", {"id": "c1"})
    other = Store(url)
    try:
        assert read_trace(other, run_id) == []  # noted, not yet written
        writer.append("model_request", {"step": 2})
        events = read_trace(other, run_id)
        assert [(e.seq, e.kind, e.attempt) for e in events] == [
            (1, "model_response", 1),
            (2, "tool_call", 1),
            (3, "model_request", 1),
        ]
        assert events[0].payload == {"content": "key ***"}
        assert events[0].at <= events[1].at <= events[2].at
        writer.note("tool_result", {"id": "c1"})
        writer.flush()
        writer.flush()  # nothing noted: nothing written
        assert [e.seq for e in read_trace(other, run_id)] == [1, 2, 3, 4]
    finally:
        other.close()


def test_noted_events_of_a_superseded_attempt_are_dropped(store: Store) -> None:
    run_id = new_run(store)
    old = TraceWriter(store, run_id, attempt=1)
    old.note("model_response", {})
    with store.engine.begin() as conn:
        conn.exec_driver_sql("UPDATE runs SET status = 'queued', lease_expires_at = NULL")
    assert store.claim_run(run_id, lease_s=60) == 2
    old.note("tool_call", {})
    old.flush()
    assert read_trace(store, run_id) == [] and old.superseded


def test_a_write_of_hundreds_of_events_is_kept_whole_and_in_order(store: Store) -> None:
    run_id = new_run(store)
    writer = TraceWriter(store, run_id, attempt=1)
    for n in range(1, 601):  # a turn asking for 600 tool calls: past SQLite's 500 terms
        writer.note("tool_call", {"id": f"c{n}"})
    writer.append("model_request", {"step": 2})
    events = read_trace(store, run_id)
    assert [e.seq for e in events] == list(range(1, 602))
    assert [e.payload.get("id") for e in events[:3]] == ["c1", "c2", "c3"]
    assert (events[599].payload, events[600].kind) == ({"id": "c600"}, "model_request")
