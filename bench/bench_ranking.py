"""Benchmark: ranking data sets with a decision model, against the fake backend.

Measures, for synthetic catalogs (``checks.fakes.synthetic_catalog``) of 50, 500 and
2,000 data sets, against the fake ``systemone`` server answering every request
after a fixed latency (default 200 ms):

- the wall time of ``rank_data_sets`` (chunks of a round run in parallel, so
  about one round trip per round), against the time the same requests would
  take one after another;
- the tokens the agent reads from one ``list_data_sets`` call (characters / 4
  of the result's JSON, the shape of docs/design.md, The agent's tools): every data set listed,
  against the top 5 of the ranking plus the count of the others;
- the input tokens the ranking sent to the decision model (request
  characters / 4).

The fake runs in a forked process of its own (Linux/macOS), so that its JSON
parsing does not compete with the client for one interpreter lock.

Nothing here is a model: the fake answers from a scripted relevance of the
names (the benchmark measures the plumbing, not ranking quality).

Run: ``.venv/bin/python bench/bench_ranking.py [--latency-s 0.2] [--repeat 3]``.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import statistics
import tempfile
import time
from collections.abc import Sequence
from multiprocessing.queues import Queue
from pathlib import Path
from typing import Any

from checks.agent.dataset_ranking import DataSetRanking, lexical_order, rank_data_sets
from checks.fakes.decision_server import FakeDecision
from checks.fakes.synthetic_catalog import CatalogScorer, family, synthetic_catalog
from checks.opinion.backends import make_decision_model
from checks.opinion.decision_model import Backend
from checks.settings.decision import DecisionSettings
from checks.sources import DataSet

GOAL = "No order has a negative amount"
CAP = 5


def relevance(name: str) -> float:
    """Scripted relevance: the source table, its copies, everything else."""
    if name == "orders":
        return 1.0
    copied = family(name)
    if copied == "orders":
        return 0.8 if name.startswith("orders_") else 0.7
    return 0.1 if copied else 0.02


def listing(shown: Sequence[DataSet], total: int) -> dict[str, Any]:
    """The ``list_data_sets`` result the agent reads (docs/design.md, The agent's tools)."""
    partial = len(shown) < total
    return {
        "data_sets": [
            {
                "name": d.name,
                "columns": [{"name": c.name, "type": c.type} for c in d.columns],
                "row_count": d.row_count,
            }
            for d in shown
        ],
        "total": total,
        "shown": len(shown),
        "partial": partial,
        "next": f"{total - len(shown)} more data sets are not shown." if partial else None,
    }


def tokens(value: Any) -> int:
    """Characters / 4 of the JSON text, rounded up."""
    return (len(json.dumps(value)) + 3) // 4


def serve(latency_s: float, urls: Queue[str], log: str) -> None:
    """Run the fake in this (child) process until terminated; put its base URL on ``urls``."""
    scorer = CatalogScorer(Backend.SYSTEMONE, relevance, delay_s=latency_s)
    fake = FakeDecision(Backend.SYSTEMONE, default=scorer, log_path=log)
    urls.put(fake.base_url)
    fake.serve_forever()


def bench(n: int, latency_s: float, repeat: int, workdir: Path) -> dict[str, Any]:
    """Rank a catalog of ``n`` data sets ``repeat`` times; return the figures.

    The fake runs in its own process, so its parsing does not share this
    process's interpreter lock with the client being measured.
    """
    catalog = synthetic_catalog(n)
    log = workdir / f"requests-{n}.jsonl"
    context = multiprocessing.get_context("fork")
    urls: Queue[str] = context.Queue()
    server = context.Process(target=serve, args=(latency_s, urls, str(log)), daemon=True)
    server.start()
    times: list[float] = []
    ranking: DataSetRanking | None = None
    try:
        settings = DecisionSettings(backend="systemone", base_url=urls.get(), model="fake")
        with make_decision_model(settings) as model:
            for _ in range(repeat):
                start = time.perf_counter()
                ranking = rank_data_sets(
                    catalog,
                    goal=GOAL,
                    query=None,
                    model=model,
                    cap=CAP,
                    fallback=lexical_order(GOAL, None),
                )
                times.append(time.perf_counter() - start)
    finally:
        server.terminate()
        server.join(timeout=10)
    logged = [json.loads(line)["body"] for line in log.read_text(encoding="utf-8").splitlines()]
    sent = sum(len(json.dumps(b)) // 4 for b in logged) // repeat
    assert ranking is not None
    record = ranking.record
    return {
        "n": n,
        "rounds": record.rounds,
        "chunks": record.chunks,
        "requests": record.requests,
        "median_s": statistics.median(times),
        "sequential_s": record.requests * latency_s,
        "round_trips_s": record.rounds * latency_s,
        "all_tokens": tokens(listing(catalog, n)),
        "top_tokens": tokens(listing(ranking.order[:CAP], n)),
        "sent_tokens": sent,
        "top": [d.name for d in ranking.order[:CAP]],
    }


def main(argv: Sequence[str] | None = None) -> None:
    """Print the figures as a Markdown table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency-s", type=float, default=0.2, help="fake latency per request")
    parser.add_argument("--repeat", type=int, default=5, help="rankings per catalog (median)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as workdir:
        rows = [bench(n, args.latency_s, args.repeat, Path(workdir)) for n in (50, 500, 2000)]
    print(
        f"Fake systemone backend, {args.latency_s * 1000:.0f} ms per request, "
        f"median of {args.repeat}; default input budget 32k tokens, 8 requests in parallel.\n"
    )
    print(
        "| data sets | rounds | requests (round 1 chunks) | ranking time | "
        "one after another | rounds × latency | list_data_sets, all listed | "
        f"list_data_sets, top {CAP} | sent to the decision model |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(
            f"| {r['n']:,} | {r['rounds']} | {r['requests']} ({r['chunks']}) | "
            f"{r['median_s'] * 1000:.0f} ms | {r['sequential_s'] * 1000:.0f} ms | "
            f"{r['round_trips_s'] * 1000:.0f} ms | {r['all_tokens']:,} tokens | "
            f"{r['top_tokens']:,} tokens | {r['sent_tokens']:,} tokens |"
        )
    print()
    for r in rows:
        print(f"top {CAP} of {r['n']:,}: {', '.join(r['top'])}")


if __name__ == "__main__":
    main()
