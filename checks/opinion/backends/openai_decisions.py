"""The ``openai-decisions`` backend: the OpenAI Decisions wire format.

OpenAI's Decisions API (shapes checked against the
openai-python-derived types quoted by gproxy-protocol, LangChain's and
promptfoo's documentation): ``POST {base}/v1/decisions``, body ``{model, input,
questions: [{type: predicate|choice|score, name, instructions, choices:
[{value, description}] | levels: [{label}]}]}``; response ``{answers: [{name,
type, probability | choice + probabilities: [{value, probability}] | score +
probabilities: [{value: level index, label, probability}]}], usage}``; a
refused question is ``{type: "refusal", name}``. A predicate has no outcome
descriptions, so a ``YesNo``'s criteria are appended to its instructions.
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
        data = self.post(f"{api_root(self.base_url)}/v1/decisions", body)
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
            return MISSING
        if (refused := refusal(raw)) is not None:
            return refused
        if isinstance(question, YesNo):
            wrong = wrong_type(raw, "predicate")
            return wrong or validated(
                lambda: YesNoAnswer(probability(raw.get("probability"), "probability"))
            )
        if isinstance(question, Choice):
            choice_q = question
            wrong = wrong_type(raw, "choice")
            return wrong or validated(
                lambda: choice_answer(
                    choice_q,
                    raw.get("choice"),
                    _list_pairs(raw.get("probabilities"), index_keys=False),
                    raw.get("confidence"),
                )
            )
        score_q: Score = question
        wrong = wrong_type(raw, "score")
        return wrong or validated(
            lambda: score_answer(
                score_q,
                _list_pairs(raw.get("probabilities"), index_keys=True),
                raw.get("score"),
                raw.get("confidence"),
            )
        )
