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
    with FakeLLM([STEPS[name]]) as fake:
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
    with FakeLLM([STEPS["scripted token counts"]]) as fake:
        data: dict[str, Any] = httpx.post(
            f"{fake.base_url}/chat/completions", json={"model": "m", "messages": []}, timeout=10
        ).json()
    assert (data["usage"]["prompt_tokens"], data["usage"]["total_tokens"]) == (7, 9)


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
