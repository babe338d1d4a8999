"""A large store for the review list, written straight into the tables (Core inserts).

``build`` writes M automations with R / M runs each (one an hour), as
``bench/bench_board.py`` describes, and returns how many rows of each kind it
wrote; the list's tests use small ones to show that a request's statements do
not grow with the rows. Deterministic for a seed.
"""

from __future__ import annotations

import datetime as dt
import random
from pathlib import Path
from typing import Any

from sqlalchemy import insert

from checks.automation.loader import load_automations
from checks.settings.config import default_config_data
from checks.store.alert_tables import DeliveryRow, IncidentRow
from checks.store.list_columns import definition_columns, urgency_column, usage_columns
from checks.store.list_rows import rebuild
from checks.store.review_tables import ReviewActionRow
from checks.store.run_tables import CheckRow, RunRow
from checks.store.store import Store

ROOT = Path(__file__).resolve().parents[3]
START = dt.datetime(2026, 5, 1, tzinfo=dt.UTC)
OWNERS = [f"team-{i:02d}" for i in range(25)]
TAGS = ["integrity", "rates", "freshness", "plausibility", "coverage", "keys", "finance", "ops"]
URGENCIES = ("nothing_to_do", "worth_a_look", "act_soon", "act_now")
BATCH = 2000


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


def _story(rng: random.Random, per: int, *, skipped_only: bool) -> list[tuple[str, str | None]]:
    """(status, finding) of each run of one automation, oldest first; 45 % end with a problem."""
    if skipped_only:
        return [("skipped", None)] * per
    story: list[tuple[str, str | None]] = []
    for _ in range(per - 1):
        roll = rng.random()
        if roll < 0.1:
            story.append(("error", None))
        else:
            story.append(("completed", "needs_attention" if roll < 0.4 else "clear"))
    if rng.random() < 0.45:
        story.append(("error", None) if rng.random() < 0.25 else ("completed", "needs_attention"))
    else:
        story.append(("completed", "clear"))
    return story


def _summary(rng: random.Random, status: str, finding: str | None) -> str:
    if finding == "needs_attention":
        return (
            "**Needs attention** — 1 failed of 2 checks.\n\n- FAILED: **tail numbers** — "
            f"{rng.randint(1, 900)} rows (expected empty) [C2]"
        )
    return {
        "error": "**Error** — 1 of 2 checks in error.",
        "skipped": "**Skipped** — the source was down.",
    }.get(status, "**Clear** — all 2 checks passed.")


def _errors(status: str) -> str | None:
    if status == "error":
        return "check 'tail numbers missing from planes': Binder Error: column nope not found"
    return "the source was down" if status == "skipped" else None


def _run_rows(
    rng: random.Random, automations: int, per: int
) -> tuple[list[dict[str, Any]], list[tuple[str, list[tuple[str, str | None]]]]]:
    shapes = definitions()
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
        story = _story(rng, per, skipped_only=a % 500 == 499)
        for k, (status, finding) in enumerate(story):
            slot = START + dt.timedelta(hours=k, minutes=a % 60)
            problem = status == "error" or finding == "needs_attention"
            second = opinion(rng, problem) if decided and status == "completed" else None
            agent = (
                {"input_tokens": 4000, "output_tokens": 300, "cost_usd": 0.01}
                if rng.random() < 0.1
                else None
            )
            run_rows.append(
                {
                    "automation": name,
                    "scheduled_for": slot,
                    "trigger": "schedule",
                    "status": status,
                    "finding": finding,
                    "finding_source": "checks" if status == "completed" else None,
                    "summary": _summary(rng, status, finding),
                    "error": _errors(status),
                    "created_at": slot,
                    "started_at": slot,
                    "finished_at": slot + dt.timedelta(seconds=rng.randint(2, 90)),
                    "definition": definition,
                    "agent": agent,
                    "second_opinion": second,
                    "attempt": 1,
                    "source": definition.get("source"),
                    "flags": f",{','.join(second['flags'])}," if second and second["flags"] else "",
                    # what the ORM copies from the JSON (checks.store.list_columns)
                    **definition_columns(definition),
                    "urgency": urgency_column(second),
                    **usage_columns("agent", agent),
                    **usage_columns("decision", second),
                }
            )
        stories.append((name, story))
    return run_rows, stories


def build(url: str, automations: int, runs: int, seed: int = 7) -> dict[str, int]:
    """Fill the store at ``url``; return how many rows of each kind were written."""
    rng = random.Random(seed)
    store = Store(url)
    per = max(1, runs // automations)
    run_rows, stories = _run_rows(rng, automations, per)
    counts = {"runs": 0, "checks": 0, "incidents": 0, "open": 0, "deliveries": 0, "actions": 0}
    with store.engine.begin() as conn:
        ids: list[int] = []
        for i in range(0, len(run_rows), BATCH):
            chunk = run_rows[i : i + BATCH]
            ids += [r.id for r in conn.execute(insert(RunRow).returning(RunRow.id), chunk)]
        counts["runs"] = len(ids)
        check_rows = [
            {**c, "run_id": run_id}
            for run_id, row in zip(ids, run_rows, strict=True)
            if row["status"] in ("completed", "error")
            for c in checks_of(rng, row["status"], row["finding"])
        ]
        for i in range(0, len(check_rows), BATCH):
            conn.execute(insert(CheckRow), check_rows[i : i + BATCH])
        counts["checks"] = len(check_rows)
        incidents, deliveries, actions = plan_incidents(rng, stories, ids, run_rows, per)
        incident_ids = [
            r.id for r in conn.execute(insert(IncidentRow).returning(IncidentRow.id), incidents)
        ]
        counts["incidents"] = len(incident_ids)
        counts["open"] = sum(1 for i in incidents if i["open_key"])
        for item in [*deliveries, *actions]:
            item["incident_id"] = incident_ids[item.pop("incident")]
        for i in range(0, len(deliveries), BATCH):
            conn.execute(insert(DeliveryRow), deliveries[i : i + BATCH])
        counts["deliveries"] = len(deliveries)
        if actions:
            conn.execute(insert(ReviewActionRow), actions)
        counts["actions"] = len(actions)
        rebuild(conn)  # the review list's rows, as the run path's writers keep them
    if store.engine.dialect.name == "postgresql":  # a store at rest: statistics, visibility map
        with store.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
            conn.exec_driver_sql("VACUUM ANALYZE")
    store.close()
    return counts


def _actions(
    rng: random.Random, name: str, incident: int, run_id: int, finished: dt.datetime
) -> list[dict[str, Any]]:
    """What people did about one open incident: acknowledge, snooze or resolve; assign, comment."""
    at = finished + dt.timedelta(minutes=5)
    base = {
        **dict.fromkeys(("assignee", "until", "reason", "comment", "queued_run_id")),
        "run_id": run_id,
        "automation": name,
        "incident": incident,
        "at": at,
    }
    found = []
    roll = rng.random()
    if roll < 0.15:
        found.append({**base, "kind": "acknowledge", "actor": "alice"})
    elif roll < 0.2:
        until = at + dt.timedelta(days=rng.choice([-1, 30]))
        found.append({**base, "kind": "snooze", "actor": "bob", "until": until})
    elif roll < 0.25:
        found.append({**base, "kind": "resolve", "actor": "alice", "reason": "expected"})
    if rng.random() < 0.1:
        found.append({**base, "kind": "assign", "actor": "alice", "assignee": "bob"})
    if rng.random() < 0.1:
        found.append({**base, "kind": "comment", "actor": "bob", "comment": "looking"})
    return found


def _delivery(
    rng: random.Random, name: str, kind: str, incident: int, run_id: int, at: dt.datetime
) -> dict[str, Any]:
    event = "run_error" if kind == "error" else "needs_attention"
    return {
        "run_id": run_id,
        "event": event,
        "channel": "ops-slack",
        "channel_type": "slack",
        "reminder": False,
        "incident": incident,
        "status": "failed" if rng.random() < 0.1 else "sent",
        "alert": {"event": event, "automation": name, "run_id": run_id},
        "attempts": 1,
        "created_at": at,
        "claimed_at": at,
        "finished_at": at,
    }


def _closes(status: str, finding: str | None) -> tuple[str, ...]:
    """The incident kinds a run closes: a completed run ends an error, a Clear one attention too."""
    if status != "completed":
        return ()
    return ("error", "attention") if finding == "clear" else ("error",)


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
            run_id, at = ids[a * per + k], run_rows[a * per + k]["finished_at"]
            for gone in _closes(status, finding):
                if gone in open_now:
                    incidents[open_now.pop(gone)].update(
                        open_key=None, closed_at=at, closed_run_id=run_id
                    )
            kind = {"error": "error"}.get(status) or (
                "attention" if finding == "needs_attention" else None
            )
            if kind is None:
                continue
            last_run[kind] = (run_id, at)
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
                deliveries.append(_delivery(rng, name, kind, open_now[kind], run_id, at))
            elif rng.random() < 0.3:
                incidents[open_now[kind]]["reminders"] += 1
                reminder = _delivery(rng, name, kind, open_now[kind], run_id, at)
                deliveries.append({**reminder, "reminder": True})
        for kind, index in open_now.items():
            actions += _actions(rng, name, index, *last_run[kind])
    return incidents, deliveries, actions
