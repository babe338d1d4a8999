"""Every response of the fake LLM, read by the ``openai`` client and validated by its models."""

from __future__ import annotations

from typing import Any

import httpx
import openai
import pytest
from openai.types import Model
from openai.types.chat import ChatCompletion
from pydantic import ValidationError

from checks.fakes.llm_server import FakeLLM, Step

STEPS: dict[str, Step] = {
    "tool calls": {
        "tool_calls": [
            {"name": "execute_query", "arguments": {"sql": "SELECT 1"}},
            {"name": "describe_data_set", "arguments": {"name": "flights"}, "id": "call_x"},
        ]
    },
    "malformed arguments": {"tool_calls": [{"name": "execute_query", "arguments": "{not json"}]},
    "content": {"content": "Done."},
    "both": {"content": "Looking.", "tool_calls": [{"name": "list_data_sets", "arguments": {}}]},
    "finish_reason and a cost": {
        "content": "cut",
        "finish_reason": "length",
        "usage": {"cost": 0.1},
    },
    "scripted token counts": {
        "content": "x",
        "usage": {"prompt_tokens": 7, "completion_tokens": 2},
    },
}


@pytest.mark.parametrize("name", list(STEPS))
def test_every_step_is_an_openai_chat_completion(name: str) -> None:
    with FakeLLM([STEPS[name]], strict=False) as fake:
        client = openai.OpenAI(api_key="k", base_url=fake.base_url, max_retries=0)
        raw = client.chat.completions.with_raw_response.create(
            model="m", messages=[{"role": "user", "content": "hi"}]
        )
    completion = ChatCompletion.model_validate(raw.http_response.json())
    usage = completion.usage
    assert usage is not None
    assert usage.total_tokens == usage.prompt_tokens + usage.completion_tokens
    assert usage.prompt_tokens_details is not None
    assert usage.completion_tokens_details is not None
    assert completion.choices[0].message.refusal is None
    assert raw.headers["x-request-id"].startswith("req_")


def test_scripted_counts_keep_the_total_true() -> None:
    with FakeLLM([STEPS["scripted token counts"]], strict=False) as fake:
        data: dict[str, Any] = httpx.post(
            f"{fake.base_url}/chat/completions", json={"model": "m", "messages": []}, timeout=10
        ).json()
    assert (data["usage"]["prompt_tokens"], data["usage"]["total_tokens"]) == (7, 9)


@pytest.mark.parametrize("name", list(STEPS))
def test_every_strict_step_is_an_openai_chat_completion_in_llama_cpps_shape(name: str) -> None:
    with FakeLLM([STEPS[name]]) as fake:
        client = openai.OpenAI(api_key="k", base_url=fake.base_url, max_retries=0)
        raw = client.chat.completions.with_raw_response.create(
            model="m", messages=[{"role": "user", "content": "hi"}], max_tokens=64
        )
    data = raw.http_response.json()
    completion = ChatCompletion.model_validate(data)
    assert completion.usage is not None
    assert completion.usage.prompt_tokens_details is None  # three counts only
    assert "refusal" not in data["choices"][0]["message"]
    ids = [c.id for c in completion.choices[0].message.tool_calls or []]
    assert all(len(i) >= 60 or i == "call_x" for i in ids)  # a scripted id is kept


STRICT_REFUSALS = [
    (
        [{"role": "user", "content": "hi"}, {"role": "assistant", "content": None,
          "tool_calls": [{"id": "c1", "type": "function",
                          "function": {"name": "list_data_sets", "arguments": "{}"}}]},
         {"role": "tool", "tool_call_id": "c1", "content": "{}"}],
        {"max_tokens": 64},
        500,
    ),
    (
        [{"role": "user", "content": "hi"}, {"role": "assistant",
          "tool_calls": [{"id": "c1", "type": "function",
                          "function": {"name": "list_data_sets", "arguments": "{}"}}]},
         {"role": "tool", "tool_call_id": "c1", "content": "{}"}],
        {"max_tokens": 64},
        500,
    ),
    ([{"role": "user", "content": "x" * 40_000}], {"max_tokens": 64}, 400),
    ([{"role": "user", "content": "hi"}], {}, 400),
]  # fmt: skip


@pytest.mark.parametrize(("messages", "extra", "status"), STRICT_REFUSALS)
def test_strict_mode_refuses_what_llama_cpp_refuses_without_using_a_step(
    messages: list[dict[str, Any]], extra: dict[str, Any], status: int
) -> None:
    with FakeLLM([{"content": "kept for the next request"}]) as fake:
        refused = httpx.post(
            f"{fake.base_url}/chat/completions",
            json={"model": "m", "messages": messages, **extra},
            timeout=10,
        )
        fine = httpx.post(
            f"{fake.base_url}/chat/completions",
            json={"model": "m", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 9},
            timeout=10,
        )
    assert refused.status_code == status
    error = refused.json()["error"]
    assert set(error) == {"message", "type", "param", "code"}
    if status == 400 and extra:
        assert error["code"] == "context_length_exceeded"
    assert fine.json()["choices"][0]["message"]["content"] == "kept for the next request"
    assert len(fake.requests) == 2


def test_the_model_list_is_a_list_of_openai_models() -> None:
    with FakeLLM() as fake:
        client = openai.OpenAI(api_key="k", base_url=fake.base_url, max_retries=0)
        listed = list(client.models.list())
        raw = httpx.get(f"{fake.base_url}/models", timeout=10).json()
    assert [m.id for m in listed] == ["fake"]
    assert raw["object"] == "list"
    for item in raw["data"]:
        Model.model_validate(item)


def test_the_model_control_fails_on_the_old_shape() -> None:
    with pytest.raises(ValidationError, match="created"):
        Model.model_validate({"id": "fake", "object": "model"})
