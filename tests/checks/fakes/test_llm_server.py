"""The fake LLM server run from another process, as ``python -m checks.fakes.llm_server``."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from checks.agent.chat_client import ChatClient
from checks.errors import LLMError
from checks.settings.llm import LLMSettings
from tests.paths import ROOT


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    script = tmp_path / "script.yaml"
    script.write_text(
        "steps:\n"
        "  - tool_calls: [{name: execute_query, arguments: {sql: SELECT 1}}]\n"
        "    usage: {cost: 0.25}\n"
        "  - error: {status: 400, body: {error: nope}}\n"
        "default: {content: again}\n",
        encoding="utf-8",
    )
    log = tmp_path / "requests.jsonl"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "checks.fakes.llm_server",
            "--port",
            "0",
            "--script",
            str(script),
            "--log",
            str(log),
        ],
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    try:
        assert proc.stdout is not None
        yield proc.stdout.readline().strip(), log
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        if proc.stdout is not None:
            proc.stdout.close()


def test_serves_a_script_file_from_another_process(served: tuple[str, Path]) -> None:
    base_url, log = served
    assert base_url.startswith("http://127.0.0.1:") and base_url.endswith("/v1")
    settings = LLMSettings(base_url=base_url, model="m", max_retries=0)
    with ChatClient(settings) as client:
        reply = client.complete([{"role": "user", "content": "hi"}], [])
        assert [c.name for c in reply.tool_calls] == ["execute_query"] and reply.cost_usd == 0.25
        with pytest.raises(LLMError) as caught:
            client.complete([{"role": "user", "content": "hi"}], [])
        assert caught.value.status == 400
        assert client.complete([{"role": "user", "content": "hi"}], []).content == "again"
    logged = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    assert [entry["body"]["model"] for entry in logged] == ["m", "m", "m"]


def test_without_repeat_the_script_is_served_once_then_exhausted() -> None:
    from checks.fakes.llm_server import FakeLLM

    first = [{"role": "user", "content": "go"}]
    with FakeLLM([{"content": "one"}]) as fake, httpx_client(fake.base_url) as client:
        assert answer(client, first) == (200, "one")
        assert answer(client, first) == (400, "fake LLM script exhausted")


def test_with_repeat_each_new_conversation_gets_the_whole_script() -> None:
    from checks.fakes.llm_server import FakeLLM

    script = [{"content": "step 1"}, {"content": "step 2"}, {"content": "step 3"}]
    start = [{"role": "system", "content": "s"}, {"role": "user", "content": "go"}]
    going = [*start, {"role": "assistant", "content": "step 1"}]
    with FakeLLM(script, repeat=True) as fake, httpx_client(fake.base_url) as client:
        assert answer(client, start) == (200, "step 1")
        assert answer(client, going) == (200, "step 2")
        # a new conversation before the script ran out starts it over
        assert answer(client, start) == (200, "step 1")
        assert [answer(client, going) for _ in range(3)] == [
            (200, "step 2"),
            (200, "step 3"),
            (200, "step 1"),  # ran out: from the top again, never exhausted
        ]


def httpx_client(base_url: str) -> httpx.Client:
    return httpx.Client(base_url=base_url, timeout=10)


def answer(client: httpx.Client, messages: list[dict[str, str]]) -> tuple[int, str]:
    """POST one chat completion; return the status and the content or the error message."""
    body = {"model": "m", "messages": messages, "max_tokens": 64}
    response = client.post("/chat/completions", json=body)
    body = response.json()
    if response.status_code != 200:
        return response.status_code, body["error"]["message"]
    return 200, body["choices"][0]["message"]["content"]


def test_the_repeat_flag_of_the_program(tmp_path: Path) -> None:
    script = tmp_path / "script.yaml"
    script.write_text("- {content: only}\n", encoding="utf-8")
    proc = subprocess.Popen(
        [sys.executable, "-m", "checks.fakes.llm_server", "--script", str(script), "--repeat"],
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    try:
        assert proc.stdout is not None
        with httpx_client(proc.stdout.readline().strip()) as client:
            start = [{"role": "user", "content": "go"}]
            assert [answer(client, start) for _ in range(3)] == [(200, "only")] * 3
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        if proc.stdout is not None:
            proc.stdout.close()
