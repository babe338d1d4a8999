"""What every scripted fake does before its wire format: bodies, encodings, errors, request ids.

A real API answers every request; a fake that drops the connection on a body it
cannot read makes a client's error handling untestable.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from backports.zstd import compress

from checks.fakes.decision_server import FakeDecision
from checks.fakes.llm_server import FakeLLM
from checks.opinion.decision_model import Backend

BODY = {"model": "m", "state": "s", "questions": {"q": {"type": "noul", "instructions": "?"}}}


@pytest.fixture
def fake() -> Iterator[FakeDecision]:
    with FakeDecision(Backend.SYSTEMONE, default={"answers": {"q": 0.5}}) as server:
        yield server


def send(fake: FakeDecision, content: bytes, **headers: str) -> httpx.Response:
    url = f"{fake.base_url}/v1/systemone"
    return httpx.post(url, content=content, headers=headers, timeout=10)


def test_a_zstd_body_is_decoded(fake: FakeDecision) -> None:
    response = send(fake, compress(json.dumps(BODY).encode()), **{"Content-Encoding": "zstd"})
    assert response.status_code == 200
    assert response.json()["answers"] == {"q": {"type": "noul", "noul": 0.5}}
    assert fake.bodies == [BODY]


@pytest.mark.parametrize(
    ("content", "headers", "status", "message"),
    [
        (b"\x28\xb5\x2f\xfd garbage", {"Content-Encoding": "zstd"}, 400, "does not decompress"),
        (b"\x1f\x8b...", {"Content-Encoding": "gzip"}, 415, "Content-Encoding 'gzip'"),
        (b"\xff\xfe not utf-8 {", {}, 400, "request body is not JSON"),
        (b"{not json", {}, 400, "request body is not JSON"),
        (b"[1, 2]", {}, 400, "request body is not a JSON object"),
    ],
)
def test_a_body_it_cannot_read_gets_an_answer_never_a_dropped_connection(
    fake: FakeDecision, content: bytes, headers: dict[str, str], status: int, message: str
) -> None:
    response = send(fake, content, **headers)
    assert response.status_code == status
    assert message in response.json()["error"]["message"]
    assert response.headers["x-typesafe-request-id"].startswith("req_")
    assert fake.bodies == []  # nothing readable was recorded


def test_a_step_the_fake_cannot_render_is_a_500_saying_so() -> None:
    def broken(body: dict[str, Any]) -> dict[str, Any]:
        raise KeyError("no such answer")

    with FakeDecision(Backend.SYSTEMONE, default=broken) as fake:
        response = send(fake, json.dumps(BODY).encode())
    assert response.status_code == 500
    assert response.json()["error"]["message"] == (
        "fake decision cannot answer from its script: KeyError: 'no such answer'"
    )


def test_unknown_routes_are_404_with_a_request_id() -> None:
    with FakeLLM() as llm:
        missing = httpx.get(f"{llm.base_url}/nothing", timeout=10)
        posted = httpx.post(f"{llm.base_url}/embeddings", json={}, timeout=10)
    assert (missing.status_code, posted.status_code) == (404, 404)
    assert missing.headers["x-request-id"].startswith("req_")
