"""Shared scans on the demo's nycflights13 source: statements per run and ``lookout run --all``.

Two measurements, each for this checkout and, with ``--before PATH``, for an
older checkout's code (a ``git archive`` of it, run with this venv and
``PYTHONPATH=PATH``):

- statements: every example automation's declared checks run in-process on the
  flights source's DuckDB cache file (``make demo`` builds it), counting the
  statements sent to its query processes (the catalog's included), with checks
  sharing statements and (this checkout only) each on its own (``shared=False``);
- wall and CPU of ``lookout run --all`` from the repository's root (a SQLite
  store in a temporary folder), round-robin over the checkouts, N rounds after
  one warm-up each: the median wall, and user + system CPU of the command and
  its children.

Run: ``.venv/bin/python bench/bench_shared_scans.py --rounds 7 --before /tmp/before``.
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def count_statements(shared: bool) -> dict[str, Any]:
    """Statements the example automations' checks send, summed over every automation."""
    from checks.automation.loader import load_automations
    from checks.declared.check import run_checks
    from checks.settings.limits import Limits
    from checks.sources import DuckDBQuerySource

    caches = sorted((ROOT / ".lookout/cache/sources").glob("flights-*.duckdb"))
    sent: list[str] = []
    checks = 0
    with DuckDBQuerySource("flights", caches[-1], Limits()) as source:
        run = source._processes.run

        def recorded(sql: str, **kwargs: Any) -> Any:
            sent.append(sql)
            return run(sql, **kwargs)

        source._processes.run = recorded  # type: ignore[method-assign]
        source.catalog()
        catalog = len(sent)
        options = {"shared": shared} if "shared" in inspect.signature(run_checks).parameters else {}
        started = time.monotonic()
        for automation in load_automations(ROOT / "automations").automations:
            if automation.checks:
                checks += len(automation.checks)
                run_checks(automation, source, Limits(), deadline=time.monotonic() + 600, **options)
        elapsed = time.monotonic() - started
    return {
        "checks": checks,
        "catalog_statements": catalog,
        "check_statements": len(sent) - catalog,
        "checks_s": round(elapsed, 3),
    }


def wall(env: dict[str, str], store: Path) -> tuple[float, float]:
    """One ``lookout run --all``: wall seconds, and CPU seconds of it and its children."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    subprocess.run(
        [str(ROOT / ".venv/bin/lookout"), "run", "--all"],
        cwd=ROOT,
        env={**env, "LOOKOUT_STORE_URL": f"sqlite:///{store}"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=False,
    )
    elapsed = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return elapsed, cpu


def main() -> None:
    """Parse the arguments, measure, print one JSON object per figure."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--before", type=Path, help="an older checkout's code")
    parser.add_argument("--count", choices=["shared", "apart"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.count:  # a child counting statements under one PYTHONPATH
        print(json.dumps(count_statements(args.count == "shared")))
        return
    envs = {"this checkout": dict(os.environ)}
    if args.before:
        envs["before"] = {**os.environ, "PYTHONPATH": str(args.before)}
    me = [sys.executable, __file__, "--count"]
    for label, env in envs.items():
        for mode in ("shared", "apart") if label == "this checkout" else ("shared",):
            found = subprocess.run(
                [*me, mode], env=env, capture_output=True, text=True, check=True, cwd=ROOT
            )
            print(json.dumps({"code": label, "mode": mode, **json.loads(found.stdout)}))
    with tempfile.TemporaryDirectory() as folder:
        times: dict[str, list[tuple[float, float]]] = {label: [] for label in envs}
        for round_ in range(args.rounds + 1):
            for label, env in envs.items():
                measured = wall(env, Path(folder) / f"{label.replace(' ', '_')}.db")
                if round_:  # the first round warms up
                    times[label].append(measured)
        for label, found in times.items():
            print(
                json.dumps(
                    {
                        "code": label,
                        "lookout run --all wall_s": round(
                            statistics.median(w for w, _ in found), 3
                        ),
                        "cpu_s": round(statistics.median(c for _, c in found), 3),
                        "rounds": args.rounds,
                        "load": round(os.getloadavg()[0], 2),
                    }
                )
            )


if __name__ == "__main__":
    main()
