"""Benchmark of the review page over a large store: the list, a page of it, ``/api/board``, ``/metrics``.

Builds a store of M automations (default 10,000) with R stored runs (default
50,000: R / M runs each, one an hour), written straight into the tables (Core
inserts, not the run path: building 50,000 runs through it would take hours).
Each run has the definition of one of the example automations (renamed, with
one of 25 owners, tags, a severity), two check results whose outcomes agree
with its finding (a failed or not-evaluated check for Needs attention, a check
in error for a run in error), and, for 60 % of the automations, a second opinion
(the shape ``SecondOpinion.to_dict`` stores). Incidents follow the runs as
``checks.store.incidents`` moves them (attention: from the first Needs attention
to the next Clear; error: from the first error to the next completed run), so
about 45 % of the automations end with an open incident; every incident's
opening was delivered to one channel (10 % failed), some got reminders, and
people acted on some (acknowledge, assign, snooze, comment, resolve).

Then the review app (``worker.web.create_app``, in this process, through
FastAPI's ``TestClient``) answers each endpoint N times: the list (``/``), its
50th page, the list filtered (``?f=needs_me&owner=…``), ``/api/board`` and
``/metrics``. Printed per endpoint: the median and p95 wall time, the median
CPU time of this process (PostgreSQL's own CPU is not counted), the
statements sent to the store per request, and the load average.

Needs PostgreSQL (``LOOKOUT_TEST_PG_URL``, default
``postgresql://postgres@127.0.0.1:5432/test``; a scratch database is created
and dropped). ``--sqlite`` uses a SQLite file instead.

Run: ``.venv/bin/python bench/bench_board.py [--automations 10000] [--runs 50000]
[--requests 20] [--sqlite]``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import random
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psycopg
from fastapi.testclient import TestClient
from sqlalchemy import event, insert

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from checks.automation.loader import load_automations  # noqa: E402
from checks.settings.config import Settings, default_config_data  # noqa: E402
from checks.store import run_tables  # noqa: E402
from checks.store.alert_tables import DeliveryRow, IncidentRow  # noqa: E402
from checks.store.review_tables import ReviewActionRow  # noqa: E402
from checks.store.run_tables import CheckRow, RunRow  # noqa: E402
from checks.store.store import Store  # noqa: E402
from tests.worker.web.web_support import bearer, login, review_settings  # noqa: E402
from worker.web import create_app  # noqa: E402

PG_ADMIN = os.environ.get("LOOKOUT_TEST_PG_URL", "postgresql://postgres@127.0.0.1:5432/test")
START = dt.datetime(2026, 5, 1, tzinfo=dt.UTC)
OWNERS = [f"team-{i:02d}" for i in range(25)]
TAGS = ["integrity", "rates", "freshness", "plausibility", "coverage", "keys", "finance", "ops"]
URGENCIES = ("nothing_to_do", "worth_a_look", "act_soon", "act_now")
BATCH = 2000


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


@contextmanager
def scratch_database(sqlite: bool) -> Iterator[str]:
    if sqlite:
        with tempfile.TemporaryDirectory() as folder:
            yield f"sqlite:///{folder}/bench.db"
        return
    name = f"lookout_bench_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(PG_ADMIN, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    base = PG_ADMIN.rsplit("/", 1)[0].replace("postgresql://", "postgresql+psycopg://", 1)
    try:
        yield f"{base}/{name}"
    finally:
        with psycopg.connect(PG_ADMIN, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def definitions() -> list[dict[str, Any]]:
    """The example automations' definitions (as a run stores them)."""
    known = set(default_config_data()["sources"])
    loaded = load_automations(ROOT / "automations", known_sources=known)
    return [a.definition() for a in loaded.automations]


def opinion(rng: random.Random, problem: bool) -> dict[str, Any]:
    weights = [0.1, 0.4, 0.3, 0.2] if problem else [0.7, 0.2, 0.07, 0.03]
    raw = [w * rng.uniform(0.5, 1.5) for w in weights]
    probabilities = {u: round(x / sum(raw), 4) for u, x in zip(URGENCIES, raw, strict=True)}
    flags = []
    if rng.random() < 0.1:
        flags.append("double_check_disagrees")
    if rng.random() < 0.15:
        flags.append("changed_since_last_run")
    return {
        "backend": "systemone",
        "model": "jev-bench",
        "goal_met": round(rng.uniform(0.02, 0.4) if problem else rng.uniform(0.6, 0.98), 4),
        "same_as_last_run": round(rng.random(), 4),
        "urgency": max(probabilities, key=lambda u: probabilities[u]),
        "urgency_probabilities": probabilities,
        "flags": flags,
        "calibrated": {},
        "evidence_diff": {"first_run": False, "added": [], "removed": [], "changed": []},
        "error": None,
        "input_tokens": rng.randint(600, 1200),
        "output_tokens": rng.randint(8, 20),
        "cost_usd": 0.0004,
    }


def checks_of(rng: random.Random, status: str, finding: str | None) -> list[dict[str, Any]]:
    first: dict[str, Any] = {
        "position": 0,
        "name": "dep_delay missing",
        "sql": "SELECT count(*) FILTER (WHERE dep_delay IS NULL) AS missing, count(*) AS "
        "rows_in_scope FROM flights",
        "expect": "< 1 %",
        "kind": "missing",
        "value": 0.2,
        "passed": True,
        "error": None,
        "evidence_id": "C1",
        "outcome": "passed",
        "reason": None,
        "metrics": {"missing": 672, "rows_in_scope": 336776, "compared": "percent"},
        "warnings": [],
        "sample_id": None,
    }
    second: dict[str, Any] = {
        "position": 1,
        "name": "tail numbers missing from planes",
        "sql": "SELECT f.tailnum FROM flights f LEFT JOIN planes p ON p.tailnum = f.tailnum "
        "WHERE f.tailnum IS NOT NULL AND p.tailnum IS NULL",
        "expect": "empty",
        "kind": "sql",
        "value": 0,
        "passed": True,
        "error": None,
        "evidence_id": "C2",
        "outcome": "passed",
        "reason": None,
        "metrics": {},
        "warnings": [],
        "sample_id": None,
    }
    if status == "error":
        second.update(
            value=None, passed=None, outcome="error", error="Binder Error: column nope not found"
        )
    elif finding == "needs_attention":
        if rng.random() < 0.2:
            first.update(
                value=None,
                passed=None,
                outcome="not_evaluated",
                reason="0 rows in scope: flights where year = 2014",
                metrics={"missing": 0, "rows_in_scope": 0},
            )
        else:
            second.update(value=rng.randint(1, 900), passed=False, outcome="failed")
    return [first, second]


def build(url: str, automations: int, runs: int, seed: int = 7) -> dict[str, int]:
    """Fill the store at ``url``; return how many rows of each kind were written."""
    rng = random.Random(seed)
    shapes = definitions()
    store = Store(url)
    per = max(1, runs // automations)
    run_rows: list[dict[str, Any]] = []
    stories: list[tuple[str, list[tuple[str, str | None]]]] = []
    for a in range(automations):
        name = f"auto-{a:05d}"
        definition = {
            **rng.choice(shapes),
            "name": name,
            "owner": rng.choice(OWNERS),
            "tags": rng.sample(TAGS, rng.randint(1, 3)),
            "severity": rng.choice(["low", "medium", "medium", "high"]),
            "description": f"Bench automation {a}: the data it watches is as expected.",
        }
        decided = rng.random() < 0.6
        skipped_only = a % 500 == 499
        streak = rng.random() < 0.45  # ends with a problem
        story: list[tuple[str, str | None]] = []
        for k in range(per):
            last = k == per - 1
            if skipped_only:
                status, finding = "skipped", None
            elif last and streak:
                status, finding = ("error", None) if rng.random() < 0.25 else (
                    "completed",
                    "needs_attention",
                )
            elif last:
                status, finding = "completed", "clear"
            else:
                roll = rng.random()
                status, finding = (
                    ("error", None)
                    if roll < 0.1
                    else ("completed", "needs_attention" if roll < 0.4 else "clear")
                )
            story.append((status, finding))
            slot = START + dt.timedelta(hours=k, minutes=a % 60)
            problem = status == "error" or finding == "needs_attention"
            summary = (
                f"**Needs attention** — 1 failed of 2 checks.\n\n- FAILED: **tail numbers** — "
                f"{rng.randint(1, 900)} rows (expected empty) [C2]"
                if finding == "needs_attention"
                else "**Error** — 1 of 2 checks could not be evaluated."
                if status == "error"
                else "**Skipped** — the source was down."
                if status == "skipped"
                else "**Clear** — all 2 checks passed."
            )
            second = opinion(rng, problem) if decided and status == "completed" else None
            run_rows.append(
                {
                    "automation": name,
                    "scheduled_for": slot,
                    "trigger": "schedule",
                    "status": status,
                    "finding": finding,
                    "finding_source": "checks" if status == "completed" else None,
                    "summary": summary,
                    "error": "check 'tail numbers missing from planes': Binder Error: column "
                    "nope not found"
                    if status == "error"
                    else ("the source was down" if status == "skipped" else None),
                    "created_at": slot,
                    "started_at": slot,
                    "finished_at": slot + dt.timedelta(seconds=rng.randint(2, 90)),
                    "definition": definition,
                    "agent": {"input_tokens": 4000, "output_tokens": 300, "cost_usd": 0.01}
                    if rng.random() < 0.1
                    else None,
                    "second_opinion": second,
                    "attempt": 1,
                    "source": definition.get("source"),
                    "flags": f",{','.join(second['flags'])}," if second and second["flags"] else "",
                }
            )
        stories.append((name, story))
    fill = getattr(run_tables, "list_columns", None)  # the list's own columns, where they exist
    if fill is not None:
        for row in run_rows:
            row.update(fill(row["definition"], row["second_opinion"]))
    counts = {"runs": 0, "checks": 0, "incidents": 0, "open": 0, "deliveries": 0, "actions": 0}
    with store.engine.begin() as conn:
        ids: list[int] = []
        for i in range(0, len(run_rows), BATCH):
            chunk = run_rows[i : i + BATCH]
            ids += [r.id for r in conn.execute(insert(RunRow).returning(RunRow.id), chunk)]
        counts["runs"] = len(ids)
        check_rows = []
        for run_id, row in zip(ids, run_rows, strict=True):
            if row["status"] in ("completed", "error"):
                for c in checks_of(rng, row["status"], row["finding"]):
                    check_rows.append({**c, "run_id": run_id})
        for i in range(0, len(check_rows), BATCH):
            conn.execute(insert(CheckRow), check_rows[i : i + BATCH])
        counts["checks"] = len(check_rows)
        incidents, deliveries, actions = plan_incidents(rng, stories, ids, run_rows, per)
        incident_ids = [
            r.id for r in conn.execute(insert(IncidentRow).returning(IncidentRow.id), incidents)
        ]
        counts["incidents"] = len(incident_ids)
        counts["open"] = sum(1 for i in incidents if i["open_key"])
        for d in deliveries:
            d["incident_id"] = incident_ids[d.pop("incident")]
        for a in actions:
            a["incident_id"] = incident_ids[a.pop("incident")]
        for i in range(0, len(deliveries), BATCH):
            conn.execute(insert(DeliveryRow), deliveries[i : i + BATCH])
        counts["deliveries"] = len(deliveries)
        if actions:
            conn.execute(insert(ReviewActionRow), actions)
        counts["actions"] = len(actions)
    if store.engine.dialect.name == "postgresql":
        with store.engine.connect() as conn:
            conn.exec_driver_sql("ANALYZE")
    store.close()
    return counts


def plan_incidents(
    rng: random.Random,
    stories: list[tuple[str, list[tuple[str, str | None]]]],
    ids: list[int],
    run_rows: list[dict[str, Any]],
    per: int,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    """Incidents as the run path moves them, one delivery per announcement, some actions."""
    incidents: list[dict[str, Any]] = []
    deliveries: list[dict[str, Any]] = []
    actions: list[dict[str, Any]] = []
    for a, (name, story) in enumerate(stories):
        open_now: dict[str, int] = {}  # kind -> index into incidents
        last_run: dict[str, tuple[int, dt.datetime]] = {}  # kind -> its newest run, finished at
        for k, (status, finding) in enumerate(story):
            i = a * per + k
            run_id, row = ids[i], run_rows[i]
            at = row["finished_at"]
            kind = "error" if status == "error" else (
                "attention" if finding == "needs_attention" else None
            )
            closing = []
            if status == "completed":
                closing.append("error")
                if finding == "clear":
                    closing.append("attention")
            for gone in closing:
                if gone in open_now:
                    incident = incidents[open_now.pop(gone)]
                    incident.update(open_key=None, closed_at=at, closed_run_id=run_id)
            if kind is None:
                continue
            last_run[kind] = (run_id, at)
            event = "run_error" if kind == "error" else "needs_attention"
            if kind not in open_now:
                open_now[kind] = len(incidents)
                incidents.append(
                    {
                        "automation": name,
                        "kind": kind,
                        "open_key": f"{name}:{kind}",
                        "opened_at": at,
                        "opened_run_id": run_id,
                        "last_notified_at": at,
                        "reminders": 0,
                        "closed_at": None,
                        "closed_run_id": None,
                    }
                )
                reminder = False
            elif rng.random() < 0.3:
                incidents[open_now[kind]]["reminders"] += 1
                reminder = True
            else:
                continue
            deliveries.append(
                {
                    "run_id": run_id,
                    "event": event,
                    "channel": "ops-slack",
                    "channel_type": "slack",
                    "reminder": reminder,
                    "incident": open_now[kind],
                    "status": "failed" if rng.random() < 0.1 else "sent",
                    "alert": {"event": event, "automation": name, "run_id": run_id},
                    "attempts": 1,
                    "created_at": at,
                    "claimed_at": at,
                    "finished_at": at,
                }
            )
        for kind, index in open_now.items():
            roll = rng.random()
            run_id, finished = last_run[kind]
            base = {
                **dict.fromkeys(("assignee", "until", "reason", "comment", "queued_run_id")),
                "run_id": run_id,
                "automation": name,
                "incident": index,
                "at": finished + dt.timedelta(minutes=5),
            }
            at = base["at"]
            if roll < 0.15:
                actions.append({**base, "kind": "acknowledge", "actor": "alice"})
            elif roll < 0.2:
                until = at + dt.timedelta(days=rng.choice([-1, 30]))
                actions.append({**base, "kind": "snooze", "actor": "bob", "until": until})
            elif roll < 0.25:
                actions.append(
                    {**base, "kind": "resolve", "actor": "alice", "reason": "expected"}
                )
            if rng.random() < 0.1:
                actions.append({**base, "kind": "assign", "actor": "alice", "assignee": "bob"})
            if rng.random() < 0.1:
                actions.append({**base, "kind": "comment", "actor": "bob", "comment": "looking"})
    return incidents, deliveries, actions


class StatementCounter:
    """Counts the statements an engine sends (``before_cursor_execute``)."""

    def __init__(self, engine: Any) -> None:
        self.count = 0
        event.listen(engine, "before_cursor_execute", self._seen)

    def _seen(self, *_: Any) -> None:
        self.count += 1


def measure(url: str, requests: int) -> list[tuple[str, float, float, float, float, str]]:
    settings = Settings.model_validate(
        {
            **default_config_data(),
            "store_url": url,
            "review": {**review_settings(), "page_size": 50},
        }
    )
    store = Store(url)
    counter = StatementCounter(store.engine)
    client = TestClient(create_app(settings, store=store))
    login(client)
    endpoints = [
        ("/ (the list, page 1)", "/", {}),
        ("/?page=50", "/?page=50", {}),
        ("/?f=needs_me&owner=team-03", "/?f=needs_me&owner=team-03", {}),
        ("/api/board", "/api/board", bearer()),
        ("/metrics", "/metrics", bearer()),
    ]
    results = []
    for label, path, headers in endpoints:
        walls: list[float] = []
        cpus: list[float] = []
        statements: list[int] = []
        first = client.get(path, headers=headers)  # warm: templates, caches, plans
        assert first.status_code == 200, (path, first.status_code, first.text[:300])
        for _ in range(requests):
            counter.count = 0
            began, cpu = time.perf_counter(), time.process_time()
            response = client.get(path, headers=headers)
            walls.append(time.perf_counter() - began)
            cpus.append(time.process_time() - cpu)
            statements.append(counter.count)
            assert response.status_code == 200, (path, response.status_code)
        walls.sort()
        p95 = walls[min(len(walls) - 1, max(0, round(0.95 * len(walls)) - 1))]
        results.append(
            (
                label,
                statistics.median(walls) * 1000,
                p95 * 1000,
                statistics.median(cpus) * 1000,
                statistics.median(statements),
                load(),
            )
        )
        print(
            f"{label:32s} median {results[-1][1]:9.1f} ms  p95 {p95 * 1000:9.1f} ms  "
            f"CPU {results[-1][3]:8.1f} ms  statements {results[-1][4]:.0f}  load {load()}",
            flush=True,
        )
    store.close()
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--automations", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=50_000)
    parser.add_argument("--requests", type=int, default=20, help="timed requests per endpoint")
    parser.add_argument("--sqlite", action="store_true", help="a SQLite store, not PostgreSQL")
    args = parser.parse_args()
    print(
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}, store {'SQLite' if args.sqlite else 'PostgreSQL'}, "
        f"load {load()}",
        flush=True,
    )
    with scratch_database(args.sqlite) as url:
        began = time.perf_counter()
        counts = build(url, args.automations, args.runs)
        print(
            f"built in {time.perf_counter() - began:.1f} s: "
            + ", ".join(f"{n:,} {what}" for what, n in counts.items()),
            flush=True,
        )
        measure(url, args.requests)


if __name__ == "__main__":
    main()
