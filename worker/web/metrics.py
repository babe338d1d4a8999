"""``/metrics`` in the Prometheus text format, computed from the store at each scrape.

One custom collector reads ``worker.review.stats`` when Prometheus scrapes,
so every web process answers the same and nothing is lost at a restart.
Counters are totals over what the store holds:

===================================  =========================================
``lookout_runs_total``               runs by ``status`` and ``finding`` ("" when none)
``lookout_runs_decided_total``       runs with a finding by ``finding_source`` (``pinned``: no LLM)
``lookout_run_flags_total``          runs by second-opinion ``flag``
``lookout_llm_tokens_total``         tokens by ``component`` (agent, decision), ``direction``
``lookout_llm_cost_usd_total``       known cost in USD by ``component``
``lookout_deliveries_total``         alert deliveries by ``channel`` and ``status``
``lookout_deliveries_failed_total``  deliveries failed or fallback-only, by ``channel``
``lookout_review_outcomes_total``    runs labelled by a resolve, by ``reason``
``lookout_runs_queued``              gauge: runs waiting for a worker
``lookout_runs_running``             gauge: runs being run
``lookout_queue_lag_seconds``        gauge: how long the oldest queued run has waited past its slot
``lookout_incidents_open``           gauge: open incidents by ``kind``
===================================  =========================================
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterator

from prometheus_client import CollectorRegistry
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from checks.store.store import Store
from worker.review import Stats, stats


class StoreCollector(Collector):
    """Yields Lookout's metrics from the store (module docstring)."""

    def __init__(self, store: Store, clock: Callable[[], dt.datetime]) -> None:
        self.store = store
        self.clock = clock

    def describe(self) -> list[Metric]:
        """Describe nothing up front, so registering never queries the store."""
        return []

    def collect(self) -> Iterator[Metric]:
        """Query the store and yield every metric family."""
        s = stats(self.store, now=self.clock())
        runs = CounterMetricFamily(
            "lookout_runs", "Runs stored, by status and finding.", labels=["status", "finding"]
        )
        for (status, finding), n in sorted(s.runs.items()):
            runs.add_metric([status, finding], n)
        decided = CounterMetricFamily(
            "lookout_runs_decided",
            "Runs with a finding, by who decided it (checks, agent, override, pinned).",
            labels=["finding_source"],
        )
        for source, n in sorted(s.decided.items()):
            decided.add_metric([source], n)
        flags = CounterMetricFamily(
            "lookout_run_flags", "Runs whose second opinion set a flag.", labels=["flag"]
        )
        for flag, n in sorted(s.flags.items()):
            flags.add_metric([flag], n)
        tokens = CounterMetricFamily(
            "lookout_llm_tokens",
            "LLM tokens used, by component (agent, decision) and direction.",
            labels=["component", "direction"],
        )
        cost = CounterMetricFamily(
            "lookout_llm_cost_usd",
            "Known LLM cost in US dollars, by component.",
            labels=["component"],
        )
        for component, usage in sorted(s.usage.items()):
            tokens.add_metric([component, "input"], usage.input_tokens)
            tokens.add_metric([component, "output"], usage.output_tokens)
            cost.add_metric([component], usage.cost_usd)
        yield from (runs, decided, flags, tokens, cost)
        yield from self._deliveries(s)
        yield from self._queue(s)

    def _deliveries(self, s: Stats) -> Iterator[Metric]:
        deliveries = CounterMetricFamily(
            "lookout_deliveries",
            "Alert deliveries, by channel and status.",
            labels=["channel", "status"],
        )
        for (channel, status), n in sorted(s.deliveries.items()):
            deliveries.add_metric([channel, status], n)
        failed = CounterMetricFamily(
            "lookout_deliveries_failed",
            "Alert deliveries that failed or sent only the fallback, by channel.",
            labels=["channel"],
        )
        for channel, n in sorted(s.deliveries_failed.items()):
            failed.add_metric([channel], n)
        outcomes = CounterMetricFamily(
            "lookout_review_outcomes", "Runs labelled by a resolve, by reason.", labels=["reason"]
        )
        for reason, n in sorted(s.outcomes.items()):
            outcomes.add_metric([reason], n)
        yield from (deliveries, failed, outcomes)

    def _queue(self, s: Stats) -> Iterator[Metric]:
        yield GaugeMetricFamily("lookout_runs_queued", "Runs waiting for a worker.", value=s.queued)
        yield GaugeMetricFamily("lookout_runs_running", "Runs being run.", value=s.running)
        yield GaugeMetricFamily(
            "lookout_queue_lag_seconds",
            "Seconds the oldest queued run has waited past its slot (0: none queued).",
            value=s.queue_lag_s,
        )
        incidents = GaugeMetricFamily(
            "lookout_incidents_open", "Open incidents, by kind.", labels=["kind"]
        )
        for kind, n in sorted(s.open_incidents.items()):
            incidents.add_metric([kind], n)
        yield incidents


def make_registry(store: Store, clock: Callable[[], dt.datetime]) -> CollectorRegistry:
    """Return a registry holding only Lookout's store collector (no process metrics)."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(StoreCollector(store, clock))
    return registry
