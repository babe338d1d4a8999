"""Scoring an eval: finding accuracy, cost, agreement, and the decision model's calibration.

Pure functions over ``RunOutcome`` (one run of one case, as ``checks.eval.runner``
records it) and ``Expected`` (the case's right answers); nothing here runs
anything.

- **Finding accuracy**: a run is *scored* unless it was skipped (a goal-only
  case with no LLM configured: not run, so neither right nor wrong). A scored
  run is right when its finding equals the expected one; a run in error with
  no finding is wrong.
- **Agreement**: among cases with at least two scored runs, the share whose
  findings (a run in error with no finding counts as the value ``error``) are
  all equal.
- **Decision model**: over every run whose second opinion gave a probability
  ``p`` that the goal is met, against the true label ``y`` (the case's
  ``goal_met``, else ``finding == clear``): accuracy of ``p >= threshold``,
  the Brier score and the expected calibration error over 10 equal-width bins
  (``brier_score``, ``calibration_bins``, ``expected_calibration_error``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from statistics import fmean
from typing import Any

BINS = 10


@dataclass(frozen=True)
class Expected:
    """A case's right answers: the finding, the goal-met label and (optionally) the urgency."""

    finding: str
    goal_met: bool
    urgency: str | None = None


@dataclass(frozen=True)
class RunOutcome:
    """One run of one case, reduced to what is scored.

    Attributes:
        case_id: the case.
        run: 1-based index of the run among the case's K runs.
        status: ``completed``, ``error`` or ``skipped``.
        finding: ``clear``, ``needs_attention`` or None.
        finding_source: ``checks``, ``agent``, ``override`` or None.
        agent: whether the agent ran (the report had ``agent`` counters).
        steps, tool_calls, input_tokens, output_tokens: the agent's counters (0 without it).
        cost_usd: the agent's cost in USD; None when unknown or when it did not run.
        p_goal_met: the decision model's probability that the goal is met, or None.
        urgency: the decision model's urgency choice, or None.
        decision_input_tokens, decision_output_tokens: what the decision model
            reported for this run's second opinion (0 without one).
        decision_cost_usd: the second opinion's cost in USD, or None when unknown.
        duration_s: wall time of the run in seconds.
        error: the run's error, or None.
    """

    case_id: str
    run: int
    status: str
    finding: str | None
    finding_source: str | None = None
    agent: bool = False
    steps: int = 0
    tool_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = None
    p_goal_met: float | None = None
    urgency: str | None = None
    decision_input_tokens: int = 0
    decision_output_tokens: int = 0
    decision_cost_usd: float | None = 0.0
    duration_s: float = 0.0
    error: str | None = None

    @property
    def scored(self) -> bool:
        """Whether the run counts toward accuracy (everything but ``skipped``)."""
        return self.status != "skipped"

    @property
    def label(self) -> str:
        """The finding, or the status when there is none (``error``, ``skipped``)."""
        return self.finding or self.status


@dataclass(frozen=True)
class CalibrationBin:
    """One bin of the reliability diagram.

    Attributes:
        low, high: the bin's bounds; it holds ``low <= p < high`` (the last bin
            also holds ``p == 1``).
        count: answers in the bin.
        mean_p: mean predicted probability in the bin (None when empty).
        frequency: share of true labels in the bin (None when empty).
    """

    low: float
    high: float
    count: int
    mean_p: float | None
    frequency: float | None


def _check_pairs(probabilities: Sequence[float], labels: Sequence[bool]) -> None:
    if len(probabilities) != len(labels):
        raise ValueError(f"{len(probabilities)} probabilities but {len(labels)} labels")
    for p in probabilities:
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"probability {p!r} is outside [0, 1]")


def brier_score(probabilities: Sequence[float], labels: Sequence[bool]) -> float | None:
    """Return the Brier score, ``mean((p_i - y_i)^2)``, with ``y_i`` 1 for true, 0 for false.

    0 is perfect; always answering 0.5 scores 0.25. Source: G. W. Brier,
    "Verification of forecasts expressed in terms of probability", Monthly
    Weather Review 78(1), 1950 (the two-class score halved to one class).

    Returns:
        The score, or None when there are no answers.

    Raises:
        ValueError: the sequences differ in length or a probability is outside [0, 1].
    """
    _check_pairs(probabilities, labels)
    if not probabilities:
        return None
    return fmean((p - float(y)) ** 2 for p, y in zip(probabilities, labels, strict=True))


def calibration_bins(
    probabilities: Sequence[float], labels: Sequence[bool], bins: int = BINS
) -> list[CalibrationBin]:
    """Split answers into ``bins`` equal-width bins over [0, 1] by predicted probability.

    Bin ``i`` holds ``i/bins <= p < (i+1)/bins``; ``p == 1`` goes in the last.
    Every bin is returned, empty ones with ``count`` 0.

    Raises:
        ValueError: as ``brier_score``, or ``bins`` < 1.
    """
    _check_pairs(probabilities, labels)
    if bins < 1:
        raise ValueError("bins must be at least 1")
    members: list[list[tuple[float, bool]]] = [[] for _ in range(bins)]
    for p, y in zip(probabilities, labels, strict=True):
        members[min(int(p * bins), bins - 1)].append((p, y))
    result = []
    for index, items in enumerate(members):
        mean_p = fmean(p for p, _ in items) if items else None
        frequency = fmean(float(y) for _, y in items) if items else None
        result.append(
            CalibrationBin(index / bins, (index + 1) / bins, len(items), mean_p, frequency)
        )
    return result


def expected_calibration_error(
    probabilities: Sequence[float], labels: Sequence[bool], bins: int = BINS
) -> float | None:
    """Return the ECE: ``sum over bins b of (n_b / N) * |frequency_b - mean_p_b|``.

    Equal-width bins as in ``calibration_bins``, each weighted by its share of
    the answers; empty bins add nothing. The probability is that of "yes" and
    the frequency that of true labels, as in M. P. Naeini, G. F. Cooper and M.
    Hauskrecht, "Obtaining Well Calibrated Probabilities Using Bayesian
    Binning", AAAI 2015 (also C. Guo et al., "On Calibration of Modern Neural
    Networks", ICML 2017, eq. 3, for the top-label form).

    Returns:
        The ECE in [0, 1], or None when there are no answers.

    Raises:
        ValueError: as ``calibration_bins``.
    """
    table = calibration_bins(probabilities, labels, bins)
    total = len(probabilities)
    if total == 0:
        return None
    return sum(
        b.count / total * abs(b.frequency - b.mean_p)
        for b in table
        if b.count and b.frequency is not None and b.mean_p is not None
    )


@dataclass
class CaseScore:
    """One case over its K runs (``to_dict`` is its ``--json`` form).

    Means are per agent run (None when the agent never ran); ``cost_usd`` is
    the total over the case's agent runs, None when any cost was unknown.
    """

    case_id: str
    expected: str
    runs: int
    scored: int
    skipped: int
    errors: int
    correct: int
    accuracy: float | None
    findings: list[str]
    agree: bool | None
    finding_sources: list[str]
    agent_runs: int
    steps_mean: float | None
    tool_calls_mean: float | None
    input_tokens_mean: float | None
    output_tokens_mean: float | None
    cost_usd: float | None
    p_goal_met: list[float]

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON-safe fields."""
        return asdict(self)


@dataclass
class DecisionScore:
    """The decision model's "goal met?" answers against the true labels, and what it cost.

    ``input_tokens``, ``output_tokens`` and ``cost_usd`` are summed over every
    run; ``cost_usd`` is None when any run's cost was unknown.
    """

    answers: int
    runs_without_answer: int
    threshold: float
    accuracy: float | None
    brier: float | None
    ece: float | None
    bins: list[CalibrationBin] = field(default_factory=list)
    urgency_answers: int = 0
    urgency_accuracy: float | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = 0.0

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON-safe fields (bins as a list of mappings)."""
        return asdict(self)


@dataclass
class Scorecard:
    """Everything ``lookout eval`` reports, per case and overall."""

    cases: list[CaseScore]
    overall: dict[str, Any]
    decision: DecisionScore

    def to_dict(self) -> dict[str, Any]:
        """Return ``{overall, decision, cases}``, JSON-safe."""
        return {
            "overall": self.overall,
            "decision": self.decision.to_dict(),
            "cases": [c.to_dict() for c in self.cases],
        }


def _mean(values: list[int]) -> float | None:
    return fmean(values) if values else None


def _ratio(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def score_case(case_id: str, expected: Expected, outcomes: Sequence[RunOutcome]) -> CaseScore:
    """Score one case's runs (any order; reported by run index)."""
    runs = sorted(outcomes, key=lambda o: o.run)
    scored = [o for o in runs if o.scored]
    correct = sum(1 for o in scored if o.finding == expected.finding)
    agent = [o for o in runs if o.agent]
    costs = [o.cost_usd for o in agent]
    known_costs = [c for c in costs if c is not None]
    return CaseScore(
        case_id=case_id,
        expected=expected.finding,
        runs=len(runs),
        scored=len(scored),
        skipped=len(runs) - len(scored),
        errors=sum(1 for o in runs if o.status == "error"),
        correct=correct,
        accuracy=_ratio(correct, len(scored)),
        findings=[o.label for o in runs],
        agree=len({o.label for o in scored}) == 1 if len(scored) >= 2 else None,
        finding_sources=sorted({o.finding_source for o in runs if o.finding_source}),
        agent_runs=len(agent),
        steps_mean=_mean([o.steps for o in agent]),
        tool_calls_mean=_mean([o.tool_calls for o in agent]),
        input_tokens_mean=_mean([o.input_tokens for o in agent]),
        output_tokens_mean=_mean([o.output_tokens for o in agent]),
        cost_usd=sum(known_costs) if agent and len(known_costs) == len(costs) else None,
        p_goal_met=[o.p_goal_met for o in runs if o.p_goal_met is not None],
    )


def score_decisions(
    expected: dict[str, Expected], outcomes: Sequence[RunOutcome], *, threshold: float = 0.5
) -> DecisionScore:
    """Score the decision model over every run that has a "goal met?" probability.

    A probability ``p >= threshold`` answers yes. Urgency is scored over runs
    whose case states one and whose second opinion chose one.
    """
    answered = [o for o in outcomes if o.p_goal_met is not None]
    probabilities = [float(o.p_goal_met) for o in answered if o.p_goal_met is not None]
    labels = [expected[o.case_id].goal_met for o in answered]
    hits = sum(1 for p, y in zip(probabilities, labels, strict=True) if (p >= threshold) == y)
    urgent = [o for o in outcomes if o.urgency and expected[o.case_id].urgency]
    urgency_hits = sum(1 for o in urgent if o.urgency == expected[o.case_id].urgency)
    costs = [o.decision_cost_usd for o in outcomes]
    return DecisionScore(
        answers=len(answered),
        runs_without_answer=sum(1 for o in outcomes if o.scored and o.p_goal_met is None),
        threshold=threshold,
        accuracy=_ratio(hits, len(answered)),
        brier=brier_score(probabilities, labels),
        ece=expected_calibration_error(probabilities, labels),
        bins=calibration_bins(probabilities, labels),
        urgency_answers=len(urgent),
        urgency_accuracy=_ratio(urgency_hits, len(urgent)),
        input_tokens=sum(o.decision_input_tokens for o in outcomes),
        output_tokens=sum(o.decision_output_tokens for o in outcomes),
        cost_usd=None if None in costs else sum(c for c in costs if c is not None),
    )


def score_runs(
    expected: dict[str, Expected], outcomes: Sequence[RunOutcome], *, threshold: float = 0.5
) -> Scorecard:
    """Score every run: per case (in ``expected``'s order), overall, and the decision model.

    Args:
        expected: case id → right answers, for every case that ran.
        outcomes: every run of those cases.
        threshold: the decision model's yes/no threshold (``decision.threshold``).

    Raises:
        KeyError: an outcome names a case missing from ``expected``.
    """
    by_case: dict[str, list[RunOutcome]] = {case_id: [] for case_id in expected}
    for outcome in outcomes:
        by_case[outcome.case_id].append(outcome)
    cases = [score_case(cid, expected[cid], runs) for cid, runs in by_case.items()]
    scored = sum(c.scored for c in cases)
    correct = sum(c.correct for c in cases)
    compared = [c for c in cases if c.agree is not None]
    agent = [o for o in outcomes if o.agent]
    costs = [o.cost_usd for o in agent]
    sources: dict[str, dict[str, int]] = {}
    for o in outcomes:
        if o.scored:
            tally = sources.setdefault(o.finding_source or "none", {"runs": 0, "correct": 0})
            tally["runs"] += 1
            tally["correct"] += int(o.finding == expected[o.case_id].finding)
    overall = {
        "cases": len(cases),
        "runs": len(outcomes),
        "scored": scored,
        "skipped": sum(c.skipped for c in cases),
        "errors": sum(c.errors for c in cases),
        "correct": correct,
        "accuracy": _ratio(correct, scored),
        "by_finding_source": sources,
        "agreement": {
            "cases_compared": len(compared),
            "cases_agreeing": sum(1 for c in compared if c.agree),
            "rate": _ratio(sum(1 for c in compared if c.agree), len(compared)),
        },
        "agent": {
            "runs": len(agent),
            "steps": sum(o.steps for o in agent),
            "tool_calls": sum(o.tool_calls for o in agent),
            "input_tokens": sum(o.input_tokens for o in agent),
            "output_tokens": sum(o.output_tokens for o in agent),
            "cost_usd": sum(c for c in costs if c is not None)
            if agent and None not in costs
            else None,
        },
    }
    return Scorecard(cases, overall, score_decisions(expected, outcomes, threshold=threshold))
