"""The two native decision-model wire formats: System One and OpenAI Decisions.

**systemone** (TypeSafe's Jev and hosts speaking the same API, design notes §3;
field names checked against colibri's ``docs/systemone.md`` and Upstage's
System One API page): ``POST {base}/v1/systemone``, bearer key, body
``{model, state, questions: {NAME: {type, instructions, criteria}}}`` with types
``noul`` (criteria ``{"true": …, "false": …}``), ``choice`` (criteria
``{option: description or null}``) and ``score`` (criteria ``[level, …]``, lowest first).
Answers are keyed by question name, either at the top level
(``{"d0": {"noul": 0.92}}``) or wrapped (``{"answers": {NAME: {"type": …}}}``);
both are read. ``noul`` → ``{noul: p}``; ``choice`` → ``{choice, probabilities:
{option: p}, confidence}``; ``score`` → ``{score, probabilities: {"0": p, …},
confidence}`` (levels numbered from 0, ``score`` the expected level). Usage is
``usage.{input_tokens, output_tokens, cost}``.
*Assumption* (no public text pins it down): a refusal is an answer with
``type: "refusal"`` or a ``refusal`` key; a question absent from the answers
is ``NoAnswer(missing)``.

**openai-decisions** (OpenAI's Decisions API; shapes checked against the
openai-python-derived types quoted by gproxy-protocol, LangChain's and
promptfoo's documentation): ``POST {base}/v1/decisions``, body ``{model, input,
questions: [{type: predicate|choice|score, name, instructions, choices:
[{value, description}] | levels: [{label}]}]}``; response ``{answers: [{name,
type, probability | choice + probabilities: [{value, probability}] | score +
probabilities: [{value: level index, label, probability}]}], usage}``; a
refused question is ``{type: "refusal", name}``. A predicate has no outcome
descriptions, so a ``YesNo``'s criteria are appended to its instructions.

For both, a base URL already ending in ``/v1`` is not given a second one.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from checks.decision import Backend, estimate_tokens
from checks.decision_http import HTTPDecisionModel, Reply
from checks.decision_types import (
    Answer,
    Choice,
    InvalidAnswer,
    NoAnswer,
    NoAnswerReason,
    Question,
    Score,
    YesNo,
    YesNoAnswer,
    choice_answer,
    probability,
    score_answer,
    validated,
)

_MISSING = NoAnswer(NoAnswerReason.MISSING, "the response has no answer for this question")


def _api_root(base_url: str) -> str:
    return base_url[: -len("/v1")] if base_url.endswith("/v1") else base_url


def _refusal(raw: dict[str, Any]) -> NoAnswer | None:
    if raw.get("type") == "refusal" or "refusal" in raw:
        said = raw.get("refusal") or raw.get("reason") or "the model declined this question"
        return NoAnswer(NoAnswerReason.REFUSED, str(said)[:200])
    return None


def _wrong_type(raw: dict[str, Any], expected: str) -> NoAnswer | None:
    got = raw.get("type", expected)
    if got != expected:
        return NoAnswer(NoAnswerReason.INVALID, f"answered as {got!r}, asked as {expected!r}"[:200])
    return None


def _mapping_pairs(value: Any) -> list[tuple[Any, Any]]:
    if not isinstance(value, dict):
        raise InvalidAnswer("no probabilities object")
    return list(value.items())


class SystemOneModel(HTTPDecisionModel):
    """The ``systemone`` backend: all questions of a request in one ``POST /v1/systemone``."""

    backend = Backend.SYSTEMONE

    @staticmethod
    def question_wire(question: Question) -> dict[str, Any]:
        """Return one question as it goes in ``questions[NAME]``."""
        if isinstance(question, YesNo):
            wire: dict[str, Any] = {"type": "noul", "instructions": question.instructions}
            if question.criteria:
                wire["criteria"] = dict(question.criteria)
            return wire
        if isinstance(question, Choice):
            return {
                "type": "choice",
                "instructions": question.instructions,
                "criteria": {option: text or None for option, text in question.options.items()},
            }
        return {"type": "score", "instructions": question.instructions, "criteria": question.levels}

    def question_tokens(self, question: Question) -> int:
        """Estimate the tokens ``"NAME": {…}`` adds to the body."""
        return estimate_tokens(json.dumps({question.name: self.question_wire(question)}))

    def send(self, state: str, questions: Sequence[Question]) -> Reply:
        """POST one request; read wrapped or unwrapped answers (see the module docstring)."""
        body: dict[str, Any] = {"model": self.model} if self.model else {}
        body["state"] = state
        body["questions"] = {q.name: self.question_wire(q) for q in questions}
        data = self.post(f"{_api_root(self.base_url)}/v1/systemone", body)
        wrapped = data.get("answers")
        found = wrapped if isinstance(wrapped, dict) else data
        answers = {q.name: self.read_answer(q, found.get(q.name)) for q in questions}
        tokens_in, tokens_out, cost = self.reply_usage(data.get("usage"))
        return Reply(answers, tokens_in, tokens_out, cost)

    @staticmethod
    def read_answer(question: Question, raw: Any) -> Answer:
        """Validate one question's answer object."""
        if raw is None:
            return _MISSING
        if not isinstance(raw, dict):
            return NoAnswer(NoAnswerReason.INVALID, "the answer is not an object")
        if (refused := _refusal(raw)) is not None:
            return refused
        if isinstance(question, YesNo):
            wrong = _wrong_type(raw, "noul")
            return wrong or validated(lambda: YesNoAnswer(probability(raw.get("noul"), "noul")))
        if isinstance(question, Choice):
            choice_q = question
            wrong = _wrong_type(raw, "choice")
            return wrong or validated(
                lambda: choice_answer(
                    choice_q,
                    raw.get("choice"),
                    _mapping_pairs(raw.get("probabilities")),
                    raw.get("confidence"),
                )
            )
        score_q: Score = question
        wrong = _wrong_type(raw, "score")
        return wrong or validated(
            lambda: score_answer(
                score_q,
                _mapping_pairs(raw.get("probabilities")),
                raw.get("score"),
                raw.get("confidence"),
            )
        )


def _list_pairs(value: Any, *, index_keys: bool) -> list[tuple[Any, Any]]:
    if not isinstance(value, list) or not all(isinstance(p, dict) for p in value):
        raise InvalidAnswer("probabilities is not a list of objects")
    pairs = []
    for item in value:
        key = item.get("value")
        if index_keys and isinstance(key, int) and not isinstance(key, bool):
            key = str(key)
        pairs.append((key, item.get("probability")))
    return pairs


class OpenAIDecisionsModel(HTTPDecisionModel):
    """The ``openai-decisions`` backend: a request's questions in one ``POST /v1/decisions``."""

    backend = Backend.OPENAI_DECISIONS

    @staticmethod
    def question_wire(question: Question) -> dict[str, Any]:
        """Return one question as it goes in ``questions[]``."""
        if isinstance(question, YesNo):
            instructions = question.instructions
            if question.criteria:
                instructions += (
                    f"\nTrue means: {question.criteria['true']}"
                    f"\nFalse means: {question.criteria['false']}"
                )
            return {"type": "predicate", "name": question.name, "instructions": instructions}
        if isinstance(question, Choice):
            choices = [
                {"value": value, "description": text} if text else {"value": value}
                for value, text in question.options.items()
            ]
            return {
                "type": "choice",
                "name": question.name,
                "instructions": question.instructions,
                "choices": choices,
            }
        return {
            "type": "score",
            "name": question.name,
            "instructions": question.instructions,
            "levels": [{"label": level} for level in question.levels],
        }

    def question_tokens(self, question: Question) -> int:
        """Estimate the tokens one ``questions[]`` item adds to the body."""
        return estimate_tokens(json.dumps(self.question_wire(question)))

    def send(self, state: str, questions: Sequence[Question]) -> Reply:
        """POST one request; match answers to questions by ``name``."""
        body = {
            "model": self.model,
            "input": state,
            "questions": [self.question_wire(q) for q in questions],
        }
        data = self.post(f"{_api_root(self.base_url)}/v1/decisions", body)
        items = data.get("answers")
        if not isinstance(items, list):
            raise ValueError("the response has no answers list")
        by_name: dict[str, Any] = {}
        repeated: set[str] = set()
        for item in items:
            name = item.get("name") if isinstance(item, dict) else None
            if isinstance(name, str):
                if name in by_name:
                    repeated.add(name)
                by_name[name] = item
        answers: dict[str, Answer] = {}
        for q in questions:
            if q.name in repeated:
                answers[q.name] = NoAnswer(NoAnswerReason.INVALID, "answered twice")
            else:
                answers[q.name] = self.read_answer(q, by_name.get(q.name))
        tokens_in, tokens_out, cost = self.reply_usage(data.get("usage"))
        return Reply(answers, tokens_in, tokens_out, cost)

    @staticmethod
    def read_answer(question: Question, raw: Any) -> Answer:
        """Validate one item of ``answers[]``."""
        if raw is None:
            return _MISSING
        if (refused := _refusal(raw)) is not None:
            return refused
        if isinstance(question, YesNo):
            wrong = _wrong_type(raw, "predicate")
            return wrong or validated(
                lambda: YesNoAnswer(probability(raw.get("probability"), "probability"))
            )
        if isinstance(question, Choice):
            choice_q = question
            wrong = _wrong_type(raw, "choice")
            return wrong or validated(
                lambda: choice_answer(
                    choice_q,
                    raw.get("choice"),
                    _list_pairs(raw.get("probabilities"), index_keys=False),
                    raw.get("confidence"),
                )
            )
        score_q: Score = question
        wrong = _wrong_type(raw, "score")
        return wrong or validated(
            lambda: score_answer(
                score_q,
                _list_pairs(raw.get("probabilities"), index_keys=True),
                raw.get("score"),
                raw.get("confidence"),
            )
        )
