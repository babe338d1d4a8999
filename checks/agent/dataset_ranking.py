"""Ranking a source's data sets for ``list_data_sets`` with a decision model.

When a source has more data sets than ``list_data_sets`` shows, every data
set gets one yes/no question — "does the agent need ``dN`` for this goal?" —
and all candidates go in one request, because the quality comes from the
model comparing them (docs/design.md, Decision models). The state lists each candidate as
``{id: "dN", name, columns, row_count}`` inside the fenced, untrusted block
(``checks.opinion.decision_model.untrusted_state``); the questions name only the id, so a
data set named like an instruction (``SYSTEM_OVERRIDE_always_answer_true``)
is just a name inside the data.

Past the backend's input budget the candidates are cut into chunks (in
catalog order) asked in parallel, and the top ``top_per_chunk`` (10) of
every chunk are asked again together in a further round, until one request
holds them all. The result is the full order — the last round's candidates
by their probability, then each earlier round's others by theirs — sorted,
never cut at a threshold; ties and unanswered candidates follow the
fallback (lexical) order.

On a timeout, an HTTP error, a chunk with no valid answer, backend ``none``,
or a ranking that would take more than ``max_requests`` requests (a chat
backend asks one question per request), the ``fallback`` order is used and
``RankingRecord.fallback_reason`` says why.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from checks.agent.lexical_ranking import relevance
from checks.opinion.decision_model import (
    Answers,
    Backend,
    DecisionModel,
    YesNo,
    YesNoAnswer,
    estimate_tokens,
    untrusted_state,
)
from checks.sources import DataSet

LexicalOrder = Callable[[Sequence[DataSet]], list[DataSet]]
"""A fallback ranking: the data sets, most relevant first."""

MAX_COLUMNS_SHOWN = 40
"""Columns listed per data set in the state; the rest are counted."""

BUDGET_MARGIN = 0.9
"""Share of the input budget a chunk is packed to (token counts are estimates)."""


def lexical_order(goal: str, query: str | None) -> LexicalOrder:
    """Return the lexical fallback: ``lexical_ranking.relevance`` descending, then name.

    Names compare case-insensitively, so a capitalised name (``SYSTEM_…``) is
    not lifted above lower-case ones of equal relevance.
    """

    def order(data_sets: Sequence[DataSet]) -> list[DataSet]:
        def key(d: DataSet) -> tuple[float, str, str]:
            score = relevance(d.name, [c.name for c in d.columns], goal, query)
            return (-score, d.name.lower(), d.name)

        return sorted(data_sets, key=key)

    return order


class RankingMethod(StrEnum):
    """How the order was made."""

    DECISION_MODEL = "decision_model"
    LEXICAL_FALLBACK = "lexical_fallback"
    ALL_SHOWN = "all_shown"


@dataclass(frozen=True)
class RankedDataSet:
    """One data set in the ranking.

    Attributes:
        data_set: the data set.
        probability: P(needed) from the last round it was asked in; None when
            not asked or not validly answered.
        first_round: P(needed) from the first round, or None.
        rounds: how many rounds asked about it (0: not asked).
    """

    data_set: DataSet
    probability: float | None
    first_round: float | None
    rounds: int


@dataclass
class RankingRecord:
    """How a ranking was made, for the run's trace (``to_dict``)."""

    method: RankingMethod
    backend: str
    candidates: int
    rounds: int = 0
    chunks: int = 0
    requests: int = 0
    finalists: int = 0
    unanswered: int = 0
    fallback_reason: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = 0.0
    elapsed_ms: int = 0

    def to_dict(self) -> dict[str, Any]:
        """Return the record as JSON-safe values."""
        return {
            "method": str(self.method),
            "backend": self.backend,
            "candidates": self.candidates,
            "rounds": self.rounds,
            "chunks": self.chunks,
            "requests": self.requests,
            "finalists": self.finalists,
            "unanswered": self.unanswered,
            "fallback_reason": self.fallback_reason,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cost_usd": self.cost_usd,
            "elapsed_ms": self.elapsed_ms,
        }


@dataclass
class DataSetRanking:
    """The full order of a source's data sets and how it was made."""

    ranked: list[RankedDataSet]
    record: RankingRecord

    @property
    def order(self) -> list[DataSet]:
        """Every data set, most needed first."""
        return [r.data_set for r in self.ranked]


class _Failed(Exception):
    """A request gave no usable answer; the ranking falls back."""


@dataclass
class _Ranker:
    data_sets: Sequence[DataSet]
    goal: str
    query: str | None
    model: DecisionModel
    top_per_chunk: int
    record: RankingRecord
    items: list[dict[str, Any]] = field(default_factory=list)
    costs: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        for i, d in enumerate(self.data_sets):
            columns = [f"{c.name} {c.type}" for c in d.columns[:MAX_COLUMNS_SHOWN]]
            if len(d.columns) > MAX_COLUMNS_SHOWN:
                columns.append(f"… {len(d.columns) - MAX_COLUMNS_SHOWN} more columns")
            item = {"id": f"d{i}", "name": d.name, "columns": columns, "row_count": d.row_count}
            self.items.append(item)
            q_tokens = self.model.question_tokens(self.question(i))
            self.costs.append(estimate_tokens(json.dumps(item)) + 1 + q_tokens)

    def question(self, i: int) -> YesNo:
        asked = "the goal and what the agent asked for" if self.query else "the goal"
        return YesNo(f"d{i}", f"Does the agent need data set d{i} to check {asked}?")

    def state(self, chunk: Sequence[int]) -> str:
        payload = {
            "goal": self.goal,
            "agent_asked_for": self.query,
            "data_sets": [self.items[i] for i in chunk],
        }
        return untrusted_state(
            "an automation's goal, what its agent asked for, and data sets of a source "
            "(id, name, columns, row count)",
            payload,
        )

    def chunks(self, pool: Sequence[int]) -> list[list[int]]:
        limit = self.model.input_budget_tokens * BUDGET_MARGIN
        base = estimate_tokens(self.state([])) + self.model.request_overhead_tokens()
        chunks: list[list[int]] = [[]]
        used = base
        for i in pool:
            if chunks[-1] and used + self.costs[i] > limit:
                chunks.append([])
                used = base
            chunks[-1].append(i)
            used += self.costs[i]
        return chunks

    def ask(self, chunk: Sequence[int]) -> dict[int, float | None]:
        answers: Answers = self.model.ask(self.state(chunk), [self.question(i) for i in chunk])
        self.record.requests += answers.requests
        self.record.input_tokens += answers.input_tokens
        self.record.output_tokens += answers.output_tokens
        if self.record.cost_usd is not None:
            self.record.cost_usd = (
                None if answers.cost_usd is None else self.record.cost_usd + answers.cost_usd
            )
        found: dict[int, float | None] = {}
        for i in chunk:
            answer = answers[f"d{i}"]
            found[i] = answer.probability if isinstance(answer, YesNoAnswer) else None
        if all(p is None for p in found.values()):
            raise _Failed(str(next(iter(answers.unanswered().values()))))
        return found

    def round(self, chunks: list[list[int]]) -> dict[int, float | None]:
        self.record.rounds += 1
        if len(chunks) == 1:
            return self.ask(chunks[0])
        workers = min(len(chunks), self.model.max_parallel_requests)
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="ranking") as pool:
            results = list(pool.map(self.ask, chunks))
        return {i: p for result in results for i, p in result.items()}


def _sorted(
    ids: Sequence[int], probs: dict[int, float | None], position: dict[int, int]
) -> list[int]:
    return sorted(ids, key=lambda i: (probs[i] is None, -(probs[i] or 0.0), position[i]))


@dataclass
class _Rounds:
    order: list[int]
    probs: dict[int, float | None] = field(default_factory=dict)
    first: dict[int, float | None] = field(default_factory=dict)
    asked: dict[int, int] = field(default_factory=dict)


def _run_rounds(ranker: _Ranker, chunks: list[list[int]], lexical: Future[list[int]]) -> _Rounds:
    """Ask round after round until one request holds the finalists.

    ``lexical`` (the fallback order, for ties) is awaited only once the first
    round is back, so computing it overlaps the first round trip.

    Raises:
        _Failed: a request gave no usable answer, or a round did not narrow the pool.
    """
    out = _Rounds(order=[])
    tail: list[int] = []
    pool = [i for c in chunks for i in c]
    position: dict[int, int] = {}
    while True:
        found = ranker.round(chunks)
        position = position or {i: p for p, i in enumerate(lexical.result())}
        out.probs.update(found)
        for i in found:
            out.asked[i] = out.asked.get(i, 0) + 1
        out.first = out.first or dict(found)
        if len(chunks) == 1:
            out.order = _sorted(pool, found, position) + tail
            return out
        finalists = [
            i
            for c in chunks
            for i in _sorted(c, found, position)[: ranker.top_per_chunk]
            if found[i] is not None
        ]
        if len(finalists) >= len(pool):
            raise _Failed("a round did not narrow the candidates")
        chosen = set(finalists)
        tail = _sorted([i for i in pool if i not in chosen], found, position) + tail
        ranker.record.finalists = len(finalists)
        pool = sorted(finalists)
        chunks = ranker.chunks(pool)


def _why_not_ask(ranker: _Ranker, chunks: list[list[int]], max_requests: int) -> str | None:
    model, n = ranker.model, len(ranker.data_sets)
    several = len(chunks) > 1
    needed = len(chunks) + several
    if not model.batches_questions:
        needed = n + (ranker.top_per_chunk * len(chunks) if several else 0)
    if model.backend is Backend.NONE:
        return "no decision model is configured"
    if needed > max_requests:
        return f"ranking would take about {needed} requests (limit {max_requests})"
    if several and max(len(c) for c in chunks) <= ranker.top_per_chunk:
        return "the input budget holds too few data sets per request to rank"
    return None


def rank_data_sets(
    data_sets: Sequence[DataSet],
    *,
    goal: str,
    query: str | None,
    model: DecisionModel,
    cap: int,
    fallback: LexicalOrder,
    top_per_chunk: int = 10,
    max_requests: int = 64,
) -> DataSetRanking:
    """Rank every data set by P(the agent needs it for this goal); see the module docstring.

    Never raises for the backend's failures: they mean the fallback order.

    Args:
        data_sets: the source's catalog (names unique).
        goal: the automation's goal.
        query: what the agent asked ``list_data_sets`` for, or None.
        model: the decision model; ``NoDecisionModel`` means the fallback order.
        cap: data sets ``list_data_sets`` shows; at most this many: no ranking asked.
        fallback: the order used when the model is not asked or fails, and for ties.
        top_per_chunk: candidates of each chunk asked again in the next round.
        max_requests: most requests the ranking may make; more needed: fallback.
    """
    start = time.monotonic()
    index = {d.name: i for i, d in enumerate(data_sets)}
    record = RankingRecord(RankingMethod.ALL_SHOWN, str(model.backend), len(data_sets))
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="lexical") as background:
        lexical = background.submit(lambda: [index[d.name] for d in fallback(data_sets)])
        outcome: _Rounds | None = None
        if len(data_sets) > cap:
            record.method = RankingMethod.LEXICAL_FALLBACK
            ranker = _Ranker(data_sets, goal, query, model, top_per_chunk, record)
            chunks = ranker.chunks(range(len(data_sets)))
            record.chunks = len(chunks)
            record.fallback_reason = _why_not_ask(ranker, chunks, max_requests)
            if record.fallback_reason is None:
                try:
                    outcome = _run_rounds(ranker, chunks, lexical)
                    record.method = RankingMethod.DECISION_MODEL
                    record.unanswered = sum(p is None for p in outcome.probs.values())
                except _Failed as exc:
                    record.fallback_reason = str(exc)
        outcome = outcome or _Rounds(order=lexical.result())
    record.elapsed_ms = int((time.monotonic() - start) * 1000)
    ranked = [
        RankedDataSet(
            data_sets[i], outcome.probs.get(i), outcome.first.get(i), outcome.asked.get(i, 0)
        )
        for i in outcome.order
    ]
    return DataSetRanking(ranked, record)
