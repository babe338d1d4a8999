"""The ``systemone`` backend: the System One wire format.

**systemone** (TypeSafe's Jev and hosts speaking the same API, docs/design.md, Decision models;
shapes from the real clients' models: ``typesafe-sdk``'s ``SystemOneRequest`` /
``SystemOneResponse``, generated from TypeSafe's OpenAPI schema, and
``openrouter``'s ``DecisionsRequest`` / ``DecisionsResponse``): ``POST
{base}/v1/systemone``, bearer key, body ``{model, state, questions: {NAME:
{type, instructions, criteria}}}`` (``model`` required) with types ``noul``
(criteria ``{"true": …, "false": …}``), ``choice`` (criteria ``{option:
description or null}``) and ``score`` (criteria ``[level, …]``, lowest first).
The response is ``{model, answers: {NAME: {type, …}}, usage}``; some other hosts
put the answers at the top level (``{"d0": {"noul": 0.92}}``): both are read.
``noul`` → ``{noul: p}``; ``choice`` → ``{choice, probabilities: {option: p},
confidence}``; ``score`` → ``{score, legend: {"0": level, …}, probabilities:
{"0": p, …}, confidence}`` (levels numbered from 0, ``score`` the expected
level; ``legend`` is not needed to read it). Usage is ``usage.{input_tokens,
output_tokens}``, plus ``cost`` through OpenRouter.
Refusals: the System One schemas have no refusal answer and never an empty
``answers``, so a declined question is absent (``NoAnswer(missing)``) and a
request declined whole is an HTTP error (``NoAnswer(http_error)``); an
answer with ``type: "refusal"`` or a ``refusal`` key, which some hosts send,
is still read as ``NoAnswer(refused)``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from checks.opinion.backends.wire import MISSING, api_root, refusal, wrong_type
from checks.opinion.decision_model import Backend, estimate_tokens
from checks.opinion.questions import (
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
from checks.opinion.transport import HTTPDecisionModel, Reply


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
        body: dict[str, Any] = {
            "model": self.model,
            "state": state,
            "questions": {q.name: self.question_wire(q) for q in questions},
        }
        data = self.post(f"{api_root(self.base_url)}/v1/systemone", body)
        wrapped = data.get("answers")
        found = wrapped if isinstance(wrapped, dict) else data
        answers = {q.name: self.read_answer(q, found.get(q.name)) for q in questions}
        tokens_in, tokens_out, cost = self.reply_usage(data.get("usage"))
        return Reply(answers, tokens_in, tokens_out, cost)

    @staticmethod
    def read_answer(question: Question, raw: Any) -> Answer:
        """Validate one question's answer object."""
        if raw is None:
            return MISSING
        if not isinstance(raw, dict):
            return NoAnswer(NoAnswerReason.INVALID, "the answer is not an object")
        if (refused := refusal(raw)) is not None:
            return refused
        if isinstance(question, YesNo):
            wrong = wrong_type(raw, "noul")
            return wrong or validated(lambda: YesNoAnswer(probability(raw.get("noul"), "noul")))
        if isinstance(question, Choice):
            choice_q = question
            wrong = wrong_type(raw, "choice")
            return wrong or validated(
                lambda: choice_answer(
                    choice_q,
                    raw.get("choice"),
                    _mapping_pairs(raw.get("probabilities")),
                    raw.get("confidence"),
                )
            )
        score_q: Score = question
        wrong = wrong_type(raw, "score")
        return wrong or validated(
            lambda: score_answer(
                score_q,
                _mapping_pairs(raw.get("probabilities")),
                raw.get("score"),
                raw.get("confidence"),
            )
        )
