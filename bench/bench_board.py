"""Benchmark of the review page over a large store: the list, a page, /api/board, /metrics.

Builds a store of M automations (default 10,000) with R stored runs (default
50,000: R / M runs each, one an hour), written straight into the tables by
``tests/worker/review/board_store.py`` (Core inserts, not the run path: building
50,000 runs through it would take hours; the review list's stored rows are then
computed from them, ``checks.store.list_rows.rebuild``).
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
CPU time of this process (the app, its templates and the client), the mean CPU
time of the PostgreSQL backends serving the bench database (from ``/proc``,
10 ms ticks: hence the mean), the statements sent to the store per request,
and the load average. CPU times move much less with the machine's load than
wall times.

Needs PostgreSQL (``LOOKOUT_TEST_PG_URL``, default
``postgresql://postgres@127.0.0.1:5432/test``; a scratch database is created
and dropped). ``--sqlite`` uses a SQLite file instead. ``--database NAME`` keeps
the store in the PostgreSQL database NAME (with ``--sqlite``: the SQLite file
NAME) and, when it already holds runs, measures it without building it again:
the same store for two versions of the code, one after the other (each migrates
it to its own head, so give the older version a copy).

Run: ``.venv/bin/python bench/bench_board.py [--automations 10000] [--runs 50000]
[--requests 20] [--sqlite] [--database NAME]``.
"""

from __future__ import annotations

import argparse
import os
import platform
import sqlite3
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
from sqlalchemy import event

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from checks.settings.config import Settings, default_config_data  # noqa: E402
from checks.store.store import Store  # noqa: E402
from tests.worker.review.board_store import build  # noqa: E402
from tests.worker.web.web_support import bearer, login, review_settings  # noqa: E402
from worker.web import create_app  # noqa: E402

PG_ADMIN = os.environ.get("LOOKOUT_TEST_PG_URL", "postgresql://postgres@127.0.0.1:5432/test")


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def _kept_database(name: str, sqlite: bool) -> tuple[str, bool]:
    """The URL of the database ``name`` (created if missing), and whether it has runs.

    ``name`` is a PostgreSQL database, or with ``sqlite`` a SQLite file.
    """
    if sqlite:
        path = Path(name).resolve()
        if not path.exists():
            return f"sqlite:///{path}", False
        with sqlite3.connect(path) as conn:
            found = conn.execute("SELECT name FROM sqlite_master WHERE name = 'runs'").fetchone()
            built = found is not None and conn.execute("SELECT count(*) FROM runs").fetchone() != (
                0,
            )
        return f"sqlite:///{path}", built
    with psycopg.connect(PG_ADMIN, autocommit=True) as admin:
        found = admin.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone()
        if found is None:
            admin.execute(f'CREATE DATABASE "{name}"')
    base = PG_ADMIN.rsplit("/", 1)[0]
    with psycopg.connect(f"{base}/{name}", autocommit=True) as conn:
        table = conn.execute("SELECT to_regclass('runs')").fetchone()
        built = table is not None and table[0] is not None
        if built:
            built = conn.execute("SELECT count(*) FROM runs").fetchone() != (0,)
    return f"{base.replace('postgresql://', 'postgresql+psycopg://', 1)}/{name}", built


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


def backend_cpu_s(engine: Any) -> float:
    """CPU seconds (user + system) used so far by the PostgreSQL backends of this database.

    Read from ``/proc`` (the server runs on this machine); 0 for SQLite, which
    runs inside this process and is counted with it.
    """
    if engine.dialect.name != "postgresql":
        return 0.0
    with engine.connect() as conn:
        pids = conn.exec_driver_sql(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database()"
        ).scalars()
        total = 0.0
        for pid in pids:
            try:
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


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
        server: list[float] = []
        statements: list[int] = []
        first = client.get(path, headers=headers)  # warm: templates, caches, plans
        assert first.status_code == 200, (path, first.status_code, first.text[:300])
        for _ in range(requests):
            before = backend_cpu_s(store.engine)
            counter.count = 0
            began, cpu = time.perf_counter(), time.process_time()
            response = client.get(path, headers=headers)
            walls.append(time.perf_counter() - began)
            cpus.append(time.process_time() - cpu)
            statements.append(counter.count)
            server.append(backend_cpu_s(store.engine) - before)
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
        pg = sum(server) / len(server) * 1000
        print(
            f"{label:32s} median {results[-1][1]:9.1f} ms  p95 {p95 * 1000:9.1f} ms  "
            f"CPU {results[-1][3]:8.1f} ms  PostgreSQL CPU {pg:6.1f} ms (mean)  "
            f"statements {results[-1][4]:.0f}  load {load()}",
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
    parser.add_argument("--database", help="keep the store in this PostgreSQL database; reuse it")
    args = parser.parse_args()
    print(
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}, store {'SQLite' if args.sqlite else 'PostgreSQL'}, "
        f"load {load()}",
        flush=True,
    )
    if args.database:
        url, built = _kept_database(args.database, args.sqlite)
        if built:
            print(f"measuring the store already in {args.database}", flush=True)
        else:
            _build(url, args)
        measure(url, args.requests)
        return
    with scratch_database(args.sqlite) as url:
        _build(url, args)
        measure(url, args.requests)


def _build(url: str, args: argparse.Namespace) -> None:
    began = time.perf_counter()
    counts = build(url, args.automations, args.runs)
    print(
        f"built in {time.perf_counter() - began:.1f} s: "
        + ", ".join(f"{n:,} {what}" for what, n in counts.items()),
        flush=True,
    )


if __name__ == "__main__":
    main()
