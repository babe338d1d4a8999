"""The fake LLM server run from another process, as ``python -m checks.fakes.llm_server``."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

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
