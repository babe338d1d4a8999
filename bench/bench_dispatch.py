"""Benchmark of dispatch over many automations: loading the files, then ``dispatch_due`` ticks.

M automations (default 10,000), copies of the example automations with declared
checks, written one per file (``--per-file 1``, default) or more per file, each
on a daily schedule; the first ``--due`` of them (default 1,000) fire at 01:00
UTC, the others at other hours. In this process, with PostgreSQL as the store:

1. ``load_automations`` over the folder (the CLI's loader: ``lookout validate``);
2. ``Dispatcher.dispatch_due``: the first call (every file parsed, every cursor
   created), the next two calls with nothing due (the first computes each
   automation's next slot, the second finds them cached), a call after one file
   changed (only that file is read again), then a tick with ``--due``
   automations due (broker replaced by a list), the same tick sending real
   Celery messages to Redis, and a tick with all M due, sent to Redis.

Each phase runs twice from the same state: once timed, then once under
``tracemalloc`` for its peak Python memory (tracing slows Python down, so times
come from the untraced call). The process's peak RSS
(``ru_maxrss``) is printed at the end. The load average is printed beside each
phase: the machine may be shared.

Needs PostgreSQL (``LOOKOUT_TEST_PG_URL``, default
``postgresql://postgres@127.0.0.1:5432/test``; a scratch database is created
and dropped) and Redis on 127.0.0.1:6379 (database 12 is flushed).

Run: ``.venv/bin/python bench/bench_dispatch.py [--automations 10000] [--due 1000]
[--per-file 1]``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import resource
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import redis

from checks.automation.loader import load_automations
from checks.settings.config import Settings, default_config_data
from checks.store.store import Store
from worker.service.queue_records import QueuedRun
from worker.service.run_queue import RunQueue

HERE = Path(__file__).resolve().parent
sys.path.insert(1, str(HERE))
sys.path.insert(2, str(HERE.parent))

from bench_service import REDIS_URL, scratch_database, seed, write_automations  # noqa: E402

from tests.worker.service.service_support import clean_store, write_config  # noqa: E402

DAY = dt.datetime(2026, 6, 1, tzinfo=dt.UTC)


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


CPU: list[float] = []  # CPU seconds of each measured call, this process (PostgreSQL's not counted)


def measure(call: Callable[[], Any], reset: Callable[[], None]) -> tuple[float, float, Any]:
    """(seconds of the untraced call, tracemalloc peak MiB of a second, traced call, result)."""
    reset()
    began, cpu = time.perf_counter(), time.process_time()
    result = call()
    took = time.perf_counter() - began
    CPU.append(time.process_time() - cpu)
    reset()
    tracemalloc.start()
    call()
    peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    return took, peak, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--automations", type=int, default=10_000)
    parser.add_argument("--due", type=int, default=1_000)
    parser.add_argument("--per-file", type=int, default=1)
    args = parser.parse_args()
    tmp = Path(os.environ.get("BENCH_TMP", "/tmp")) / f"lookout-bench-dispatch-{os.getpid()}"
    folder = tmp / "automations"
    count, due = args.automations, args.due
    other = [f"{m} {h} * * *" for h in range(2, 24) for m in range(0, 60, 5)]
    names = write_automations(
        folder,
        count,
        lambda n: "0 1 * * *" if n < due else other[n % len(other)],
        per_file=args.per_file,
    )
    files = len(list(folder.iterdir()))
    print(
        f"machine: {os.cpu_count()} cores, {platform.machine()}, Python {platform.python_version()}"
    )
    print(f"\n{count} automations in {files} files, {due} due at 01:00 UTC:")
    print("| phase | time | CPU | tracemalloc peak | runs queued | load (1, 5, 15 min) |")
    print("| --- | ---: | ---: | ---: | ---: | --- |")

    def row(label: str, took: float, peak: float, queued: object) -> None:
        cpu = f"{CPU[-1]:.2f} s" if CPU else "-"
        print(
            f"| {label} | {took:.2f} s | {cpu} | {peak:.1f} MiB | {queued} | {load()} |", flush=True
        )

    took, peak, loaded = measure(
        lambda: load_automations(folder, known_sources=["flights"]), lambda: None
    )
    assert len(loaded.automations) == count and not loaded.errors, loaded.errors[:3]
    row("load_automations (the CLI's loader)", took, peak, "-")

    from worker.service.dispatch import Dispatcher

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
        dispatcher = Dispatcher(settings, queue, sent.append)

        def first() -> Any:
            clean_store(store)
            return Dispatcher(settings, queue, sent.append).dispatch_due(DAY)

        took, peak, result = measure(first, lambda: None)
        row("first call: parse every file, create every cursor", took, peak, len(result.queued))
        dispatcher.dispatch_due(DAY)  # the kept dispatcher: files parsed, cursors exist
        at = DAY + dt.timedelta(seconds=30)
        began = time.perf_counter()
        CPU.append(-time.process_time())
        dispatcher.dispatch_due(at)
        CPU[-1] += time.process_time()
        row("nothing due, first look at these cursors", time.perf_counter() - began, 0, 0)
        took, peak, result = measure(lambda: dispatcher.dispatch_due(at), lambda: None)
        row("nothing due: files unchanged, next slots cached", took, peak, len(result.queued))
        changed = sorted(folder.iterdir())[-1]

        def touch() -> None:
            changed.write_text(changed.read_text(encoding="utf-8") + "\n", encoding="utf-8")

        reloads = dispatcher.known.reloads
        took, peak, result = measure(lambda: dispatcher.dispatch_due(at), touch)
        assert dispatcher.known.reloads == reloads + 2  # one file, read again each time
        row("nothing due, one file changed (read again)", took, peak, len(result.queued))

        def due_again() -> None:  # every automation has one slot in (DAY, DAY + 1 day]
            clean_store(store)
            seed(store, names, DAY)

        tick = DAY + dt.timedelta(hours=1, seconds=30)
        took, peak, result = measure(
            lambda: Dispatcher(settings, queue, sent.append, dispatcher.known).dispatch_due(tick),
            due_again,
        )
        assert len(result.queued) == due, len(result.queued)
        row(f"{due} due: inserted and queued (broker = a list)", took, peak, len(result.queued))
        os.environ["LOOKOUT_CONFIG"] = str(write_config(tmp / "dispatch.yaml", data))
        from worker.service import tasks

        def real(now: dt.datetime) -> Any:
            redis.Redis.from_url(REDIS_URL).flushdb()
            kwargs: dict[str, Any] = {}
            if hasattr(tasks, "run_sender"):  # one broker connection per tick
                kwargs["send_batch"] = tasks.run_sender
            return Dispatcher(
                settings, queue, tasks.send_run, dispatcher.known, **kwargs
            ).dispatch_due(now)

        took, peak, result = measure(lambda: real(tick), due_again)
        assert len(result.queued) == due
        row(f"{due} due: inserted and sent to Redis", took, peak, len(result.queued))
        took, peak, result = measure(lambda: real(DAY + dt.timedelta(days=1)), due_again)
        row(  # a day late: slots past service.misfire_grace_s are recorded as skipped, not sent
            f"all {count} due a day late: every slot recorded, those in the grace sent to Redis",
            took,
            peak,
            len(result.queued),
        )
        redis.Redis.from_url(REDIS_URL).flushdb()
        store.close()
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"\npeak RSS of the process: {rss:.0f} MiB")


if __name__ == "__main__":
    main()
