"""The second opinion of a run: a decision model judges the finished report.

One request, up to three questions about one state:

- ``goal_met`` (yes/no): do the evidence query results show the automation's
  goal is met, given its instructions and the exceptions they allow;
- ``same_as_last_run`` (yes/no): is the result the same as the previous
  completed run's — asked only when there is a previous run;
- ``urgency`` (choice): ``nothing_to_do``, ``worth_a_look``, ``act_soon``, ``act_now``.

The state (``checks.opinion.opinion_state``) holds the goal, the instructions, each run's
finding, summary, declared checks (outcome, value, reason and counts such as
``rows_in_scope``) and evidence query results — never raw tables — bounded
by ``StateLimits`` (rows, cell, SQL and total characters; whatever is cut is
listed under ``left_out``), fenced and labelled as untrusted
(``checks.opinion.decision_model.untrusted_state``).

Flags (``Flag``):

- ``double_check_disagrees``: P(goal met) is on the other side of the
  threshold from the finding — a Clear run with P < threshold, or a Needs
  attention run with P ≥ threshold;
- ``changed_since_last_run``: the finding differs from the previous run's,
  or P(same as last run) < threshold.

Once ``lookout calibrate`` has fitted a recalibration of this decision model
on ops' verdicts (``checks.opinion.calibration``), the mapped probabilities
are kept beside the raw ones (``calibrated``: "calibrated on 57 reviews") and
``double_check_disagrees`` is judged on the calibrated P(goal met); the raw
answers are always kept, and nothing is ever filtered out on a probability.

The deterministic ``EvidenceDiff`` (evidence matched by its SQL's normal
form: added, removed, changed fingerprint, and row by row which rows are new
and gone, ``checks.opinion.row_diff``) is always computed and shown beside
the flags; it does not set them. The decision model is given the row changes
as computed (``rows_since_last_run`` in the state): it judges them, it never
counts. With backend ``none``, no finding, or no
valid answer, only the finding comparison can set ``changed_since_last_run``
and ``error`` says why there is no (full) second opinion. The answers never
change the finding.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from checks.opinion.calibration import Recalibration, calibrated_answers
from checks.opinion.decision_model import (
    Answers,
    Backend,
    Choice,
    ChoiceAnswer,
    DecisionModel,
    NoAnswer,
    Question,
    YesNo,
    YesNoAnswer,
)
from checks.opinion.evidence_diff import EvidenceDiff, diff_evidence
from checks.opinion.opinion_state import StateLimits, opinion_state
from checks.opinion.row_diff import PreviousRows
from checks.report import Finding, RunReport

DEFAULT_LIMITS = StateLimits()
"""The state's bounds unless a caller gives its own (``StateLimits``' defaults)."""


class Urgency(StrEnum):
    """How soon someone should act on a run's result, as the decision model judges it."""

    NOTHING_TO_DO = "nothing_to_do"
    WORTH_A_LOOK = "worth_a_look"
    ACT_SOON = "act_soon"
    ACT_NOW = "act_now"


URGENCY_MEANINGS: dict[Urgency, str] = {
    Urgency.NOTHING_TO_DO: "the results need no action",
    Urgency.WORTH_A_LOOK: "someone should look when convenient",
    Urgency.ACT_SOON: "someone should act within the day",
    Urgency.ACT_NOW: "someone should act immediately: data is wrong or missing now",
}


class Flag(StrEnum):
    """A flag the second opinion sets beside the finding (``lookout reports --flag``)."""

    DOUBLE_CHECK_DISAGREES = "double_check_disagrees"
    CHANGED_SINCE_LAST_RUN = "changed_since_last_run"


def opinion_questions(first_run: bool) -> list[Question]:
    """Return the questions of one second opinion (no ``same_as_last_run`` on a first run)."""
    questions: list[Question] = [
        YesNo(
            "goal_met",
            "Do this run's evidence query results show that the automation's goal is met, "
            "given its instructions and the exceptions they allow? Judge the results, not "
            "the summary's claims.",
            {
                "true": "the results show the goal is met: nothing needs attention",
                "false": "the results show the goal is not met, or something needs attention",
            },
        )
    ]
    if not first_run:
        questions.append(
            YesNo(
                "same_as_last_run",
                "Is this run's result the same as the previous run's: the same finding and, "
                "in substance, the same evidence results?",
                {
                    "true": "the same outcome with the same problems (or none) as last time",
                    "false": "the outcome, or the problems the results show, differ from last time",
                },
            )
        )
    questions.append(
        Choice(
            "urgency",
            "How urgently should the data team act on this run's result?",
            {str(u): meaning for u, meaning in URGENCY_MEANINGS.items()},
        )
    )
    return questions


@dataclass
class SecondOpinion:
    """The decision model's opinion of one run, and the flags it sets.

    Attributes:
        backend: the decision backend asked (``none`` when none is configured).
        model: the decision model's name, or None.
        goal_met: P(the goal is met), or None without a valid answer (raw, as answered).
        same_as_last_run: P(same result as the previous run), or None (first
            run, or no valid answer).
        urgency: the most probable urgency, or None.
        urgency_probabilities: probability of every urgency, or None.
        flags: the flags set, in ``Flag`` order.
        calibrated: ``{question: {p, raw, reviews, method, fitted_at}}`` for the answers a
            recalibration covers (``checks.opinion.calibration.calibrated_answers``).
        evidence_diff: the deterministic evidence diff against the previous run.
        error: why there is no (full) second opinion, or None.
        input_tokens: input tokens the backend reported.
        output_tokens: output tokens the backend reported.
        cost_usd: cost in USD; None when unknown.
    """

    backend: str
    evidence_diff: EvidenceDiff
    model: str | None = None
    goal_met: float | None = None
    same_as_last_run: float | None = None
    urgency: Urgency | None = None
    urgency_probabilities: dict[str, float] | None = None
    flags: list[Flag] = field(default_factory=list)
    calibrated: dict[str, dict[str, Any]] = field(default_factory=dict)
    error: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = 0.0

    def to_dict(self) -> dict[str, Any]:
        """Return the ``second_opinion`` object of ``lookout run --json``."""
        return {
            "backend": self.backend,
            "model": self.model,
            "goal_met": self.goal_met,
            "same_as_last_run": self.same_as_last_run,
            "urgency": str(self.urgency) if self.urgency else None,
            "urgency_probabilities": self.urgency_probabilities,
            "flags": [str(f) for f in self.flags],
            "calibrated": self.calibrated,
            "evidence_diff": self.evidence_diff.to_dict(),
            "error": self.error,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cost_usd": self.cost_usd,
        }


@dataclass(frozen=True)
class StoredOpinion:
    """What the list, incidents and alerts read from a stored ``second_opinion``.

    Attributes:
        urgency: one of ``Urgency``'s values, or None.
        flags: ``Flag`` values set.
        goal_met: P(goal met), or None.
    """

    urgency: str | None = None
    flags: tuple[str, ...] = ()
    goal_met: float | None = None


def read_opinion(opinion: Any) -> StoredOpinion:
    """Read a stored ``second_opinion`` (``SecondOpinion.to_dict``), leniently.

    Accepts ``urgency`` as a string or ``{"choice": …}``, and ``flags`` as a
    list of names or a mapping of name -> bool (older shapes). Anything else,
    or an unknown urgency, reads as absent.
    """
    data = opinion if isinstance(opinion, dict) else {}
    urgency: Any = data.get("urgency")
    if isinstance(urgency, dict):
        urgency = urgency.get("choice") or urgency.get("value")
    raw_flags: Any = data.get("flags") or []
    if isinstance(raw_flags, dict):
        raw_flags = [name for name, on in raw_flags.items() if on]
    goal_met = data.get("goal_met")
    return StoredOpinion(
        urgency=urgency if urgency in {u.value for u in Urgency} else None,
        flags=tuple(f for f in raw_flags if isinstance(f, str)),
        goal_met=float(goal_met)
        if isinstance(goal_met, int | float) and not isinstance(goal_met, bool)
        else None,
    )


def _explain(missing: dict[str, NoAnswer]) -> str:
    reasons = {str(a) for a in missing.values()}
    if len(reasons) == 1:
        return f"no second opinion on {', '.join(missing)}: {reasons.pop()}"
    parts = "; ".join(f"{name} ({answer})" for name, answer in missing.items())
    return f"no second opinion on {parts}"


def _read(opinion: SecondOpinion, answers: Answers) -> None:
    goal = answers.by_name.get("goal_met")
    if isinstance(goal, YesNoAnswer):
        opinion.goal_met = goal.probability
    same = answers.by_name.get("same_as_last_run")
    if isinstance(same, YesNoAnswer):
        opinion.same_as_last_run = same.probability
    urgency = answers.by_name.get("urgency")
    if isinstance(urgency, ChoiceAnswer):
        opinion.urgency = Urgency(urgency.choice)
        opinion.urgency_probabilities = dict(urgency.probabilities)
    opinion.input_tokens = answers.input_tokens
    opinion.output_tokens = answers.output_tokens
    opinion.cost_usd = answers.cost_usd
    missing = answers.unanswered()
    opinion.error = _explain(missing) if missing else None


def second_opinion(
    report: RunReport,
    previous: RunReport | None,
    goal: str,
    instructions: str | None,
    model: DecisionModel,
    threshold: float,
    *,
    limits: StateLimits = DEFAULT_LIMITS,
    recalibrations: Sequence[Recalibration] = (),
    previous_rows: Mapping[str, PreviousRows] | None = None,
) -> SecondOpinion:
    """Ask the decision model about a finished run; return its opinion and flags.

    Never raises for the backend's failures (they become ``error``) and never
    changes ``report``.

    Args:
        report: the run just finished; asked about only when it has a finding.
        previous: the automation's previous *completed* run (with evidence), or
            None on a first run.
        goal: the automation's goal.
        instructions: the automation's instructions and exceptions, if any.
        model: the decision model (``NoDecisionModel`` for backend ``none``).
        threshold: probability at or above which an answer counts as yes.
        limits: bounds of the state.
        recalibrations: the current recalibrations of this decision model (the
            store's ``checks.store.review_reads.current_recalibrations``).
        previous_rows: each query's row record in its own newest completed
            run, by query key (``Store.previous_rows``): the diff's ``rows``.
    """
    diff = diff_evidence(
        report.evidence,
        previous.evidence if previous else None,
        previous_run_id=previous.run_id if previous else None,
        previous_rows=previous_rows,
    )
    opinion = SecondOpinion(backend=str(model.backend), evidence_diff=diff, model=model.model)
    if model.backend is Backend.NONE:
        opinion.error = (
            "no second opinion: no decision model is configured (decision.backend: none)"
        )
    elif report.finding is None:
        opinion.error = f"no second opinion: the run has no finding (status {report.status})"
    else:
        state = opinion_state(report, previous, goal, instructions, limits, row_changes=diff.rows)
        _read(opinion, model.ask(state, opinion_questions(first_run=previous is None)))
    opinion.calibrated = calibrated_answers(opinion.to_dict(), recalibrations)
    goal_met = opinion.calibrated.get("goal_met", {}).get("p", opinion.goal_met)
    if goal_met is not None and report.finding is not None:
        clear = report.finding == Finding.CLEAR
        if clear != (goal_met >= threshold):
            opinion.flags.append(Flag.DOUBLE_CHECK_DISAGREES)
    if previous is not None and (
        previous.finding != report.finding
        or (opinion.same_as_last_run is not None and opinion.same_as_last_run < threshold)
    ):
        opinion.flags.append(Flag.CHANGED_SINCE_LAST_RUN)
    return opinion
