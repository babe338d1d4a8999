"""Benchmark: LLM calls and tokens per run with and without pinned plans, then a data change.

The goal-only example automations (``automations/carrier-december-delays.yaml``
and ``automations/origin-cancellation-spikes.yaml``) run ``--runs`` times each
(default 30) as scheduled runs an hour apart, through ``checks.run_lifecycle.run_and_store``,
on a private copy of the nycflights13 DuckDB file, against
``checks.fakes.llm_server`` playing a two-call agent (``one_query_agent``: one
``execute_query``, then ``submit_report`` — Needs attention when the query
listed rows). Then the data changes (United's December departures 45 minutes
later; every LaGuardia departure on 4 July cancelled) and each runs
``--after`` more times (default 3). Everything runs twice, into two fresh SQLite
stores: with pinning (``llm.pin_plans: true``, the default) and without.

Printed: LLM calls and tokens (prompt + completion, as the fake counts them:
characters / 4) per run on the stable data and after the change, where they
were counted (at the fake server), whether the findings of the two modes are
identical run for run, and whether the first run after the change saw it.
Nothing here is a model: the fake's answers are a fixed rule over the query's
result, so the same data always gives the same finding.

Run: ``.venv/bin/python bench/bench_pinning.py [--runs 30] [--after 3]`` (under
a minute on 2 cores).
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import shutil
import statistics
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import duckdb

from checks.automation.loader import load_automations
from checks.fakes.llm_server import FakeLLM, one_query_agent
from checks.report import RunReport
from checks.run import SourcePool
from checks.run_lifecycle import run_and_store
from checks.settings.config import Settings, default_config_data
from checks.settings.llm import LLMSettings
from checks.settings.sources import DuckDBSource
from checks.store.store import Store

ROOT = Path(__file__).resolve().parents[1]
NAMES = ("carrier-december-delays", "origin-cancellation-spikes")
QUERIES = {
    "carrier-december-delays": (
        "SELECT carrier, round(avg(dep_delay), 2) AS avg_delay, count(*) AS departed "
        "FROM flights WHERE month = 12 AND dep_delay IS NOT NULL GROUP BY carrier "
        "HAVING count(*) >= 100 AND avg(dep_delay) >= 30 ORDER BY carrier"
    ),
    "origin-cancellation-spikes": (
        "SELECT origin, month, day, count(*) AS scheduled, "
        "count(*) FILTER (WHERE dep_time IS NULL) AS cancelled FROM flights "
        "WHERE NOT (month = 2 AND day IN (8, 9)) GROUP BY origin, month, day "
        "HAVING count(*) FILTER (WHERE dep_time IS NULL) > 0.2 * count(*) "
        "ORDER BY origin, month, day"
    ),
}
CHANGE = (
    "UPDATE flights SET dep_delay = dep_delay + 45 WHERE month = 12 AND carrier = 'UA'",
    "UPDATE flights SET dep_time = NULL WHERE origin = 'LGA' AND month = 7 AND day = 4",
)
START = dt.datetime(2026, 12, 1, tzinfo=dt.UTC)


@dataclass
class Mode:
    """One mode's runs: per (automation, run) the finding, LLM calls and tokens."""

    pinning: bool
    findings: list[tuple[str, int, str | None, str | None]] = field(default_factory=list)
    calls: list[int] = field(default_factory=list)
    tokens: list[int] = field(default_factory=list)
    wall_s: list[float] = field(default_factory=list)
    phase: list[str] = field(default_factory=list)


def flights_copy(folder: Path) -> Path:
    """Build the bundled flights source once and copy its DuckDB file to ``folder``."""
    cache = folder / "cache"
    settings = Settings.model_validate({**default_config_data(), "cache_dir": str(cache)})
    with SourcePool(settings) as pool:
        pool.get("flights").catalog()
    (built,) = [p for p in cache.rglob("*.duckdb")]
    target = folder / "flights.duckdb"
    shutil.copyfile(built, target)
    return target


def one_mode(folder: Path, db: Path, *, pinning: bool, runs: int, after: int) -> Mode:
    """Run both automations ``runs`` times, change the data, run them ``after`` times more."""
    work = folder / ("pinned" if pinning else "unpinned")
    work.mkdir()
    data = work / "flights.duckdb"
    shutil.copyfile(db, data)
    loaded = load_automations(ROOT / "automations", known_sources={"flights"})
    automations = [loaded.by_name(n) for n in NAMES]
    mode = Mode(pinning)
    with FakeLLM(default=one_query_agent(QUERIES)) as llm:
        settings = Settings(
            store_url=f"sqlite:///{work}/lookout.db",
            cache_dir=str(work / "cache"),
            sources={"flights": DuckDBSource(type="duckdb", database=str(data))},
            llm=LLMSettings(base_url=llm.base_url, model="fake", max_retries=0, pin_plans=pinning),
        )
        store = Store(settings.store_url)
        slot = START

        def phase(count: int, label: str) -> None:
            nonlocal slot
            with SourcePool(settings) as pool:
                for _ in range(count):
                    slot += dt.timedelta(hours=1)
                    for automation in automations:
                        before = len(llm.chat_requests)
                        began = time.perf_counter()
                        report = run_and_store(
                            automation, settings, pool, store, scheduled_for=slot,
                            trigger="schedule",
                        )  # fmt: skip
                        mode.wall_s.append(time.perf_counter() - began)
                        mode.calls.append(len(llm.chat_requests) - before)
                        mode.tokens.append(tokens_of(report))
                        mode.phase.append(label)
                        mode.findings.append(
                            (
                                automation.name,
                                len(mode.findings) // len(automations),
                                str(report.finding) if report.finding else None,
                                str(report.finding_source) if report.finding_source else None,
                            )
                        )

        phase(runs, "stable")
        with duckdb.connect(str(data)) as conn:
            for statement in CHANGE:
                conn.execute(statement)
        phase(after, "changed")
        store.close()
    return mode


def tokens_of(report: RunReport) -> int:
    """Prompt + completion tokens the run's agent used (0 when no agent ran)."""
    agent = report.agent or {}
    return int(agent.get("input_tokens", 0)) + int(agent.get("output_tokens", 0))


def summarise(mode: Mode) -> dict[str, float]:
    """Totals per phase: runs, LLM calls per run, tokens per run, median wall per run."""
    out: dict[str, float] = {}
    for name in ("stable", "changed"):
        idx = [i for i, p in enumerate(mode.phase) if p == name]
        out[f"{name}_runs"] = len(idx)
        out[f"{name}_calls"] = sum(mode.calls[i] for i in idx)
        out[f"{name}_tokens"] = sum(mode.tokens[i] for i in idx)
        out[f"{name}_wall"] = statistics.median(mode.wall_s[i] for i in idx)
    return out


def main() -> None:
    """Run both modes and print the comparison."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=30, help="runs per automation on stable data")
    parser.add_argument("--after", type=int, default=3, help="runs per automation after the change")
    args = parser.parse_args()
    print(
        f"machine: {os.cpu_count()} cores, {platform.machine()}, Python {platform.python_version()}"
    )
    print(f"load at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    with tempfile.TemporaryDirectory(prefix="bench-pinning-") as tmp:
        folder = Path(tmp)
        db = flights_copy(folder)
        began = time.perf_counter()
        modes = [
            one_mode(folder, db, pinning=p, runs=args.runs, after=args.after) for p in (False, True)
        ]
        elapsed = time.perf_counter() - began
    print(f"load at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())} ({elapsed:.0f} s)")
    unpinned, pinned = modes
    n = len(NAMES)
    rows = []
    for mode, label in ((unpinned, "without pinning"), (pinned, "with pinning")):
        s = summarise(mode)
        rows.append((label, s))
        print(
            f"{label}: stable {s['stable_runs']:.0f} runs, {s['stable_calls']:.0f} LLM calls "
            f"({s['stable_calls'] / s['stable_runs']:.3f}/run), {s['stable_tokens']:.0f} tokens "
            f"({s['stable_tokens'] / s['stable_runs']:.0f}/run), "
            f"median {s['stable_wall']:.2f} s/run; after the change "
            f"{s['changed_runs']:.0f} runs, {s['changed_calls']:.0f} calls, "
            f"{s['changed_tokens']:.0f} tokens, median {s['changed_wall']:.2f} s/run"
        )
    stable_u, stable_p = rows[0][1]["stable_calls"], rows[1][1]["stable_calls"]
    print(f"LLM calls on stable data: {100 * (1 - stable_p / stable_u):.1f} % fewer with pinning")
    same = [(a, r, f) for a, r, f, _ in unpinned.findings] == [
        (a, r, f) for a, r, f, _ in pinned.findings
    ]
    print(f"findings identical run for run: {same}")
    first_after = args.runs * n
    for name_index, name in enumerate(NAMES):
        i_before, i_after = first_after - n + name_index, first_after + name_index
        print(
            f"{name}: last stable run {pinned.findings[i_before][2]} "
            f"({pinned.findings[i_before][3]}), first run after the change "
            f"{pinned.findings[i_after][2]} ({pinned.findings[i_after][3]}, "
            f"{pinned.calls[i_after]} LLM calls); without pinning {unpinned.findings[i_after][2]}"
        )
    print("per run, with pinning (automation: finding source, LLM calls):")
    for name_index, name in enumerate(NAMES):
        sources = [
            f"{(pinned.findings[i][3] or '-')[0]}{pinned.calls[i]}"
            for i in range(name_index, len(pinned.findings), n)
        ]
        print(f"  {name}: {' '.join(sources)}")


if __name__ == "__main__":
    main()
