"""Every response of the fake decision servers, read by the real clients and their own models.

The fakes stand in for services no machine here reaches, so a fake looser than
the service proves a looser contract. Each response is validated twice: by the
real client talking to the fake over HTTP (``typesafe-sdk``, ``openrouter``,
``openai``), and by the client's pydantic model applied to the raw JSON (the
generated wire models are stricter than some SDK wrappers: ``answers`` non-empty).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import openai
import pytest
from openai.types import Decision, Model
from openai.types.chat import ChatCompletion
from openrouter import OpenRouter
from openrouter import errors as openrouter_errors
from openrouter.components import BadRequestResponseErrorData, DecisionsResponse
from pydantic import ValidationError
from typesafe_sdk import (
    Choice,
    Noul,
    RetryPolicy,
    Score,
    TypeSafeBadRequestError,
    TypeSafeClient,
)
from typesafe_sdk._schemas import models as typesafe_wire  # the OpenAPI-generated models

from checks.fakes.decision_server import FakeDecision, Step
from checks.opinion.backends.systemone import SystemOneModel
from checks.opinion.decision_model import Backend, ScoreAnswer
from checks.opinion.decision_model import Score as LookoutScore

URGENT = {"nothing_to_do": 0.1, "worth_a_look": 0.2, "act_soon": 0.6, "act_now": 0.1}
ANSWERS: dict[str, Any] = {
    "goal_met": 0.92,
    "urgency": {"probabilities": URGENT},
    "severity": {"distribution": [0.2, 0.5, 0.3]},
}
SYSTEMONE_QUESTIONS: dict[str, Any] = {
    "goal_met": {"type": "noul", "instructions": "Is the goal met?"},
    "urgency": {
        "type": "choice",
        "instructions": "How urgent?",
        "criteria": dict.fromkeys(URGENT, None),
    },
    "severity": {
        "type": "score",
        "instructions": "How severe?",
        "criteria": ["none", "some", "much"],
    },
}
DECISIONS_QUESTIONS: list[dict[str, Any]] = [
    {"type": "predicate", "name": "goal_met", "instructions": "Is the goal met?"},
    {
        "type": "choice",
        "name": "urgency",
        "instructions": "How urgent?",
        "choices": [{"value": v} for v in URGENT],
    },
    {
        "type": "score",
        "name": "severity",
        "instructions": "How severe?",
        "levels": [{"label": "none"}, {"label": "some"}, {"label": "much"}],
    },
]
STEPS: dict[str, Step] = {
    "every kind": {"answers": ANSWERS},
    "one question left out": {"answers": {"goal_met": 0.3, "urgency": {"probabilities": URGENT}}},
    "one refused": {"answers": {**ANSWERS, "urgency": "refuse"}},
    "a choice with its own confidence": {
        "answers": {"urgency": {"probabilities": URGENT, "confidence": 0.7}}
    },
    "a score stated": {"answers": {"severity": {"distribution": [0, 0, 1], "score": 2}}},
}


@pytest.fixture
def systemone() -> Iterator[FakeDecision]:
    with FakeDecision(Backend.SYSTEMONE, default=lambda body: STEPS["every kind"]) as fake:
        yield fake


def post(url: str, body: dict[str, Any], **headers: str) -> httpx.Response:
    return httpx.post(url, json=body, headers=headers, timeout=10)


# -- systemone: typesafe-sdk and openrouter ------------------------------------------


@pytest.mark.parametrize("name", list(STEPS))
def test_every_systemone_answer_is_a_typesafe_and_openrouter_response(name: str) -> None:
    with FakeDecision(Backend.SYSTEMONE, [STEPS[name]]) as fake:
        body = {"model": "jev-latest", "state": "s", "questions": SYSTEMONE_QUESTIONS}
        response = post(f"{fake.base_url}/v1/systemone", body)
    assert response.status_code == 200
    data = response.json()
    typesafe_wire.SystemOneResponse.model_validate(data)
    DecisionsResponse.model_validate(data)
    assert "cost" not in data["usage"]  # TypeSafe reports tokens, never a cost
    assert response.headers["x-typesafe-request-id"].startswith("req_")
    if "severity" in data["answers"]:
        assert data["answers"]["severity"]["legend"] == {"0": "none", "1": "some", "2": "much"}


def test_the_wire_model_catches_what_the_fake_used_to_send() -> None:
    # the control: the models are strict enough to fail the old, looser shapes
    old_score = {"type": "score", "score": 1.0, "probabilities": {"0": 0.5, "1": 0.5}}
    with pytest.raises(ValidationError, match="legend"):
        typesafe_wire.ScoreAnswer.model_validate({**old_score, "confidence": 0.0})
    with pytest.raises(ValidationError, match="answers"):
        typesafe_wire.SystemOneResponse.model_validate(
            {"model": "m", "answers": {}, "usage": {"input_tokens": 1, "output_tokens": 0}}
        )


def test_the_typesafe_client_reads_the_fake_and_its_zstd_body_is_decoded(
    systemone: FakeDecision,
) -> None:
    state = "a report long enough to be compressed. " * 60  # over 1 KiB: the SDK sends zstd
    with TypeSafeClient(
        api_key="ts-key", base_url=systemone.base_url, model="jev-latest"
    ) as client:
        result = client.system_one(
            state=state,
            questions={
                "goal_met": Noul(instructions="Is the goal met?"),
                "urgency": Choice(instructions="How urgent?", criteria=dict.fromkeys(URGENT)),
                "severity": Score(instructions="How severe?", criteria=["none", "some", "much"]),
            },
        )
        models = client.models.list()
    assert result.nouls["goal_met"].noul == 0.92
    assert result.choices["urgency"].choice == "act_soon"
    assert result.scores["severity"].legend == {0: "none", 1: "some", 2: "much"}
    assert result.request_id.startswith("req_")
    assert [m.name for m in models.models] == ["jev-latest"]
    received = systemone.requests[0]
    assert received.headers["content-encoding"] == "zstd"
    assert received.body["state"] == state and received.body["model"] == "jev-latest"


def test_lookout_reads_the_answer_the_typesafe_client_accepts(systemone: FakeDecision) -> None:
    levels = LookoutScore("severity", "How severe?", ["none", "some", "much"])
    with SystemOneModel(systemone.base_url, model="jev-latest") as model:
        answers = model.ask("s", [levels])
    assert answers["severity"] == ScoreAnswer(1.1, (0.2, 0.5, 0.3), (3 * 0.5 - 1) / 2)
    data = post(f"{systemone.base_url}/v1/systemone", systemone.bodies[0]).json()
    assert data["answers"]["severity"]["legend"] == {"0": "none", "1": "some", "2": "much"}


def test_openrouter_reads_the_fake_and_its_cost() -> None:
    step = {"answers": ANSWERS, "usage": {"cost": 0.0004}}  # OpenRouter adds a cost
    with (
        FakeDecision(Backend.SYSTEMONE, [step]) as fake,
        OpenRouter(api_key="or-key", server_url=f"{fake.base_url}/v1") as client,
    ):
        result = client.system_one.create(
            model="typesafe/jev", questions=SYSTEMONE_QUESTIONS, state="s"
        )
    assert result.usage.cost == 0.0004
    assert result.answers["severity"].legend == {"0": "none", "1": "some", "2": "much"}


def test_declining_every_question_is_refused_in_the_clients_error_shape() -> None:
    refuse_all = {"answers": dict.fromkeys(SYSTEMONE_QUESTIONS, "refuse")}
    with FakeDecision(Backend.SYSTEMONE, [refuse_all, refuse_all]) as fake:
        with (
            TypeSafeClient(
                api_key="k", base_url=fake.base_url, retry=RetryPolicy(max_retries=0)
            ) as client,
            pytest.raises(TypeSafeBadRequestError, match="declined to answer any question"),
        ):
            client.system_one(state="s", questions={"goal_met": Noul(instructions="Met?")})
        body = {"model": "m", "state": "s", "questions": SYSTEMONE_QUESTIONS}
        response = post(f"{fake.base_url}/v1/systemone", body)
    assert response.status_code == 400
    BadRequestResponseErrorData.model_validate(response.json()["error"])


@pytest.mark.parametrize(
    ("body", "missing"),
    [
        ({"state": "s", "questions": SYSTEMONE_QUESTIONS}, ["model"]),
        ({"model": "m", "questions": SYSTEMONE_QUESTIONS}, ["state"]),
        ({"model": "m", "state": "s", "questions": {}}, ["questions"]),
    ],
)
def test_a_request_the_api_refuses_is_a_422_validation_error(
    systemone: FakeDecision, body: dict[str, Any], missing: list[str]
) -> None:
    response = post(f"{systemone.base_url}/v1/systemone", body)
    assert response.status_code == 422
    error = typesafe_wire.HTTPValidationError.model_validate(response.json())
    assert [d.loc[1] for d in error.detail or []] == missing


def test_openrouter_raises_its_own_error_for_the_refusal() -> None:
    refuse_all = {"answers": {"goal_met": "refuse"}}
    with (
        FakeDecision(Backend.SYSTEMONE, [refuse_all]) as fake,
        OpenRouter(api_key="k", server_url=f"{fake.base_url}/v1") as client,
        pytest.raises(openrouter_errors.BadRequestResponseError),
    ):
        client.system_one.create(model="m", questions=SYSTEMONE_QUESTIONS, state="s")


# -- openai-decisions and chat-logprobs: the openai package --------------------------


@pytest.mark.parametrize("name", list(STEPS))
def test_every_decisions_answer_is_an_openai_decision(name: str) -> None:
    with FakeDecision(Backend.OPENAI_DECISIONS, [STEPS[name]]) as fake:
        client = openai.OpenAI(api_key="k", base_url=f"{fake.base_url}/v1", max_retries=0)
        raw = client.decisions.with_raw_response.create(
            model="m", input="the state", questions=DECISIONS_QUESTIONS
        )
    decision = Decision.model_validate(raw.http_response.json())
    assert raw.headers["x-request-id"].startswith("req_")
    usage = decision.usage
    assert usage.total_tokens == usage.input_tokens + usage.output_tokens
    assert usage.input_tokens_details.cached_tokens == 0
    assert usage.output_tokens_details.reasoning_tokens == 0


def test_a_decision_refusal_and_score_labels() -> None:
    with FakeDecision(Backend.OPENAI_DECISIONS, [STEPS["one refused"]]) as fake:
        client = openai.OpenAI(api_key="k", base_url=f"{fake.base_url}/v1", max_retries=0)
        decision = client.decisions.create(model="m", input="s", questions=DECISIONS_QUESTIONS)
    by_name = {a.name: a for a in decision.answers}
    assert by_name["urgency"].type == "refusal"
    severity = by_name["severity"]
    assert severity.type == "score"
    assert [p.label for p in severity.probabilities] == ["none", "some", "much"]


def test_the_decisions_control_fails_without_total_tokens() -> None:
    usage = {"input_tokens": 1, "output_tokens": 0}
    with pytest.raises(ValidationError, match="total_tokens"):
        Decision.model_validate({"answers": [], "model": "m", "usage": usage})


def test_a_decisions_request_without_a_model_is_openais_400() -> None:
    with FakeDecision(Backend.OPENAI_DECISIONS, default={"answers": ANSWERS}) as fake:
        response = post(f"{fake.base_url}/v1/decisions", {"input": "s", "questions": []})
    assert response.status_code == 400
    assert response.json()["error"]["param"] == "model"


CHAT_STEPS: dict[str, Step] = {
    "p": {"p": 0.8},
    "top_logprobs": {"top_logprobs": [["Yes", -0.2], [" no", -1.9], ["maybe", -4.0]]},
    "no logprobs": {"no_logprobs": True},
    "refusal": {"refusal": "I cannot judge this."},
    "usage with a cost": {"p": 0.5, "usage": {"cost": 0.00002}},
}


@pytest.mark.parametrize("name", list(CHAT_STEPS))
def test_every_chat_logprobs_answer_is_an_openai_chat_completion(name: str) -> None:
    with FakeDecision(Backend.CHAT_LOGPROBS, [CHAT_STEPS[name]]) as fake:
        client = openai.OpenAI(api_key="k", base_url=fake.base_url, max_retries=0)
        raw = client.chat.completions.with_raw_response.create(
            model="m",
            messages=[{"role": "user", "content": "Is it met? yes or no"}],
            max_tokens=1,
            logprobs=True,
            top_logprobs=5,
        )
    completion = ChatCompletion.model_validate(raw.http_response.json())
    usage = completion.usage
    assert usage is not None
    assert usage.total_tokens == usage.prompt_tokens + usage.completion_tokens
    assert usage.prompt_tokens_details is not None and usage.completion_tokens_details is not None
    assert raw.headers["x-request-id"].startswith("req_")


@pytest.mark.parametrize("backend", [Backend.OPENAI_DECISIONS, Backend.CHAT_LOGPROBS])
def test_the_openai_fakes_list_their_models(backend: Backend) -> None:
    with FakeDecision(backend) as fake:
        root = fake.base_url.removesuffix("/v1")
        client = openai.OpenAI(api_key="k", base_url=f"{root}/v1", max_retries=0)
        listed = list(client.models.list())
        raw = httpx.get(f"{root}/v1/models").json()
    assert [m.id for m in listed] == ["jev-latest"]
    for item in raw["data"]:
        Model.model_validate(item)
