"""A scripted decision-model server, one wire format at a time, for tests and dry runs.

It speaks real HTTP on 127.0.0.1 and one of the wire formats of
``checks.opinion.backends``: ``systemone`` (``POST
/v1/systemone``), ``openai-decisions`` (``POST /v1/decisions``) or
``chat-logprobs`` (``POST /v1/chat/completions``). Nothing here is a model:
every answer comes from the script, and every request is recorded. The
responses have the shapes of the real clients' own models, and the tests hold
them to it: ``systemone`` is ``typesafe-sdk``'s ``SystemOneResponse`` (and
``openrouter``'s ``DecisionsResponse``), ``openai-decisions`` is ``openai``'s
``Decision``, ``chat-logprobs`` is its ``ChatCompletion``. So:

- ``systemone`` requests need ``model``, ``state`` and at least one question
  (else 422 with FastAPI's ``{"detail": [{loc, msg, type}]}``, TypeSafe's
  ``HTTPValidationError``); a score answer carries ``legend`` (level index →
  the level's text from the request) beside ``probabilities``; usage is
  ``{input_tokens, output_tokens}`` (TypeSafe sends no cost; a scripted
  ``usage: {cost: …}`` plays OpenRouter); every response carries
  ``x-typesafe-request-id``; ``GET /v1/models`` answers a ``ModelMetadataList``.
- The System One schemas have no refusal answer and never an empty
  ``answers``: a refused question is left out of ``answers``, and when no
  question is left to answer the request is refused whole, HTTP 400
  ``{"error": {"code": 400, "message": …}}``.
- ``openai-decisions`` and ``chat-logprobs`` usage carry ``total_tokens`` and the
  token-details objects; a refusal is ``{type: "refusal", name}``; every
  response carries ``x-request-id``; ``GET /v1/models`` is a ``Model`` list.

A script is a list of steps answered in order, one per request; when it runs
out, ``default`` answers (without one: HTTP 400 ``script exhausted``). A step
is a mapping — or, in-process only, a callable taking the request body and
returning one:

- ``{"delay_s": 2}`` (any step): sleep this long before answering.
- ``{"status": 503, "body": {...}}``: that status and JSON body, verbatim
  (``body`` alone: status 200).
- ``{"usage": {...}}``: merged over the estimated usage (input ≈ body chars / 4).

``systemone`` and ``openai-decisions`` steps: ``{"answers": {NAME: SPEC}}``;
a question not named is left out of the response. ``SPEC`` is

- a number: a yes/no answer with that probability of yes;
- ``{"probabilities": {option: p}, "choice"?: option, "confidence"?: c}``: a
  choice (``choice`` defaults to the most probable option);
- ``{"distribution": [p0, p1, …], "score"?: x}``: a score (``score``
  defaults to the expected level);
- ``"refuse"``: a refusal (left out, for ``systemone``: see above);
- ``{"raw": {...}}``: that answer object, verbatim.

``systemone`` steps may say ``"wrapped": false`` to put the answers at the top
level (``{"d0": {"noul": 0.92}}``, a shape some other hosts use) instead of
under ``answers``.

``chat-logprobs`` steps (one request per question):
``{"top_logprobs": [[token, logprob], …]}`` (the first is the sampled token),
``{"p": 0.8}`` (``yes``/``no`` with those probabilities),
``{"no_logprobs": true}`` (``logprobs: null``) or ``{"refusal": "text"}``.

Run from another process with ``python -m checks.fakes.decision_server --backend B
--port N --script FILE [--log FILE]``: the script file is JSON or YAML holding
a list of steps or ``{steps: [...], default: {...}}``; the base URL to
configure is printed first, and ``--log`` appends each request as a JSON line.
"""

from __future__ import annotations

import argparse
import json
import math
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from checks.fakes.openai_wire import CREATED, chat_usage, decisions_usage, model_list
from checks.fakes.scripted_server import FakeServer, Response, load_script
from checks.fakes.scripted_server import RecordedRequest as RecordedRequest
from checks.fakes.scripted_server import Step as Step
from checks.opinion.decision_model import Backend
from checks.opinion.questions import flat_confidence

ROUTES = {
    Backend.SYSTEMONE: "/v1/systemone",
    Backend.OPENAI_DECISIONS: "/v1/decisions",
    Backend.CHAT_LOGPROBS: "/v1/chat/completions",
}
MODELS = ("jev-latest",)
"""The model names ``GET /v1/models`` lists."""


def request_state(backend: Backend, body: Mapping[str, Any]) -> str:
    """Return the state text of a request body (the last user message for chat)."""
    if backend is Backend.SYSTEMONE:
        return str(body.get("state", ""))
    if backend is Backend.OPENAI_DECISIONS:
        return str(body.get("input", ""))
    return str(body.get("messages", [{}])[-1].get("content", ""))


def request_question_names(backend: Backend, body: Mapping[str, Any]) -> list[str]:
    """Return the question names of a ``systemone`` or ``openai-decisions`` request, in order."""
    questions = body.get("questions")
    if backend is Backend.SYSTEMONE and isinstance(questions, dict):
        return list(questions)
    if isinstance(questions, list):
        return [str(q.get("name")) for q in questions if isinstance(q, dict)]
    return []


def _score_labels(backend: Backend, body: Mapping[str, Any], name: str) -> list[Any]:
    """The levels a score question offered: ``levels[].label``, or System One's ``criteria``."""
    questions = body.get("questions")
    if backend is Backend.SYSTEMONE and isinstance(questions, dict):
        criteria = (questions.get(name) or {}).get("criteria")
        return list(criteria) if isinstance(criteria, list) else []
    for q in questions or []:
        if isinstance(q, dict) and q.get("name") == name:
            return [str(level.get("label")) for level in q.get("levels") or []]
    return []


def render_answer(backend: Backend, name: str, spec: Any, body: Mapping[str, Any]) -> Any:
    """Return one scripted answer ``spec`` in the backend's wire shape (module docstring)."""
    native = backend is Backend.SYSTEMONE
    named: dict[str, Any] = {} if native else {"name": name}
    if spec == "refuse":
        return {"type": "refusal", **named} | ({"refusal": "declined"} if native else {})
    if isinstance(spec, int | float) and not isinstance(spec, bool):
        return (
            {"type": "noul", "noul": spec}
            if native
            else {**named, "type": "predicate", "probability": spec}
        )
    if not isinstance(spec, Mapping):
        raise ValueError(f"answer spec for {name!r} is not understood: {spec!r}")
    if "raw" in spec:
        return spec["raw"]
    if "probabilities" in spec:
        probs: dict[str, float] = dict(spec["probabilities"])
        choice = spec.get("choice", max(probs, key=lambda o: probs[o]))
        values = list(probs.values()) if len(probs) > 1 else [1.0, 0.0]
        confidence = spec.get("confidence", flat_confidence(values))
        listed = probs if native else [{"value": k, "probability": v} for k, v in probs.items()]
        return {
            **named,
            "type": "choice",
            "choice": choice,
            "probabilities": listed,
            "confidence": confidence,
        }
    dist = list(spec["distribution"])
    score = spec.get("score", sum(i * p for i, p in enumerate(dist)))
    labels = _score_labels(backend, body, name)
    label = [labels[i] if i < len(labels) else str(i) for i in range(len(dist))]
    answer: dict[str, Any] = {**named, "type": "score", "score": score}
    if native:
        answer["legend"] = {str(i): text for i, text in enumerate(label)}
        answer["probabilities"] = {str(i): p for i, p in enumerate(dist)}
    else:
        answer["probabilities"] = [
            {"value": i, "label": str(text), "probability": p}
            for i, (text, p) in enumerate(zip(label, dist, strict=True))
        ]
    answer["confidence"] = flat_confidence(dist) if len(dist) > 1 else 1.0
    return answer


def _chat_completion(
    step: Mapping[str, Any], body: Mapping[str, Any], serial: int
) -> dict[str, Any]:
    tops: list[Any] = list(step.get("top_logprobs") or [])
    if "p" in step:
        p = float(step["p"])
        tops = [[t, math.log(v)] for t, v in (("yes", p), ("no", 1 - p)) if v > 0]
        tops.sort(key=lambda t: -t[1])
    items = [t if isinstance(t, Mapping) else {"token": t[0], "logprob": t[1]} for t in tops]
    items = [{**t, "bytes": None} for t in items]
    message: dict[str, Any] = {
        "role": "assistant",
        "content": items[0]["token"] if items else "yes",
    }
    logprobs: Any = None
    if step.get("refusal"):
        message = {"role": "assistant", "content": None, "refusal": step["refusal"]}
    elif not step.get("no_logprobs") and items:
        logprobs = {"content": [{**items[0], "top_logprobs": items}]}
    message.setdefault("refusal", None)
    return {
        "id": f"chatcmpl-fake-{serial}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model", "fake"),
        "choices": [
            {"index": 0, "message": message, "finish_reason": "length", "logprobs": logprobs}
        ],
    }


def _missing(loc: str) -> dict[str, Any]:
    return {"loc": ["body", loc], "msg": "Field required", "type": "missing"}


def request_problems(backend: Backend, body: Mapping[str, Any]) -> tuple[int, Any] | None:
    """Return the (status, error body) refusing a request the real API refuses, else None.

    ``systemone``: FastAPI's 422 when ``model`` or ``state`` is missing or there is
    no question; ``openai-decisions`` and ``chat-logprobs``: OpenAI's 400 without ``model``.
    """
    if backend is Backend.SYSTEMONE:
        detail = [_missing(key) for key in ("model", "state") if key not in body]
        if not isinstance(body.get("model", ""), str):
            detail.append(
                {
                    "loc": ["body", "model"],
                    "msg": "Input should be a valid string",
                    "type": "string_type",
                }
            )
        questions = body.get("questions")
        if not isinstance(questions, dict) or not questions:
            detail.append(
                {
                    "loc": ["body", "questions"],
                    "msg": "Dictionary should have at least 1 item after validation, not 0",
                    "type": "too_short",
                }
            )
        return (422, {"detail": detail}) if detail else None
    if not isinstance(body.get("model"), str) or not body["model"]:
        error = {
            "message": "you must provide a model parameter",
            "type": "invalid_request_error",
            "param": "model",
            "code": None,
        }
        return 400, {"error": error}
    return None


def _systemone(
    step: Mapping[str, Any], body: Mapping[str, Any], usage: dict[str, Any]
) -> tuple[int, Any]:
    answers = {
        n: render_answer(Backend.SYSTEMONE, n, s, body)
        for n, s in (step.get("answers") or {}).items()
        if s != "refuse"
    }
    if not answers:  # never an empty answers object: the request is refused whole
        message = "the model declined to answer any question of this request"
        return 400, {"error": {"code": 400, "message": message}}
    if step.get("wrapped", True):
        return 200, {"model": body.get("model"), "answers": answers, "usage": usage}
    return 200, {**answers, "usage": usage}


def render(
    backend: Backend, step: Mapping[str, Any], body: Mapping[str, Any], serial: int
) -> tuple[int, Any]:
    """Return the (status, JSON body) answering ``body`` from one scripted step."""
    if "status" in step or "body" in step:
        return int(step.get("status", 200)), step.get("body", {})
    refused = request_problems(backend, body)
    if refused is not None:
        return refused
    tokens_in = len(json.dumps(body)) // 4
    if backend is Backend.CHAT_LOGPROBS:
        payload = _chat_completion(step, body, serial)
        payload["usage"] = chat_usage(tokens_in, 1, step.get("usage"))
        return 200, payload
    if backend is Backend.SYSTEMONE:
        usage = {"input_tokens": tokens_in, "output_tokens": 0} | dict(step.get("usage") or {})
        return _systemone(step, body, usage)
    answers = [render_answer(backend, n, s, body) for n, s in (step.get("answers") or {}).items()]
    usage = decisions_usage(tokens_in, 0, step.get("usage"))
    return 200, {"model": body.get("model"), "answers": answers, "usage": usage}


class FakeDecision(FakeServer):
    """The scripted server for one wire format; a context manager that starts and stops it.

    Args:
        backend: the wire format spoken (not ``none``).
        script: the steps, answered in order.
        default: the step answering every request after the script ran out.
        port: TCP port on 127.0.0.1; 0 picks a free one.
        log_path: when set, every request is also appended to this file as a JSON line.
    """

    name = "fake decision"

    def __init__(
        self,
        backend: Backend | str,
        script: Sequence[Step] = (),
        *,
        default: Step | None = None,
        port: int = 0,
        log_path: str | Path | None = None,
    ) -> None:
        self.backend = Backend(backend)
        if self.backend is Backend.NONE:
            raise ValueError("backend none has no server")
        if self.backend is Backend.SYSTEMONE:
            self.request_id_header = "x-typesafe-request-id"
        super().__init__(script, default=default, port=port, log_path=log_path)

    @property
    def base_url(self) -> str:
        """The ``decision.base_url`` to configure (ends in ``/v1`` for chat-logprobs)."""
        root = f"http://127.0.0.1:{self.port}"
        return f"{root}/v1" if self.backend is Backend.CHAT_LOGPROBS else root

    @property
    def bodies(self) -> list[dict[str, Any]]:
        """The JSON bodies received so far, in order."""
        with self._lock:
            return [r.body for r in self.requests]

    def accepts(self, path: str) -> bool:
        """Serve ``POST`` on the backend's route only (``ROUTES``)."""
        return path.rstrip("/") == ROUTES[self.backend]

    def respond(self, step: Mapping[str, Any], body: Mapping[str, Any], serial: int) -> Response:
        """The backend's answer to ``body`` from ``step`` (see ``render``)."""
        return (*render(self.backend, step, body, serial), None)

    def get(self, path: str) -> Response | None:
        """``GET /v1/models``: TypeSafe's ``ModelMetadataList``, or OpenAI's ``Model`` list."""
        if path.rstrip("/") != "/v1/models":
            return None
        if self.backend is Backend.SYSTEMONE:
            day = time.strftime("%Y-%m-%d", time.gmtime(CREATED))
            models = [
                {"name": m, "description": "A scripted fake, not a model.", "release_date": day}
                for m in MODELS
            ]
            return 200, {"models": models}, None
        return 200, model_list(MODELS), None


def main(argv: Sequence[str] | None = None) -> None:
    """Serve a script file until interrupted; print the base URL first."""
    parser = argparse.ArgumentParser(
        prog="python -m checks.fakes.decision_server", description=__doc__
    )
    parser.add_argument("--backend", required=True, choices=[str(b) for b in ROUTES])
    parser.add_argument("--port", type=int, default=0, help="TCP port on 127.0.0.1 (0: any free)")
    parser.add_argument("--script", required=True, help="JSON or YAML script file")
    parser.add_argument("--log", help="append every request received to this JSONL file")
    args = parser.parse_args(argv)
    steps, default = load_script(args.script)
    fake = FakeDecision(args.backend, steps, default=default, port=args.port, log_path=args.log)
    print(fake.base_url, flush=True)
    fake.serve_forever()


if __name__ == "__main__":
    main()
