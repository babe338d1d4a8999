"""The chat client against the fake OpenAI-compatible server, over real HTTP."""

from __future__ import annotations

import json
import multiprocessing
import socket
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest

from checks.agent import openai_clients
from checks.agent.chat_client import ChatClient, RetryNote
from checks.agent.inline_calls import tool_calls_in_content
from checks.agent.retry_rules import context_overflow, retry_after_s
from checks.agent.toolspec import TOOL_NAMES, TOOL_SCHEMAS
from checks.errors import ContextOverflowError, LLMError
from checks.fakes.llm_server import FakeLLM, Step
from checks.settings.llm import LLMSettings

KEY = "sk-test-very-secret-key-123"
MESSAGES = [{"role": "user", "content": "hello"}]


def settings(base_url: str, **overrides: object) -> LLMSettings:
    values: dict[str, object] = {
        "base_url": base_url,
        "api_key": KEY,
        "model": "fake-model",
        "timeout_s": 5.0,
        "max_retries": 2,
        "backoff_base_s": 0.01,
        "backoff_max_s": 0.05,
        "retry_after_cap_s": 5.0,
    }
    values.update(overrides)
    return LLMSettings.model_validate(values)


def test_tool_call_tokens_and_cost_from_usage() -> None:
    step = {
        "tool_calls": [{"name": "execute_query", "arguments": {"sql": "SELECT 1"}}],
        "usage": {"prompt_tokens": 120, "completion_tokens": 30, "cost": 0.00042},
    }
    with FakeLLM([step]) as fake, ChatClient(settings(fake.base_url)) as client:
        reply = client.complete(MESSAGES, TOOL_SCHEMAS)
    assert [(c.name, json.loads(c.arguments)) for c in reply.tool_calls] == [
        ("execute_query", {"sql": "SELECT 1"})
    ]
    assert reply.finish_reason == "tool_calls"
    assert (reply.input_tokens, reply.output_tokens, reply.cost_usd) == (120, 30, 0.00042)
    sent = fake.requests[0]
    assert sent.headers["authorization"] == f"Bearer {KEY}"
    assert sent.body["model"] == "fake-model"
    assert sent.body["tool_choice"] == "auto"
    assert [t["function"]["name"] for t in sent.body["tools"]] == list(TOOL_NAMES)
    assert all(t["function"]["strict"] is True for t in sent.body["tools"])
    assert "provider" not in sent.body  # not OpenRouter


def test_cost_from_price_table_then_unknown() -> None:
    step = {"content": "hi", "usage": {"prompt_tokens": 1_000_000, "completion_tokens": 500_000}}
    with FakeLLM([step, step]) as fake:
        priced = settings(fake.base_url, prices_usd_per_mtok={"fake-model": (0.5, 2.0)})
        with ChatClient(priced) as client:
            assert client.complete(MESSAGES, []).cost_usd == pytest.approx(1.5)
        with ChatClient(settings(fake.base_url)) as client:
            assert client.complete(MESSAGES, []).cost_usd is None


def test_model_override_is_sent() -> None:
    with (
        FakeLLM([{"content": "ok"}]) as fake,
        ChatClient(settings(fake.base_url), model="other/model") as client,
    ):
        client.complete(MESSAGES, [])
    assert fake.chat_requests[0]["model"] == "other/model"


@pytest.mark.slow
def test_429_retry_after_is_honoured() -> None:
    notes: list[RetryNote] = []
    script: list[Step] = [
        {"error": {"status": 429, "headers": {"Retry-After": "1"}, "body": {"error": "slow down"}}},
        {"content": "done"},
    ]
    with (
        FakeLLM(script) as fake,
        ChatClient(settings(fake.base_url), on_retry=notes.append) as client,
    ):
        started = time.monotonic()
        reply = client.complete(MESSAGES, [])
        waited = time.monotonic() - started
    assert reply.content == "done"
    assert len(fake.requests) == 2
    assert waited >= 1.0
    assert [(n.attempt, n.status, n.wait_s) for n in notes] == [(1, 429, 1.0)]


def test_retry_after_is_capped() -> None:
    notes: list[RetryNote] = []
    script: list[Step] = [
        {"error": {"status": 503, "headers": {"Retry-After": "3600"}}},
        {"content": "ok"},
    ]
    with FakeLLM(script) as fake:
        capped = settings(fake.base_url, retry_after_cap_s=0.1)
        with ChatClient(capped, on_retry=notes.append) as client:
            client.complete(MESSAGES, [])
    assert [n.wait_s for n in notes] == [0.1]


def test_5xx_after_retries_raises_with_status_and_redacted_body() -> None:
    error = {"error": {"status": 500, "body": {"error": f"upstream rejected key {KEY}"}}}
    slept: list[float] = []
    with (
        FakeLLM([error, error, error]) as fake,
        ChatClient(settings(fake.base_url), sleep=slept.append) as client,
        pytest.raises(LLMError) as caught,
    ):
        client.complete(MESSAGES, [])
    assert len(fake.requests) == 3  # first try + max_retries
    assert slept == [0.01, 0.02]  # exponential backoff without Retry-After
    assert caught.value.status == 500
    assert caught.value.body is not None and KEY not in caught.value.body
    assert "***" in caught.value.body


def test_4xx_is_not_retried() -> None:
    with (
        FakeLLM([{"error": {"status": 400, "body": {"error": "bad tools"}}}]) as fake,
        ChatClient(settings(fake.base_url)) as client,
        pytest.raises(LLMError) as caught,
    ):
        client.complete(MESSAGES, [])
    assert caught.value.status == 400
    assert len(fake.requests) == 1


def test_connection_refused_is_retried_then_raises() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    slept: list[float] = []
    client = ChatClient(settings(f"http://127.0.0.1:{port}/v1"), sleep=slept.append)
    with client, pytest.raises(LLMError, match="cannot reach the LLM endpoint") as caught:
        client.complete(MESSAGES, [])
    assert caught.value.status is None
    assert len(slept) == 2


def test_request_timeout() -> None:
    with FakeLLM([{"content": "late", "delay_s": 1.0}] * 2) as fake:
        client = ChatClient(settings(fake.base_url, timeout_s=0.2, max_retries=1))
        with client, pytest.raises(LLMError, match="cannot reach"):
            client.complete(MESSAGES, [])


def test_openrouter_asks_for_required_parameters() -> None:
    with ChatClient(settings("https://openrouter.ai/api/v1")) as client:
        assert client.is_openrouter
        body = client.request_body(MESSAGES, [], "auto")
    assert body["provider"] == {"require_parameters": True}
    with ChatClient(settings("https://notopenrouter.ai/v1")) as other:
        assert not other.is_openrouter


def test_no_llm_configured() -> None:
    with pytest.raises(LLMError, match="no LLM configured"):
        ChatClient(LLMSettings())


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({"retry-after-ms": "250", "retry-after": "9"}, 0.25),  # OpenAI's milliseconds win
        ({"retry-after-ms": "1.5"}, 0.0015),
        ({"retry-after-ms": "0"}, 0.0),
        ({"retry-after-ms": "soon", "retry-after": "9"}, 9.0),  # not a number: Retry-After
        ({"retry-after-ms": "-5", "retry-after": "9"}, 9.0),
        ({"retry-after-ms": "nan", "retry-after": "9"}, 9.0),
        ({"retry-after-ms": "-5"}, None),
        ({"retry-after": "9"}, 9.0),  # Retry-After itself: checks.http.retry_after
        ({"retry-after": "0.5"}, None),
        ({"retry-after": "-3"}, None),
        ({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}, 0.0),
        ({}, None),
    ],
)
def test_retry_after_ms_then_retry_after(headers: dict[str, str], expected: float | None) -> None:
    assert retry_after_s(headers) == expected


def test_retry_after_header_names_are_case_insensitive() -> None:
    headers = httpx.Headers({"Retry-After-Ms": "250", "Retry-After": "9"})
    assert retry_after_s(headers) == 0.25
    assert retry_after_s(httpx.Headers({"RETRY-AFTER": "9"})) == 9.0


@dataclass(frozen=True)
class ContentCase:
    content: str
    calls: list[tuple[str, dict[str, object]]]


OFFERED = set(TOOL_NAMES)
CONTENT_CASES = [
    ContentCase(
        '<tool_call>{"name": "execute_query", "arguments": {"sql": "SELECT 1"}}</tool_call>',
        [("execute_query", {"sql": "SELECT 1"})],
    ),
    ContentCase(
        'Let me look.\n<tool_call>\n{"name": "list_data_sets", "arguments": {"query": null}}\n'
        "</tool_call>\n<tool_call>"
        '{"name": "describe_data_set", "arguments": "{\\"name\\": \\"x\\"}"}'
        "</tool_call>",
        [("list_data_sets", {"query": None}), ("describe_data_set", {"name": "x"})],
    ),
    ContentCase(
        '{"name": "execute_query", "parameters": {"sql": "SELECT 2"}}',
        [("execute_query", {"sql": "SELECT 2"})],
    ),
    ContentCase(
        '```json\n[{"name": "describe_data_set", "arguments": {"name": "flights"}}]\n```',
        [("describe_data_set", {"name": "flights"})],
    ),
    # Not recognised: prose around bare JSON, a tool that was not offered, extra keys,
    # arguments that are not an object.
    ContentCase('I will call {"name": "execute_query", "arguments": {"sql": "SELECT 1"}}', []),
    ContentCase('{"name": "drop_table", "arguments": {}}', []),
    ContentCase('{"name": "execute_query", "arguments": {}, "why": "x"}', []),
    ContentCase('{"name": "execute_query", "arguments": [1]}', []),
    ContentCase("<tool_call>not json</tool_call>", []),
    ContentCase("The answer is 42.", []),
]


@pytest.mark.parametrize("case", CONTENT_CASES, ids=lambda c: c.content[:30])
def test_tool_calls_in_content(case: ContentCase) -> None:
    found = tool_calls_in_content(case.content, OFFERED)
    assert [(name, json.loads(args)) for name, args in found] == case.calls


def test_tool_call_in_content_over_the_wire() -> None:
    text = '<tool_call>{"name": "execute_query", "arguments": {"sql": "SELECT 1"}}</tool_call>'
    with FakeLLM([{"content": text}]) as fake, ChatClient(settings(fake.base_url)) as client:
        reply = client.complete(MESSAGES, TOOL_SCHEMAS)
    assert reply.calls_from_content
    assert reply.content is None
    assert [c.name for c in reply.tool_calls] == ["execute_query"]
    message = reply.assistant_message()
    assert message["tool_calls"][0]["id"] == "content_call_1"


def test_arguments_sent_as_a_json_object_are_read_and_sent_back_as_json() -> None:
    # Ollama's OpenAI-compatible endpoint sends function.arguments as an object.
    step = {
        "tool_calls": [
            {"name": "execute_query", "arguments": {"sql": "SELECT 'é' AS x"}, "as_object": True}
        ]
    }
    with FakeLLM([step, {"content": "done"}]) as fake, ChatClient(settings(fake.base_url)) as c:
        reply = c.complete(MESSAGES, TOOL_SCHEMAS)
        [call] = reply.tool_calls
        assert json.loads(call.arguments) == {"sql": "SELECT 'é' AS x"}  # before: a Python repr
        echoed = [*MESSAGES, reply.assistant_message(), {"role": "tool", "tool_call_id": call.id,
                                               "content": "{}"}]  # fmt: skip
        c.complete(echoed, TOOL_SCHEMAS)
    sent = fake.requests[1].body["messages"][1]["tool_calls"][0]["function"]["arguments"]
    assert isinstance(sent, str) and json.loads(sent) == {"sql": "SELECT 'é' AS x"}


class _NotJSON(BaseHTTPRequestHandler):
    """A proxy's error page sent with 200, as a misconfigured gateway does."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["content-length"]))
        page = PAGES[self.path.split("/")[1]]
        self.send_response(200)
        self.send_header("content-type", page[1])
        self.send_header("content-length", str(len(page[0])))
        self.end_headers()
        self.wfile.write(page[0])

    def log_message(self, *_: object) -> None:
        pass


PAGES = {
    "html": (f"<html>bad gateway {KEY}</html>".encode(), "text/html"),
    "list": (b"[1, 2]", "application/json"),
}


@pytest.mark.parametrize("page", sorted(PAGES))
def test_a_reply_that_is_not_a_json_object_is_an_llm_error(page: str) -> None:
    # before: AttributeError ('str' object has no attribute 'model_dump'), an internal error
    server = ThreadingHTTPServer(("127.0.0.1", 0), _NotJSON)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        base_url = f"http://127.0.0.1:{server.server_port}/{page}/v1"
        with ChatClient(settings(base_url)) as client, pytest.raises(LLMError) as caught:
            client.complete(MESSAGES, [])
    finally:
        server.shutdown()
        server.server_close()
    assert str(caught.value).startswith("the LLM response was not a JSON object")
    assert caught.value.status == 200
    assert caught.value.body is not None and KEY not in caught.value.body


def test_the_http_client_is_the_processs_one_per_endpoint() -> None:
    with FakeLLM([{"content": "a"}, {"content": "b"}]) as fake:
        first, second = ChatClient(settings(fake.base_url)), ChatClient(settings(fake.base_url))
        other_key = ChatClient(settings(fake.base_url, api_key="sk-other"))
        assert first._client is second._client
        assert other_key._client is not first._client
        with first:
            first.complete(MESSAGES, [])
        with second:  # the first one's close left the shared client usable
            assert second.complete(MESSAGES, []).content == "b"


def test_a_forked_child_builds_its_own_http_client() -> None:
    ChatClient(settings("http://127.0.0.1:9/v1"))
    assert len(openai_clients.CLIENTS)
    context = multiprocessing.get_context("fork")
    reader, writer = context.Pipe(duplex=False)
    child = context.Process(target=lambda: writer.send(len(openai_clients.CLIENTS)))
    child.start()
    child.join(timeout=30)
    assert reader.recv() == 0


def test_every_request_caps_the_turns_output_tokens() -> None:
    with (
        FakeLLM([{"content": "ok"}]) as fake,
        ChatClient(settings(fake.base_url, max_output_tokens=300)) as client,
    ):
        client.complete(MESSAGES, [])
    assert fake.chat_requests[0]["max_tokens"] == 300
    assert "max_completion_tokens" not in fake.chat_requests[0]
    with ChatClient(settings("https://api.openai.com/v1")) as openai_client:
        body = openai_client.request_body(MESSAGES, [], "auto")
    assert body["max_completion_tokens"] == 1024  # the default; OpenAI deprecated max_tokens
    assert "max_tokens" not in body


def test_a_tool_only_turn_goes_back_with_empty_content_never_null() -> None:
    step = {"tool_calls": [{"name": "execute_query", "arguments": {"sql": "SELECT 1"}}]}
    with FakeLLM([step]) as fake, ChatClient(settings(fake.base_url)) as client:
        reply = client.complete(MESSAGES, TOOL_SCHEMAS)
    assert reply.content is None
    assert reply.assistant_message()["content"] == ""


@pytest.mark.slow
def test_retries_never_outlast_the_runs_deadline() -> None:
    error: Step = {"error": {"status": 503, "body": {"error": "busy"}}, "delay_s": 0.3}
    notes: list[RetryNote] = []
    with FakeLLM([error] * 11) as fake:
        patient = settings(fake.base_url, max_retries=10, backoff_base_s=0.5, backoff_max_s=0.5)
        with ChatClient(patient, on_retry=notes.append) as client:
            started = time.monotonic()
            with pytest.raises(LLMError) as caught:
                client.complete(MESSAGES, [], deadline=started + 3.0)
            took = time.monotonic() - started
    # 0.3 s per answer + 0.5 s per wait: three attempts fit in 3 s with 1 s left for
    # the next; a fourth would not, and ten retries would have taken 8 s
    assert caught.value.status == 503
    assert len(fake.requests) == 3
    assert len(notes) == 2
    assert took < 3.0


def test_no_request_when_the_deadline_has_passed() -> None:
    with (
        FakeLLM([{"content": "late"}]) as fake,
        ChatClient(settings(fake.base_url)) as client,
        pytest.raises(LLMError, match="time limit ran out before the LLM could be asked"),
    ):
        client.complete(MESSAGES, [], deadline=time.monotonic() + 0.5)
    assert fake.requests == []


OVERFLOWS = [
    # llama-cpp-python's server (and OpenAI's): error.code
    {"error": {"message": "This model's maximum context length is 8192 tokens. However, you "
               "requested 8400 tokens", "type": "invalid_request_error",
               "code": "context_length_exceeded"}},
    # llama.cpp's own server: error.type
    {"error": {"code": 400, "message": "request (4476 tokens) exceeds the available context "
               "size (4096 tokens)", "type": "exceed_context_size_error",
               "n_prompt_tokens": 4476, "n_ctx": 4096}},
    # vLLM: the message only
    {"object": "error", "message": "This model's maximum context length is 4096 tokens.",
     "type": "BadRequestError", "code": 400},
]  # fmt: skip


@pytest.mark.parametrize("body", OVERFLOWS)
def test_a_context_overflow_is_its_own_error_and_not_retried(body: dict[str, object]) -> None:
    with (
        FakeLLM([{"error": {"status": 400, "body": body}}]) as fake,
        ChatClient(settings(fake.base_url)) as client,
        pytest.raises(ContextOverflowError) as caught,
    ):
        client.complete(MESSAGES, [])
    assert caught.value.status == 400
    assert len(fake.requests) == 1


def test_a_plain_400_is_no_overflow() -> None:
    assert not context_overflow(400, json.dumps({"error": {"message": "bad tools"}}))
    assert not context_overflow(500, json.dumps(OVERFLOWS[0]))
