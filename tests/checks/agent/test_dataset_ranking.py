"""Ranking data sets with a decision model, against the fake servers over real HTTP."""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import pytest

from checks.agent.dataset_ranking import (
    DataSetRanking,
    RankingMethod,
    lexical_order,
    rank_data_sets,
)
from checks.agent.lexical_ranking import relevance as lexical_relevance
from checks.fakes.decision_server import FakeDecision, Step, request_question_names, request_state
from checks.fakes.synthetic_catalog import (
    INSTRUCTION_LIKE_NAME,
    CatalogScorer,
    family,
    synthetic_catalog,
)
from checks.opinion.backends import make_decision_model
from checks.opinion.decision_model import (
    Backend,
    DecisionModel,
    NoDecisionModel,
)
from checks.opinion.decision_model import read_untrusted_state as unfence
from checks.settings.decision import DecisionSettings
from checks.sources import DataSet

GOAL = "No order has a negative amount"
CATALOGS = {n: synthetic_catalog(n) for n in (50, 500, 2000)}


def relevance(name: str) -> float:
    """The scripted truth: the source table, then its copies, then everything else."""
    if name == "orders":
        return 1.0
    copied = family(name)
    if copied == "orders":
        return 0.8 if name.startswith("orders_") else 0.7
    return 0.1 if copied else 0.02


def worst_case_shift(names: Sequence[str]) -> float:
    """The request holding the source table is calibrated 0.3 low (chunk-relative noise)."""
    return -0.3 if "orders" in names else 0.0


def scorer(backend: Backend, delay_s: float = 0.0) -> CatalogScorer:
    return CatalogScorer(backend, relevance, worst_case_shift, delay_s)


@contextmanager
def served(
    backend: Backend, default: Step, **overrides: Any
) -> Iterator[tuple[FakeDecision, DecisionModel]]:
    with FakeDecision(backend, default=default) as fake:
        values = {"backend": str(backend), "base_url": fake.base_url, "model": "m"} | overrides
        with make_decision_model(DecisionSettings.model_validate(values)) as model:
            yield fake, model


def rank(
    catalog: Sequence[DataSet], model: DecisionModel, query: str | None = None, **kw: Any
) -> DataSetRanking:
    return rank_data_sets(
        catalog,
        goal=GOAL,
        query=query,
        model=model,
        cap=5,
        fallback=lexical_order(GOAL, query),
        **kw,
    )


def one_round_order(ranking: DataSetRanking) -> list[str]:
    """The order a single round would give: every candidate by its first-round probability."""
    by_first = sorted(ranking.ranked, key=lambda r: -(r.first_round or 0.0))
    return [r.data_set.name for r in by_first]


@dataclass(frozen=True)
class Case:
    n: int
    backend: Backend
    rounds: int
    chunks: int
    finalists: int
    one_round_rank: int


CASES = [
    Case(50, Backend.SYSTEMONE, 1, 1, 0, 1),
    Case(50, Backend.OPENAI_DECISIONS, 1, 1, 0, 1),
    Case(500, Backend.SYSTEMONE, 2, 2, 20, 13),
    Case(500, Backend.OPENAI_DECISIONS, 2, 2, 20, 17),
    Case(2000, Backend.SYSTEMONE, 2, 5, 50, 265),
    Case(2000, Backend.OPENAI_DECISIONS, 2, 5, 50, 256),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c.n}-{c.backend}")
def test_two_rounds_keep_the_source_table_where_one_round_would_not(case: Case) -> None:
    catalog = CATALOGS[case.n]
    with served(case.backend, scorer(case.backend)) as (fake, model):
        ranking = rank(catalog, model)
    record = ranking.record
    assert record.method is RankingMethod.DECISION_MODEL
    assert (record.rounds, record.chunks, record.finalists) == (
        case.rounds,
        case.chunks,
        case.finalists,
    )
    assert record.requests == len(fake.bodies) == case.chunks + (case.rounds > 1)
    assert record.fallback_reason is None and record.unanswered == 0
    names = [d.name for d in ranking.order]
    assert sorted(names) == sorted(d.name for d in catalog)  # the full order, never cut
    assert names[0] == "orders"
    assert one_round_order(ranking).index("orders") + 1 == case.one_round_rank
    probabilities = [r.probability for r in ranking.ranked[: max(case.finalists, 10)]]
    assert probabilities == sorted(probabilities, reverse=True)  # type: ignore[type-var]


def test_exact_top_five_and_probabilities() -> None:
    with served(Backend.SYSTEMONE, scorer(Backend.SYSTEMONE)) as (_, model):
        ranking = rank(CATALOGS[2000], model)
    top = [(r.data_set.name, r.probability, r.first_round, r.rounds) for r in ranking.ranked[:5]]
    assert top == [
        ("orders", 0.6391, 0.6515, 2),
        ("orders_apac_p01", 0.4897, 0.4881, 2),
        ("orders_us_p01", 0.482, 0.4886, 2),
        ("orders_eu_daily", 0.4814, 0.4886, 2),
        ("orders_p02", 0.4807, 0.4876, 2),
    ]
    assert one_round_order(ranking)[:3] == [
        "int_orders_apac_v2_p01",
        "snap_orders_eu",
        "tmp_orders_v2_p02",
    ]


def test_requests_fit_the_budget_and_rounds_ask_the_right_candidates() -> None:
    catalog = CATALOGS[2000]
    with served(Backend.SYSTEMONE, scorer(Backend.SYSTEMONE)) as (fake, model):
        ranking = rank(catalog, model)
    bodies = fake.bodies
    assert all(len(json.dumps(b)) / 4 <= 32_000 for b in bodies)
    first, second = bodies[:-1], bodies[-1]
    asked = [name for b in first for name in request_question_names(Backend.SYSTEMONE, b)]
    assert sorted(asked) == sorted(f"d{i}" for i in range(2000))  # each once
    finalists = {r.data_set.name for r in ranking.ranked if r.rounds == 2}
    listed = unfence(request_state(Backend.SYSTEMONE, second))["data_sets"]
    assert {item["name"] for item in listed} == finalists and len(finalists) == 50
    for body in bodies:
        for question in body["questions"].values():
            assert question == {
                "type": "noul",
                "instructions": question["instructions"],
            }
            assert question["instructions"].startswith("Does the agent need data set d")
        state_lines = body["state"].split("\n")
        assert all(INSTRUCTION_LIKE_NAME not in line for line in state_lines[:2] + state_lines[3:])


def test_three_rounds_when_the_finalists_do_not_fit_one_request() -> None:
    with served(Backend.SYSTEMONE, scorer(Backend.SYSTEMONE), input_budget_tokens=8_000) as (
        fake,
        model,
    ):
        ranking = rank(CATALOGS[2000], model)
    record = ranking.record
    assert (record.rounds, record.chunks, record.finalists, record.requests) == (3, 20, 20, 23)
    assert len(fake.bodies) == 23
    assert ranking.order[0].name == "orders"


def test_chunks_are_asked_in_parallel() -> None:
    # Count requests in flight at once instead of timing the run: wall time is at the
    # mercy of a loaded machine, the overlap is not. Each first-round request is held
    # until all five have arrived, or for 4 s (under the client's 5 s timeout): asked
    # one after another, the first is let go at 4 s and the rest find the barrier
    # broken, so no two are ever in flight together and the test fails.
    inner = scorer(Backend.SYSTEMONE)
    lock = threading.Lock()
    in_flight, most, seen = 0, 0, 0
    first_round = threading.Barrier(5)

    def held(body: dict[str, Any]) -> Any:
        nonlocal in_flight, most, seen
        with lock:
            seen += 1
            waits = seen <= 5
            in_flight += 1
            most = max(most, in_flight)
        if waits:
            with contextlib.suppress(threading.BrokenBarrierError):
                first_round.wait(timeout=4)
        with lock:
            in_flight -= 1
        return inner(body)

    with served(Backend.SYSTEMONE, held) as (_, model):
        ranking = rank(CATALOGS[2000], model)
    assert ranking.record.requests == 6
    assert ranking.record.chunks == 5
    assert most == 5  # the five first-round chunks were all in flight together


def test_the_agents_query_goes_in_the_state() -> None:
    with served(Backend.SYSTEMONE, scorer(Backend.SYSTEMONE)) as (fake, model):
        rank(CATALOGS[50], model, query="order amounts")
    (body,) = fake.bodies
    assert unfence(body["state"])["agent_asked_for"] == "order amounts"
    assert body["questions"]["d0"]["instructions"] == (
        "Does the agent need data set d0 to check the goal and what the agent asked for?"
    )


@dataclass(frozen=True)
class Fallback:
    name: str
    backend: Backend
    step: Step
    overrides: dict[str, Any]
    reason: str
    requests: int
    top_per_chunk: int = 10


def _refuse_all(body: dict[str, Any]) -> dict[str, Any]:
    return {"answers": dict.fromkeys(request_question_names(Backend.SYSTEMONE, body), "refuse")}


FALLBACKS = [
    Fallback(
        "timeout",
        Backend.SYSTEMONE,
        {"delay_s": 1.0},
        {"timeout_s": 0.3},
        "timeout: timed out after 0.3 s",
        2,
    ),
    Fallback(
        "http_error",
        Backend.OPENAI_DECISIONS,
        {"status": 500, "body": {}},
        {},
        "http_error: HTTP 500: {}",
        2,
    ),
    Fallback(
        "all_refused",  # System One refuses a request whose every question it declines
        Backend.SYSTEMONE,
        _refuse_all,
        {},
        'http_error: HTTP 400: {"error": {"code": 400, "message": "the model declined to '
        'answer any question of this request"}}',
        2,
    ),
    Fallback(
        "chat_one_request_per_question",
        Backend.CHAT_LOGPROBS,
        {"p": 0.5},
        {},
        "ranking would take about 520 requests (limit 64)",
        0,
    ),
    Fallback(
        "budget_too_small",
        Backend.SYSTEMONE,
        {},
        {"input_budget_tokens": 1_000},
        "the input budget holds too few data sets per request to rank",
        0,
        top_per_chunk=20,
    ),
]


@pytest.mark.parametrize("case", FALLBACKS, ids=lambda c: c.name)
def test_falls_back_to_the_lexical_order_and_says_why(case: Fallback) -> None:
    catalog = CATALOGS[500]
    with served(case.backend, case.step, **case.overrides) as (fake, model):
        ranking = rank(catalog, model, top_per_chunk=case.top_per_chunk)
    assert ranking.record.method is RankingMethod.LEXICAL_FALLBACK
    assert ranking.record.fallback_reason == case.reason
    assert ranking.order == lexical_order(GOAL, None)(catalog)
    assert all(r.probability is None for r in ranking.ranked)
    assert len(fake.bodies) == case.requests


def test_backend_none_and_small_catalogs_ask_nothing() -> None:
    ranking = rank(CATALOGS[50], NoDecisionModel())
    assert ranking.record.to_dict() | {"elapsed_ms": 0} == {
        "method": "lexical_fallback",
        "backend": "none",
        "candidates": 50,
        "rounds": 0,
        "chunks": 1,
        "requests": 0,
        "finalists": 0,
        "unanswered": 0,
        "fallback_reason": "no decision model is configured",
        "input_tokens": 0,
        "output_tokens": 0,
        "cost_usd": 0.0,
        "elapsed_ms": 0,
    }
    with served(Backend.SYSTEMONE, scorer(Backend.SYSTEMONE)) as (fake, model):
        few = rank(CATALOGS[50][:5], model)
    assert few.record.method is RankingMethod.ALL_SHOWN
    assert fake.bodies == []


def test_unanswered_candidates_go_last_in_lexical_order() -> None:
    catalog = CATALOGS[50]
    inner = scorer(Backend.SYSTEMONE)
    names = [d.name for d in catalog]
    dropped = {f"d{names.index('orders')}", f"d{names.index('customers')}"}

    def partial(body: dict[str, Any]) -> dict[str, Any]:
        step = inner(body)
        answers = {k: v for k, v in step["answers"].items() if k not in dropped}
        return {"answers": answers | {f"d{names.index('customers')}": "refuse"}}

    with served(Backend.SYSTEMONE, partial) as (_, model):
        ranking = rank(catalog, model)
    assert ranking.record.method is RankingMethod.DECISION_MODEL
    assert ranking.record.unanswered == 2
    assert [r.data_set.name for r in ranking.ranked[-2:]] == ["orders", "customers"]
    assert ranking.ranked[-1].probability is None


@pytest.mark.parametrize(("n", "position"), [(50, 50), (500, 468), (2000, 1904)])
def test_an_instruction_like_name_never_rises_in_the_lexical_fallback(
    n: int, position: int
) -> None:
    catalog = CATALOGS[n]
    order = lexical_order(GOAL, None)(catalog)
    names = [d.name for d in order]
    assert names.index(INSTRUCTION_LIKE_NAME) + 1 == position
    scores = [lexical_relevance(d.name, [c.name for c in d.columns], GOAL, None) for d in order]
    assert scores[position - 1] == 0.0
    assert all(s > 0 for s in scores[: scores.index(0.0)])  # every relevant one comes first
    unrelated = [d.name for d, s in zip(order, scores, strict=True) if s == 0.0]
    assert unrelated == sorted(unrelated, key=str.lower)  # and it is not lifted by its capitals
    assert unrelated[0] != INSTRUCTION_LIKE_NAME
