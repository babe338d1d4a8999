"""The ``chat-logprobs`` backend: any OpenAI-compatible chat model as a decision model.

Wire format: OpenAI's chat completions (``POST {base}/chat/completions``, base
usually ending in ``/v1``) with ``max_tokens: 1``, ``temperature: 0``,
``logprobs: true`` and ``top_logprobs`` (5–20: twice the labels, at least 5);
the answer is read from ``choices[0].logprobs.content[0]`` — its ``token`` and
``logprob`` and its ``top_logprobs[].{token, logprob}``, the shape in OpenAI's
API reference. OpenRouter gets ``provider: {require_parameters: true}`` so a
provider that cannot return logprobs is not silently chosen (docs/design.md, The agent's tools).

Each question is asked as one-token labels: ``yes``/``no``; ``A``, ``B``… for a
choice's options in the order offered; ``0``…``9`` for a score's levels. A
chat model cannot answer several questions with one next token, so **every
question is its own request** (sent in parallel, at most
``max_parallel_requests`` at once); the state is sent with each.

Reading (docs/design.md, Decision models): the probabilities of a label's variants that
differ in case or leading whitespace (``Yes``, `` yes``, ``YES``) are added;
p(yes) = P(yes) / (P(yes) + P(no)), and a choice or score is normalised over
its labels. A label absent from ``top_logprobs`` counts as 0 (its true
probability is below the least one listed). When the labels hold under half
the next-token probability the answer is ``NoAnswer(unreliable)``. A
response without logprobs (``logprobs: null``, an empty ``content``, no
``top_logprobs``) is ``NoAnswer(no_logprobs)``: no probability is ever
invented. ``message.refusal`` is ``NoAnswer(refused)``.
"""

from __future__ import annotations

import math
import string
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlparse

from checks.opinion.decision_model import Backend, estimate_tokens
from checks.opinion.questions import (
    Answer,
    Choice,
    ChoiceAnswer,
    NoAnswer,
    NoAnswerReason,
    Question,
    ScoreAnswer,
    YesNo,
    YesNoAnswer,
    flat_confidence,
)
from checks.opinion.transport import HTTPDecisionModel, Reply

MIN_LABEL_MASS = 0.5
"""Below this share of the next-token probability on the labels, an answer is unreliable."""

SYSTEM_PROMPT = (
    "You judge data. Read the state, then answer the question with exactly one of the "
    "labels offered and nothing else."
)


def labels(question: Question) -> dict[str, str]:
    """Return label → option for a question: ``yes``/``no``, ``A``…, or ``0``…."""
    if isinstance(question, YesNo):
        return {"yes": "yes", "no": "no"}
    if isinstance(question, Choice):
        return dict(zip(string.ascii_uppercase, question.options, strict=False))
    return {str(i): str(i) for i in range(len(question.levels))}


def question_text(question: Question) -> str:
    """Return the question part of the user message (the state comes before it)."""
    lines = [f"Question: {question.instructions}"]
    if isinstance(question, YesNo):
        if question.criteria:
            lines += [f"yes: {question.criteria['true']}", f"no: {question.criteria['false']}"]
    elif isinstance(question, Choice):
        lines.append("Options:")
        lines += [
            f"{label}: {option}"
            + (f" ({question.options[option]})" if question.options[option] else "")
            for label, option in labels(question).items()
        ]
    else:
        lines.append("Levels, lowest first:")
        lines += [f"{i}: {level}" for i, level in enumerate(question.levels)]
    names = list(labels(question))
    lines.append(f"Answer with one label: {', '.join(names[:-1])} or {names[-1]}.")
    return "\n".join(lines)


def _label_masses(first: dict[str, Any], wanted: dict[str, str]) -> dict[str, float] | None:
    """Add up exp(logprob) per label over the distinct tokens offered; None: no top_logprobs."""
    tops = first.get("top_logprobs")
    if not isinstance(tops, list) or not tops:
        return None
    by_token: dict[str, float] = {}
    for item in [first, *tops]:
        token, logprob = item.get("token"), item.get("logprob")
        if (
            isinstance(token, str)
            and isinstance(logprob, int | float)
            and not isinstance(logprob, bool)
            and math.isfinite(logprob)
        ):
            by_token.setdefault(token, float(logprob))
    folded = {label.lower(): label for label in wanted}
    masses = dict.fromkeys(wanted, 0.0)
    for token, logprob in by_token.items():
        label = folded.get(token.lstrip().lower())
        if label is not None:
            masses[label] += math.exp(min(logprob, 0.0))
    return masses


def read_answer(question: Question, data: dict[str, Any]) -> Answer:
    """Turn one chat completion into an answer (see the module docstring)."""
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        return NoAnswer(NoAnswerReason.INVALID, "the response has no choices")
    message = choices[0].get("message")
    if isinstance(message, dict) and message.get("refusal"):
        return NoAnswer(NoAnswerReason.REFUSED, str(message["refusal"])[:200])
    logprobs = choices[0].get("logprobs")
    content = logprobs.get("content") if isinstance(logprobs, dict) else None
    wanted = labels(question)
    masses = None
    if isinstance(content, list) and content and isinstance(content[0], dict):
        masses = _label_masses(content[0], wanted)
    if masses is None:
        return NoAnswer(
            NoAnswerReason.NO_LOGPROBS,
            "the response carries no logprobs (the provider may not return them for this "
            "model); no probability was invented",
        )
    total = sum(masses.values())
    if total < MIN_LABEL_MASS:
        return NoAnswer(
            NoAnswerReason.UNRELIABLE,
            f"the labels hold {total:.0%} of the next-token probability (under "
            f"{MIN_LABEL_MASS:.0%})",
        )
    if isinstance(question, YesNo):
        return YesNoAnswer(masses["yes"] / total)
    probs = [masses[label] / total for label in wanted]
    if isinstance(question, Choice):
        by_option = {wanted[label]: p for label, p in zip(wanted, probs, strict=True)}
        chosen = max(by_option, key=lambda o: by_option[o])
        return ChoiceAnswer(chosen, by_option, flat_confidence(probs))
    expected = sum(i * p for i, p in enumerate(probs))
    return ScoreAnswer(expected, tuple(probs), flat_confidence(probs))


class ChatLogprobsModel(HTTPDecisionModel):
    """The ``chat-logprobs`` backend: one chat-completions request per question."""

    backend = Backend.CHAT_LOGPROBS
    batches_questions = False

    def question_tokens(self, question: Question) -> int:
        """Estimate the tokens of the question part of the user message."""
        return estimate_tokens(question_text(question))

    def request_overhead_tokens(self) -> int:
        """Estimate the system message and the chat framing, in tokens."""
        return estimate_tokens(SYSTEM_PROMPT) + 30

    def body(self, state: str, question: Question) -> dict[str, Any]:
        """Return the chat-completions request body asking one question."""
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [
                {"role": "system", "content": SYSTEM_PROMPT},
                {"role": "user", "content": f"{state}\n\n{question_text(question)}"},
            ],
            "max_tokens": 1,
            "temperature": 0,
            "logprobs": True,
            "top_logprobs": max(5, min(20, 2 * len(labels(question)))),
        }
        if (urlparse(self.base_url).hostname or "").endswith("openrouter.ai"):
            body["provider"] = {"require_parameters": True}
        return body

    def send(self, state: str, questions: Sequence[Question]) -> Reply:
        """Ask each question in its own request, one after the other (``ask`` sends one)."""
        reply = Reply(answers={}, cost_usd=0.0, requests=0)
        for question in questions:
            data = self.post(f"{self.base_url}/chat/completions", self.body(state, question))
            reply.answers[question.name] = read_answer(question, data)
            tokens_in, tokens_out, cost = self.reply_usage(data.get("usage"))
            reply.input_tokens += tokens_in
            reply.output_tokens += tokens_out
            reply.requests += 1
            reply.cost_usd = (
                None if reply.cost_usd is None or cost is None else reply.cost_usd + cost
            )
        return reply
