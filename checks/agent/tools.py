"""The read tools over one source: list_data_sets, describe_data_set, execute_query.

Result shapes are the public contract of docs/design.md, The agent's tools:

- ``list_data_sets(query?)`` → ``{data_sets: [{name, columns: [{name, type}],
  row_count, row_count_is_estimate?}], total, shown, partial, next}``: the row
  counts are the engine's statistics (``row_count_is_estimate: true``), or null
  where it keeps none; nothing is counted to list the tables
- ``describe_data_set(name)`` → ``{name, columns: [{name, type, null_count}],
  row_count, sample_rows}``: counted, exact
- ``execute_query(sql)`` → ``{id: "Q3", columns, rows, row_count, truncated}``,
  plus ``warnings`` (``checks.sql.lint``: ``NOT IN`` over NULLs, integer
  division, the session's clock) when the SQL has any, so the model can fix it

Any problem (unknown data set, a rejected, failing or timed-out query) comes
back as ``{error: "..."}`` with the reason, so the model can correct itself.
Every query goes through ``source.query``, the read-only layer. The schemas
are in ``checks.agent.toolspec``; ``submit_report`` is checked by ``checks.agent.contract``.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass
from typing import Any

from checks.agent.dataset_ranking import lexical_order, rank_data_sets
from checks.errors import LookoutError
from checks.opinion.decision_model import DecisionModel
from checks.report import Evidence, json_value
from checks.settings.limits import Limits
from checks.sources import DataSet, QueryResult, Source
from checks.sql.lint import lint

SAMPLE_ROWS = 5


def _cut_cell(value: Any, max_chars: int) -> Any:
    value = json_value(value)
    if isinstance(value, str) and len(value) > max_chars:
        return value[: max_chars - 1] + "…"
    return value


@dataclass
class ToolCallWork:
    """The work of one read tool call, done in a worker thread.

    Exactly one of ``result`` (final) and ``query`` (a successful query still
    waiting for its id; see ``ToolBox.settle``) is set.
    """

    result: dict[str, Any] | None = None
    query: QueryResult | None = None


class ToolBox:
    """The read tools over one source, for one run.

    ``run`` may be called from several threads at once; ``settle`` is called
    from one thread, in the order the calls were made, so query ids follow
    that order.

    Args:
        source: the read-only source.
        goal: the automation's goal, used to rank ``list_data_sets``.
        limits: row, cell and result budgets and the query time limit.
        list_cap: most data sets shown by one ``list_data_sets``.
        deadline: ``time.monotonic()`` after which no query starts (None: no limit).
        ranker: the decision model that ranks a catalog larger than ``list_cap``
            (``checks.agent.dataset_ranking``); None or backend ``none``: lexical order.
            How each ranking was made is kept in ``rankings``.
        timezone: the automation's time zone, for the lint of ``execute_query``.
    """

    def __init__(
        self,
        source: Source,
        *,
        goal: str,
        limits: Limits,
        list_cap: int,
        deadline: float | None = None,
        ranker: DecisionModel | None = None,
        timezone: str = "UTC",
    ) -> None:
        self.source = source
        self.ranker = ranker
        self.rankings: list[dict[str, Any]] = []
        self._ranked: dict[str | None, list[DataSet]] = {}
        self.goal = goal
        self.limits = limits
        self.list_cap = list_cap
        self.deadline = deadline
        self.timezone = timezone
        self.evidence: list[Evidence] = []
        self._catalog: list[DataSet] | None = None
        self._lock = threading.Lock()

    def catalog(self) -> list[DataSet]:
        """Return the source's data sets, read once per run."""
        with self._lock:
            if self._catalog is None:
                self._catalog = list(self.source.catalog())
            return self._catalog

    def run(self, name: str, args: dict[str, Any]) -> ToolCallWork:
        """Do one read tool call with checked arguments (see ``check_arguments``)."""
        try:
            if name == "list_data_sets":
                return ToolCallWork(result=self.list_data_sets(args.get("query")))
            if name == "describe_data_set":
                return ToolCallWork(result=self.describe_data_set(args["name"]))
            if name == "execute_query":
                return self.execute_query(args["sql"])
        except LookoutError as exc:
            return ToolCallWork(result={"error": str(exc)})
        return ToolCallWork(result={"error": f"'{name}' is not a read tool"})

    def settle(self, outcome: ToolCallWork) -> dict[str, Any]:
        """Return the result the model sees; a successful query gets its id and evidence here."""
        if outcome.query is None:
            return outcome.result or {}
        result = outcome.query
        query_id = f"Q{len(self.evidence) + 1}"
        evidence = Evidence.of_result(
            result, evidence_id=query_id, origin="agent", limits=self.limits
        )
        self.evidence.append(evidence)
        answer: dict[str, Any] = {
            "id": query_id,
            "columns": list(result.columns),
            "rows": evidence.rows,
            "row_count": result.row_count,
            "truncated": evidence.truncated,
        }
        warnings = lint(
            result.sql,
            dialect=self.source.dialect,
            catalog=self.catalog(),
            timezone=self.timezone,
        )
        if warnings:
            answer["warnings"] = [w.message for w in warnings]
        if not result.row_count_exact:  # a partial count says so
            answer["row_count_is_lower_bound"] = True
        return answer

    def list_data_sets(self, query: str | None) -> dict[str, Any]:
        """Return the ranked slice of the catalog (``partial`` when some are left out)."""
        every = self.catalog()
        ranked = self._rank(every, query)
        shown = ranked[: self.list_cap]
        partial = len(shown) < len(every)
        hint = None
        if partial:
            hint = (
                f"{len(every) - len(shown)} more data sets are not shown. Call list_data_sets "
                "again with a query naming the tables or columns you need (for example "
                'query: "passenger bookings") to rank those first, or describe_data_set '
                "with an exact name."
            )
        return {
            "data_sets": [
                {
                    "name": d.name,
                    "columns": [
                        {"name": _cut_cell(c.name, self.limits.max_cell_chars), "type": c.type}
                        for c in d.columns
                    ],
                    "row_count": d.row_count,
                    **({"row_count_is_estimate": True} if d.row_count_estimated else {}),
                }
                for d in shown
            ],
            "total": len(every),
            "shown": len(shown),
            "partial": partial,
            "next": hint,
        }

    def _rank(self, every: list[DataSet], query: str | None) -> list[DataSet]:
        """Order the catalog for ``query``, once per query per run (a ranking costs requests)."""
        with self._lock:
            if query in self._ranked:
                return self._ranked[query]
        fallback = lexical_order(self.goal, query)
        if self.ranker is None or len(every) <= self.list_cap:
            ranked = fallback(every)
        else:
            ranking = rank_data_sets(
                every,
                goal=self.goal,
                query=query,
                model=self.ranker,
                cap=self.list_cap,
                fallback=fallback,
            )
            ranked = list(ranking.order)
            with self._lock:
                self.rankings.append({"query": query, **ranking.record.to_dict()})
        with self._lock:
            self._ranked[query] = ranked
        return ranked

    def describe_data_set(self, name: str) -> dict[str, Any]:
        """Return the source's description of one data set, cells cut to the cell budget."""
        if name.lower() not in {d.name.lower() for d in self.catalog()}:
            return {
                "error": f"no data set named {json.dumps(name)}; call list_data_sets for the names"
            }
        described = self.source.describe(name, sample_rows=SAMPLE_ROWS)
        cap = self.limits.max_cell_chars
        # a lake table's version (a DuckDB source's Delta or Iceberg table), when there is one
        origin = {"origin": _cut_cell(described["origin"], cap)} if "origin" in described else {}
        return {
            "name": described["name"],
            "columns": [
                {
                    "name": c["name"],
                    "type": str(c["type"]),
                    "null_count": json_value(c.get("null_count")),
                }
                for c in described["columns"]
            ],
            "row_count": json_value(described.get("row_count")),
            "sample_rows": [
                [_cut_cell(v, cap) for v in row] for row in described.get("sample_rows", [])
            ],
            **origin,
        }

    def execute_query(self, sql: str) -> ToolCallWork:
        """Run ``sql`` through ``source.query`` within the run's time left.

        A rejected, failing or timed-out query gives ``{error}`` (the reason);
        a successful one is settled later by ``settle``.
        """
        timeout_s = self.limits.query_timeout_s
        if self.deadline is not None:
            remaining = self.deadline - time.monotonic()
            if remaining <= 0:
                return ToolCallWork(
                    result={"error": "not run: the automation's time limit ran out"}
                )
            timeout_s = min(timeout_s, remaining)
        result = self.source.query(sql, max_rows=self.limits.max_rows, timeout_s=timeout_s)
        return ToolCallWork(query=result)
