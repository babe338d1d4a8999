"""``lookout eval``: run a suite's cases K times through the real run path and score them.

Each case's data is built into its own DuckDB file (``checks.eval.suite``) and
exposed as the source ``case``; every run then goes through the run lifecycle
(``checks.run_lifecycle.run_and_store``, without a store) with the configured
LLM and decision backends, each with its own source pool and so a fresh agent.
Whatever that path does is what is measured: with no LLM configured, cases with declared checks are
decided by the checks and goal-only cases come back ``skipped`` (reported as
skipped, not wrong).

Runs execute concurrently on at most ``concurrency`` threads. A run that
raises (a bug in the run path, which never raises on purpose) is recorded as
a run in ``error`` with the exception's text, so one crash does not hide the
rest of the measurement.
"""

from __future__ import annotations

import datetime as dt
import importlib.resources
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from checks.errors import ConfigError
from checks.eval import DEFAULT_CONCURRENCY as DEFAULT_CONCURRENCY
from checks.eval import DEFAULT_PLOT as DEFAULT_PLOT
from checks.eval.scoring import Expected, RunOutcome, Scorecard, score_runs

if TYPE_CHECKING:
    from checks.automation.model import Automation
    from checks.eval.suite import Case, Suite
    from checks.report import RunReport
    from checks.settings.config import Settings

Progress = Callable[[RunOutcome, int, int], None]
"""Called after each run with the outcome, the number of runs done and the total."""


def default_suite_path() -> Path:
    """The shipped suite, ``checks/eval/cases/default.yaml`` (package data)."""
    return Path(str(importlib.resources.files("checks.eval").joinpath("cases/default.yaml")))


@dataclass
class EvalResult:
    """A finished eval: what ran, every run's outcome, and the scores.

    Attributes:
        suite: the suite file's path and name.
        runs_per_case: K.
        llm_model: the configured LLM model, or None (no LLM: checks decide).
        decision_backend: the configured decision backend (``none`` when off).
        outcomes: one per run, ordered by case (suite order) then run index.
        scorecard: per-case and overall scores.
        elapsed_s: wall time of all runs, in seconds.
    """

    suite_path: str
    suite_name: str
    runs_per_case: int
    llm_model: str | None
    decision_backend: str
    outcomes: list[RunOutcome]
    scorecard: Scorecard
    elapsed_s: float

    def to_dict(self) -> dict[str, Any]:
        """Return the ``lookout eval --json`` document (without ``plot``, added by the CLI)."""
        return {
            "suite": {"path": self.suite_path, "name": self.suite_name},
            "runs_per_case": self.runs_per_case,
            "llm_model": self.llm_model,
            "decision_backend": self.decision_backend,
            "elapsed_s": round(self.elapsed_s, 3),
            **self.scorecard.to_dict(),
            "runs": [asdict(o) for o in self.outcomes],
        }


def expected_answers(cases: list[Case]) -> dict[str, Expected]:
    """Return case id → its right answers, in suite order."""
    return {
        c.id: Expected(c.answer.finding, c.answer.goal_met_label, c.answer.urgency) for c in cases
    }


def run_eval(
    suite: Suite,
    settings: Settings,
    *,
    runs: int = 1,
    case_ids: list[str] | None = None,
    concurrency: int = DEFAULT_CONCURRENCY,
    progress: Progress | None = None,
) -> EvalResult:
    """Run the chosen cases ``runs`` times each and score every run.

    Args:
        suite: the loaded suite.
        settings: the LLM, decision backend, limits and ``cache_dir`` (case
            databases are built under ``<cache_dir>/eval/``); its sources are
            replaced by each case's ``case`` source.
        runs: K, runs per case (at least 1).
        case_ids: only these cases (default: all).
        concurrency: most runs at once (at least 1).
        progress: called after each run.

    Raises:
        ConfigError: an unknown case id, or ``runs``/``concurrency`` below 1.
        SuiteError: a case's data cannot be built (bad row or setup script).
    """
    from checks.eval.case_data import build_database, case_settings  # DuckDB: only when run

    if runs < 1 or concurrency < 1:
        raise ConfigError("--runs and --concurrency must be at least 1")
    cases = suite.select(case_ids)
    per_case = {c.id: case_settings(settings, build_database(c, settings.cache_dir)) for c in cases}
    jobs = [(case, k) for case in cases for k in range(1, runs + 1)]
    outcomes: list[RunOutcome] = []
    started = time.monotonic()
    with ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="eval") as pool:
        futures = [
            pool.submit(run_case_once, case.automation, per_case[case.id], k, case.at)
            for case, k in jobs
        ]
        for done, future in enumerate(as_completed(futures), start=1):
            outcome = future.result()
            outcomes.append(outcome)
            if progress is not None:
                progress(outcome, done, len(jobs))
    order = {c.id: i for i, c in enumerate(cases)}
    outcomes.sort(key=lambda o: (order[o.case_id], o.run))
    expected = expected_answers(cases)
    return EvalResult(
        suite_path=suite.path,
        suite_name=suite.name,
        runs_per_case=runs,
        llm_model=settings.llm.model if settings.llm.base_url else None,
        decision_backend=settings.decision.backend,
        outcomes=outcomes,
        scorecard=score_runs(expected, outcomes, threshold=settings.decision.threshold),
        elapsed_s=time.monotonic() - started,
    )


def run_case_once(
    automation: Automation, settings: Settings, run: int, at: dt.datetime | None = None
) -> RunOutcome:
    """Run one case once through the run lifecycle, unstored, with a source pool of its own.

    ``at`` is the run's slot time (a case's ``at:``); None: now. No store:
    an eval's runs are measured, never kept (``checks.run_lifecycle``).
    """
    from checks.run import SourcePool  # the run path: only when run
    from checks.run_lifecycle import run_and_store

    started = time.monotonic()
    try:
        with SourcePool(settings) as sources:
            report = run_and_store(
                automation, settings, sources, None, scheduled_for=at, trigger="eval"
            )
    except Exception as exc:  # the run path never raises on purpose: record, don't stop
        return RunOutcome(
            automation.name,
            run,
            "error",
            None,
            duration_s=time.monotonic() - started,
            error=f"internal error: {type(exc).__name__}: {exc}",
        )
    return outcome_from_report(automation.name, run, report, time.monotonic() - started)


def outcome_from_report(case_id: str, run: int, report: RunReport, duration_s: float) -> RunOutcome:
    """Reduce a run's report to what is scored.

    The agent's counters come from ``report.agent`` (``{model, steps,
    tool_calls, input_tokens, output_tokens, cost_usd, error, …}``); the
    decision model's answers from ``report.second_opinion`` (``{backend,
    goal_met, urgency, input_tokens, output_tokens, cost_usd, error, …}``;
    ``goal_met`` a probability, or a mapping holding one; ``urgency`` an
    option name, or a mapping with ``choice``).
    """
    agent = report.agent or {}
    opinion = report.second_opinion or {}
    cost = agent.get("cost_usd")
    opinion_cost = opinion.get("cost_usd", 0.0)
    return RunOutcome(
        case_id=case_id,
        run=run,
        status=str(report.status),
        finding=str(report.finding) if report.finding else None,
        finding_source=str(report.finding_source) if report.finding_source else None,
        agent=report.agent is not None,
        steps=int(agent.get("steps") or 0),
        tool_calls=int(agent.get("tool_calls") or 0),
        input_tokens=int(agent.get("input_tokens") or 0),
        output_tokens=int(agent.get("output_tokens") or 0),
        cost_usd=float(cost) if isinstance(cost, int | float) else None,
        p_goal_met=probability_of_yes(opinion.get("goal_met")),
        urgency=urgency_choice(opinion.get("urgency")),
        decision_input_tokens=int(opinion.get("input_tokens") or 0),
        decision_output_tokens=int(opinion.get("output_tokens") or 0),
        decision_cost_usd=float(opinion_cost) if isinstance(opinion_cost, int | float) else None,
        duration_s=round(duration_s, 3),
        error=report.error,
    )


_PROBABILITY_KEYS = ("probability", "p_yes", "noul", "p", "yes")


def probability_of_yes(answer: Any) -> float | None:
    """Read a yes/no answer as the probability of yes, or None when there is none.

    Accepts a number, or a mapping holding it under ``probability``, ``p_yes``,
    ``noul``, ``p`` or ``yes``. Booleans, values outside [0, 1] and anything
    else are None: never a guess.
    """
    if isinstance(answer, Mapping):
        for key in _PROBABILITY_KEYS:
            if key in answer:
                return probability_of_yes(answer[key])
        return None
    if isinstance(answer, bool) or not isinstance(answer, int | float):
        return None
    return float(answer) if 0.0 <= answer <= 1.0 else None


def urgency_choice(answer: Any) -> str | None:
    """Read an urgency answer as an option name like ``act_soon``, or None.

    Accepts a string or a mapping with ``choice``; case, spaces and hyphens
    are normalised (``"Act soon"`` → ``act_soon``).
    """
    if isinstance(answer, Mapping):
        answer = answer.get("choice")
    if not isinstance(answer, str) or not answer.strip():
        return None
    return "_".join(answer.strip().lower().replace("-", " ").split())
