"""A run's trace: every model request and response, every tool call and result, in order.

Events are written as they happen, in committed transactions: an event a wait
follows (a model request, a retry, a tool call whose result is awaited) is
committed before the wait, together with the events noted since the last
write, which only CPU work followed (``TraceSink.note``), in one statement
(the fence, the next numbers and the rows together). So a run killed halfway,
which is nearly always in a wait, keeps everything before that wait; killed
outside one, it loses at most the events of the CPU work since the last wait.
An error raised in the loop writes them before it propagates. Payloads are
JSON with every secret of the settings redacted (``checks.settings.config.redact``)
before they are written. ``lookout show RUN_ID --trace`` prints them as JSONL.

Event kinds written by the agent loop (``checks.agent.loop``), ``report_accepted``
and ``agent_end`` by the run path (``checks.run``) once the finding is decided,
and ``checks_statement`` by the run path as the declared checks run:

======================  =====================================================
``agent_start``         model, step budget, tools offered
``model_request``       step, tool_choice, the messages added since the last request
``model_retry``         a failed attempt about to be retried: status, wait_s, reason
``model_response``      content, tool_calls, finish_reason, tokens, cost_usd
``model_error``         the endpoint failed after retries
``prompt_compacted``    which tool results were replaced by a note in the prompt
``tool_call``           call id, tool name, raw arguments
``tool_result``         call id, the full result (never compacted), cached or not
``report_rejected``     the contract problems sent back for repair
``report_accepted``     finding, finding_source, evidence, override reason
``agent_end``           the counters of ``RunReport.agent``, and why it ended
``checks_statement``    a statement the declared checks shared (written by the
                        run path before the agent): the checks in it, their
                        positions, its table, its SQL, ``elapsed_ms``, and
                        ``error`` when it failed (its checks then ran alone)
======================  =====================================================
"""

from __future__ import annotations

import datetime as dt
import functools
import json
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from sqlalchemy import (
    Insert,
    Integer,
    ScalarSelect,
    Select,
    bindparam,
    func,
    insert,
    literal,
    select,
    true,
    union_all,
)
from sqlalchemy.engine import Connection
from sqlalchemy.exc import IntegrityError

from checks.clock import utcnow
from checks.report import Status
from checks.settings.config import redact
from checks.store.run_tables import RunRow, TraceEventRow
from checks.store.store import Store, retry_writes


def _fence(source: Select[Any], *, fenced: bool) -> Select[Any]:
    """``source`` limited to the run's row, under the attempt when ``fenced``, and locked."""
    source = source.where(RunRow.id == bindparam("run_id"))
    if fenced:
        source = source.where(
            RunRow.attempt == bindparam("attempt"), RunRow.status == literal(Status.RUNNING.value)
        )
    return source.with_for_update(of=RunRow)


def _last_seq() -> ScalarSelect[Any]:
    return (
        select(func.coalesce(func.max(TraceEventRow.seq), 0))
        .where(TraceEventRow.run_id == RunRow.id)
        .scalar_subquery()
    )


def _append_statement(count: int, *, fenced: bool) -> Insert:
    """``count`` events as one statement: their run's row locked, fenced, the next ``seq`` taken.

    ``INSERT … SELECT … FROM runs JOIN (SELECT :n, :at_n, :kind_n, :payload_n
    UNION ALL …) ON true WHERE id = :run_id [AND attempt AND running] FOR UPDATE
    OF runs``: every event numbered after the run's last ``seq`` in its order,
    and no row inserted when the fence fails. Bind names are ``at_1``,
    ``kind_1``, ``payload_1``, … ``payload_{count}``.
    """
    events = union_all(
        *(
            select(
                literal(n, Integer).label("n"),
                bindparam(f"at_{n}", type_=TraceEventRow.at.type).label("at"),
                bindparam(f"kind_{n}", type_=TraceEventRow.kind.type).label("kind"),
                bindparam(f"payload_{n}", type_=TraceEventRow.payload.type).label("payload"),
            )
            for n in range(1, count + 1)
        )
    ).subquery("events")
    source = (
        select(
            RunRow.id,
            _last_seq() + events.c.n,
            events.c.at,
            events.c.kind,
            events.c.payload,
            bindparam("attempt", type_=TraceEventRow.attempt.type),
        )
        .select_from(RunRow)
        .join(events, true())
    )
    columns = ["run_id", "seq", "at", "kind", "payload", "attempt"]
    statement = insert(TraceEventRow).from_select(columns, _fence(source, fenced=fenced))
    # an INSERT's rowcount is dropped with its cursor unless asked for: it is the fence's answer
    return statement.execution_options(preserve_rowcount=True)


@functools.cache
def _append(count: int, fenced: bool) -> Insert:
    """``_append_statement``, built once per number of events (a few distinct ones)."""
    return _append_statement(count, fenced=fenced)


# A statement that waited for the run's row lock reads the last seq as it was before the
# wait (its snapshot): when the lock's holder added events meanwhile, the unique
# (run_id, seq) refuses the clash and the write is taken again, in a fresh snapshot.
SEQ_CLASH_RETRIES = 3
EVENTS_PER_STATEMENT = 100
"""Events one statement inserts; a write of more is several, in its one transaction, numbered on."""


@dataclass(frozen=True)
class TraceEvent:
    """One stored event. ``seq`` counts from 1 within the run; ``attempt`` is its writer's claim."""

    seq: int
    at: dt.datetime
    kind: str
    payload: dict[str, Any]
    attempt: int | None = None

    def to_dict(self) -> dict[str, Any]:
        """Return the event as one JSONL record (``attempt`` when it was written under one)."""
        record: dict[str, Any] = {"seq": self.seq, "at": self.at.isoformat(), "kind": self.kind}
        if self.attempt is not None:
            record["attempt"] = self.attempt
        return {**record, **self.payload}


class TraceSink(Protocol):
    """Where the agent loop writes its events.

    ``append`` writes an event now, with every event ``note``d before it; the
    loop notes an event that only CPU work follows and appends one that a wait
    follows (a model call, a retry's sleep) or that ends the run, and flushes
    before waiting on a tool call, so a crash in any wait finds everything before it.
    """

    def append(self, kind: str, payload: dict[str, Any]) -> None:
        """Record one event now, after the events noted before it."""
        ...

    def note(self, kind: str, payload: dict[str, Any]) -> None:
        """Record one event with the next ``append`` or ``flush`` (its time is now)."""
        ...

    def flush(self) -> None:
        """Record the noted events now."""
        ...


def redacted(payload: dict[str, Any], secrets: Sequence[str]) -> dict[str, Any]:
    """Return ``payload`` with every secret replaced by ``***`` (JSON round trip)."""
    text = redact(json.dumps(payload, default=str, ensure_ascii=False), list(secrets))
    try:
        clean = json.loads(text)
    except json.JSONDecodeError:
        return {"redacted": text}
    return clean if isinstance(clean, dict) else {"redacted": text}


class MemoryTrace:
    """A trace kept in memory (runs with no store, and ``lookout eval``)."""

    def __init__(self, *, secrets: Sequence[str] = ()) -> None:
        self.secrets = list(secrets)
        self.events: list[TraceEvent] = []
        self._lock = threading.Lock()

    def append(self, kind: str, payload: dict[str, Any]) -> None:
        """Record one event, redacted."""
        with self._lock:
            self.events.append(
                TraceEvent(len(self.events) + 1, utcnow(), kind, redacted(payload, self.secrets))
            )

    def note(self, kind: str, payload: dict[str, Any]) -> None:
        """Record one event, redacted (in memory there is nothing to save by waiting)."""
        self.append(kind, payload)

    def flush(self) -> None:
        """Nothing to do: every event is recorded when given."""


class TraceWriter:
    """Appends one run's events to the store's ``trace_events`` table, fenced on the attempt.

    Args:
        store: the report store; the run row must exist (foreign key).
        run_id: the run the events belong to. A re-claimed run continues the
            numbering after the events already stored.
        secrets: values to redact (``Settings.secrets()``).
        attempt: the claim this writer works for. When set, an event is written
            only while the run is still running under that attempt (as
            ``Store.finish_run`` is fenced), and records it; a superseded
            attempt's events are dropped and ``superseded`` turns True.
    """

    def __init__(
        self, store: Store, run_id: int, *, secrets: Sequence[str] = (), attempt: int | None = None
    ) -> None:
        self.store = store
        self.run_id = run_id
        self.secrets = list(secrets)
        self.attempt = attempt
        self.superseded = False
        self._lock = threading.Lock()
        self._pending: list[tuple[dt.datetime, str, dict[str, Any]]] = []

    def append(self, kind: str, payload: dict[str, Any]) -> None:
        """Insert the noted events and this one in one transaction, committed before returning.

        The next ``seq`` is read under a lock on the run's row, and the unique
        ``(run_id, seq)`` refuses a number taken meanwhile (the write is then
        taken again), so two writers of one run never take the same number. A
        store failure that outlasts the retries propagates (SQLAlchemy's
        error): a run that cannot keep its trace should not go on as if it did.
        """
        event = (utcnow(), kind, redacted(payload, self.secrets))
        with self._lock:
            self._pending.append(event)
            self._write_pending()

    def note(self, kind: str, payload: dict[str, Any]) -> None:
        """Keep one event (redacted, timed now) for the next ``append`` or ``flush``."""
        event = (utcnow(), kind, redacted(payload, self.secrets))
        with self._lock:
            self._pending.append(event)

    def flush(self) -> None:
        """Insert the noted events, if any, in one transaction; see ``append``."""
        with self._lock:
            if self._pending:
                self._write_pending()

    def write_noted(self, connection: Connection) -> None:
        """Insert the noted events on ``connection``, in its transaction, not fenced.

        For ``Store.finish_run``: its fenced update holds the run's row (so no
        other writer numbers events meanwhile), and a run's last events then cost
        no transaction of their own. A store failure propagates (SQLAlchemy's error).
        """
        with self._lock:
            events, self._pending = self._pending, []
        for start in range(0, len(events), EVENTS_PER_STATEMENT):
            chunk = events[start : start + EVENTS_PER_STATEMENT]
            values: dict[str, Any] = {"run_id": self.run_id, "attempt": self.attempt}
            for n, (at, kind, payload) in enumerate(chunk, start=1):
                values.update({f"at_{n}": at, f"kind_{n}": kind, f"payload_{n}": payload})
            connection.execute(_append(len(chunk), False), values)

    def _write_pending(self) -> None:
        events, self._pending = self._pending, []
        for clash in range(SEQ_CLASH_RETRIES + 1):
            try:
                written = self._write(events)
                break
            except IntegrityError:
                if clash == SEQ_CLASH_RETRIES:
                    raise
        if not written:
            self.superseded = True

    @retry_writes
    def _write(self, events: list[tuple[dt.datetime, str, dict[str, Any]]]) -> bool:
        fenced = self.attempt is not None
        keys = {"run_id": self.run_id, "attempt": self.attempt}
        with self.store.engine.begin() as conn:
            # a model may ask for hundreds of tool calls in one turn: SQLite takes at most
            # 500 terms in one compound SELECT (SQLITE_MAX_COMPOUND_SELECT)
            for start in range(0, len(events), EVENTS_PER_STATEMENT):
                chunk = events[start : start + EVENTS_PER_STATEMENT]
                values: dict[str, Any] = dict(keys)
                for n, (at, kind, payload) in enumerate(chunk, start=1):
                    values.update({f"at_{n}": at, f"kind_{n}": kind, f"payload_{n}": payload})
                if not conn.execute(_append(len(chunk), fenced), values).rowcount:
                    return False  # fenced out: at the first chunk, as the run row stays locked
        return True


def read_trace(store: Store, run_id: int) -> list[TraceEvent]:
    """Return a run's events in order (empty when it has none)."""
    query = select(TraceEventRow).where(TraceEventRow.run_id == run_id).order_by(TraceEventRow.seq)
    with store.session() as session:
        return [
            TraceEvent(r.seq, r.at, r.kind, r.payload, r.attempt) for r in session.scalars(query)
        ]


def to_jsonl(events: Sequence[TraceEvent]) -> str:
    """Return events as JSON Lines, one event per line."""
    return "".join(json.dumps(e.to_dict(), ensure_ascii=False) + "\n" for e in events)
