"""Typed questions for a decision model, their answers, and how answers are validated.

Questions: ``YesNo`` (probability of yes), ``Choice`` (2–26 named options),
``Score`` (2–10 ordered levels, lowest first). Names are identifiers of at
most 64 characters, unique within one request, and none of the response
keys some hosts put beside the answers (``RESERVED_NAMES``).

Validation (docs/design.md, Decision models), applied to every backend's answers:

- a probability is a real number in [0, 1] (``true``/``false`` are not numbers);
- a distribution's keys are exactly the offered options: a missing key is
  invalid, never zero; an extra or repeated key is invalid;
- a distribution sums to 1 ± 0.01 (``SUM_TOLERANCE``);
- a choice is an option of greatest probability (the argmax; ties allowed);
- a score's expected level, when the backend states one, equals
  Σ level × p within 0.01 × (levels − 1).

A rule broken is ``NoAnswer(invalid)`` saying which rule; nothing is repaired.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, ClassVar

SUM_TOLERANCE = 0.01
"""How far a distribution's sum may be from 1 (docs/design.md, Decision models)."""

MAX_CHOICE_OPTIONS = 26
"""Most options of a ``Choice``: one letter each when asked as chat labels."""

RESERVED_NAMES = frozenset({"answers", "usage", "model", "id", "provider", "object", "error"})
"""Names a question may not take: keys some hosts put beside unwrapped answers."""

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")


def _check_common(name: str, instructions: str) -> None:
    if not _NAME.fullmatch(name):
        raise ValueError(f"question name {name!r} is not an identifier of 1-64 characters")
    if name in RESERVED_NAMES:
        raise ValueError(f"question name {name!r} is reserved")
    if not instructions.strip():
        raise ValueError(f"question {name!r} has no instructions")


@dataclass(frozen=True)
class YesNo:
    """A yes/no question; the answer is the probability of yes.

    Attributes:
        name: identifier, unique in the request.
        instructions: the question, in plain words.
        criteria: optional ``{"true": what yes means, "false": what no means}``.

    Raises:
        ValueError: a bad name, empty instructions, or criteria with other keys.
    """

    kind: ClassVar[str] = "yes_no"
    name: str
    instructions: str
    criteria: Mapping[str, str] | None = None

    def __post_init__(self) -> None:
        _check_common(self.name, self.instructions)
        if self.criteria is not None and set(self.criteria) != {"true", "false"}:
            raise ValueError(f"question {self.name!r}: criteria keys must be 'true' and 'false'")

    def describe(self) -> dict[str, Any]:
        """Return the question as plain JSON (for logs and token estimates)."""
        return {
            "type": self.kind,
            "name": self.name,
            "instructions": self.instructions,
            "criteria": dict(self.criteria) if self.criteria else None,
        }


@dataclass(frozen=True)
class Choice:
    """Pick one of 2–26 named options; the answer has a probability for every option.

    Attributes:
        name: identifier, unique in the request.
        instructions: the question, in plain words.
        options: option name → what it means, in the order offered.

    Raises:
        ValueError: a bad name, empty instructions, or fewer than 2 / more than
            26 options, or an empty option name.
    """

    kind: ClassVar[str] = "choice"
    name: str
    instructions: str
    options: Mapping[str, str]

    def __post_init__(self) -> None:
        _check_common(self.name, self.instructions)
        if not 2 <= len(self.options) <= MAX_CHOICE_OPTIONS:
            raise ValueError(f"question {self.name!r}: a choice offers 2-26 options")
        if any(not option.strip() for option in self.options):
            raise ValueError(f"question {self.name!r}: an option name is empty")

    def describe(self) -> dict[str, Any]:
        """Return the question as plain JSON (for logs and token estimates)."""
        return {
            "type": self.kind,
            "name": self.name,
            "instructions": self.instructions,
            "options": dict(self.options),
        }


@dataclass(frozen=True)
class Score:
    """Rate on 2–10 ordered levels; the answer is the expected level and the distribution.

    Attributes:
        name: identifier, unique in the request.
        instructions: the question, in plain words.
        levels: what each level means, lowest first; level ``i`` is index ``i``.

    Raises:
        ValueError: a bad name, empty instructions, or fewer than 2 / more than 10 levels.
    """

    kind: ClassVar[str] = "score"
    name: str
    instructions: str
    levels: Sequence[str]

    def __post_init__(self) -> None:
        _check_common(self.name, self.instructions)
        object.__setattr__(self, "levels", tuple(self.levels))
        if not 2 <= len(self.levels) <= 10:
            raise ValueError(f"question {self.name!r}: a score has 2-10 levels")

    def describe(self) -> dict[str, Any]:
        """Return the question as plain JSON (for logs and token estimates)."""
        return {
            "type": self.kind,
            "name": self.name,
            "instructions": self.instructions,
            "levels": list(self.levels),
        }


Question = YesNo | Choice | Score


def check_questions(questions: Sequence[Question]) -> None:
    """Check that question names are unique.

    Raises:
        ValueError: two questions share a name.
    """
    seen: set[str] = set()
    for question in questions:
        if question.name in seen:
            raise ValueError(f"two questions are named {question.name!r}")
        seen.add(question.name)


class NoAnswerReason(StrEnum):
    """Why a question has no valid answer."""

    REFUSED = "refused"
    INVALID = "invalid"
    MISSING = "missing"
    TIMEOUT = "timeout"
    OVER_BUDGET = "over_budget"
    HTTP_ERROR = "http_error"
    NO_LOGPROBS = "no_logprobs"
    UNRELIABLE = "unreliable"
    DISABLED = "disabled"


@dataclass(frozen=True)
class NoAnswer:
    """No valid answer: the reason and one line of detail (safe to show)."""

    reason: NoAnswerReason
    detail: str = ""

    def __str__(self) -> str:
        return f"{self.reason}: {self.detail}" if self.detail else str(self.reason)


@dataclass(frozen=True)
class YesNoAnswer:
    """The probability of yes, in [0, 1]."""

    probability: float


@dataclass(frozen=True)
class ChoiceAnswer:
    """The chosen option, the probability of every offered option, and a confidence.

    ``confidence`` is in [0, 1]: the backend's own when it sends one, else
    ``(n × peak − 1) / (n − 1)`` over the n options (1: all mass on one, 0: flat).
    """

    choice: str
    probabilities: Mapping[str, float]
    confidence: float


@dataclass(frozen=True)
class ScoreAnswer:
    """The expected level (0 = lowest), the probability of each level, and a confidence."""

    expected: float
    probabilities: tuple[float, ...]
    confidence: float

    @property
    def most_likely(self) -> int:
        """The level of greatest probability (the lowest such level on a tie)."""
        return max(range(len(self.probabilities)), key=lambda i: (self.probabilities[i], -i))


Answer = YesNoAnswer | ChoiceAnswer | ScoreAnswer | NoAnswer


class InvalidAnswer(ValueError):
    """An answer broke a validation rule; the message says which."""


def probability(value: Any, what: str) -> float:
    """Return ``value`` as a probability.

    Raises:
        InvalidAnswer: not a real number (booleans are not), not finite, or outside [0, 1].
    """
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InvalidAnswer(f"{what} is not a number: {value!r}"[:200])
    if not math.isfinite(value) or not 0.0 <= value <= 1.0:
        raise InvalidAnswer(f"{what} is {value!r}, outside [0, 1]")
    return float(value)


def distribution(pairs: Iterable[tuple[Any, Any]], offered: Sequence[str]) -> dict[str, float]:
    """Return ``{option: probability}`` in the order offered, after every check.

    Args:
        pairs: (key, probability) as the backend sent them.
        offered: the options asked about; keys must equal this set exactly.

    Raises:
        InvalidAnswer: a repeated, missing or extra key, a bad probability, or
            a sum outside 1 ± ``SUM_TOLERANCE``.
    """
    found: dict[str, float] = {}
    for key, value in pairs:
        if not isinstance(key, str) or key not in offered:
            raise InvalidAnswer(f"unexpected option {key!r}"[:200])
        if key in found:
            raise InvalidAnswer(f"option {key!r} appears twice")
        found[key] = probability(value, f"probability of {key!r}")
    missing = [o for o in offered if o not in found]
    if missing:
        raise InvalidAnswer(f"no probability for {', '.join(map(repr, missing))} (missing ≠ zero)")
    total = sum(found.values())
    if abs(total - 1.0) > SUM_TOLERANCE:
        raise InvalidAnswer(f"probabilities sum to {total:.4g}, not 1 ± {SUM_TOLERANCE}")
    return {o: found[o] for o in offered}


def flat_confidence(probabilities: Sequence[float]) -> float:
    """Return ``(n × peak − 1) / (n − 1)``, clipped to [0, 1]."""
    n = len(probabilities)
    return min(1.0, max(0.0, (n * max(probabilities) - 1) / (n - 1)))


def _confidence(value: Any, probabilities: Sequence[float]) -> float:
    if value is None:
        return flat_confidence(probabilities)
    return probability(value, "confidence")


def choice_answer(
    question: Choice, choice: Any, pairs: Iterable[tuple[Any, Any]], confidence: Any = None
) -> ChoiceAnswer:
    """Validate a choice answer (see the module's rules).

    Raises:
        InvalidAnswer: a rule is broken, or ``choice`` is not an option of greatest probability.
    """
    probs = distribution(pairs, list(question.options))
    peak = max(probs.values())
    if not isinstance(choice, str) or choice not in probs:
        raise InvalidAnswer(f"choice {choice!r} is not an offered option"[:200])
    if probs[choice] < peak - 1e-9:
        raise InvalidAnswer(f"choice {choice!r} is not the most probable option")
    return ChoiceAnswer(choice, probs, _confidence(confidence, list(probs.values())))


def score_answer(
    question: Score, pairs: Iterable[tuple[Any, Any]], expected: Any = None, confidence: Any = None
) -> ScoreAnswer:
    """Validate a score answer whose keys are level indexes as strings (``"0"``…).

    Raises:
        InvalidAnswer: a rule is broken, or ``expected`` (when given) is not the
            distribution's expected level.
    """
    levels = [str(i) for i in range(len(question.levels))]
    probs = list(distribution(pairs, levels).values())
    mean = sum(i * p for i, p in enumerate(probs))
    if expected is not None:
        if isinstance(expected, bool) or not isinstance(expected, int | float):
            raise InvalidAnswer(f"score {expected!r} is not a number"[:200])
        if abs(expected - mean) > SUM_TOLERANCE * (len(probs) - 1) + 1e-9:
            raise InvalidAnswer(f"score {expected!r} is not the expected level {mean:.4g}")
    return ScoreAnswer(mean, tuple(probs), _confidence(confidence, probs))


def validated(build: Callable[[], Answer]) -> Answer:
    """Return ``build()``, or ``NoAnswer(invalid)`` when it raises ``InvalidAnswer``."""
    try:
        return build()
    except InvalidAnswer as exc:
        return NoAnswer(NoAnswerReason.INVALID, str(exc))
