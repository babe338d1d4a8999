"""The recalibration cases of ``lookout eval``: does recalibrating on ops' verdicts help?

A case (``cases/recalibration.yaml``) is a set of labelled outcomes of a
decision model — rows of [raw probability, runs labelled at it, of which the
event held] — and what recalibrating must achieve: ``expect: lower_ece`` (the
recalibrated answers' ECE below the raw answers'), or ``brier_within: X`` (the
recalibrated Brier score at most X above the raw one). The recalibration is
the one ``lookout calibrate`` fits (``checks.opinion.calibration``), scored
out of sample (``out_of_fold``); Brier and ECE are ``checks.eval.scoring``'s.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from checks.errors import ConfigError
from checks.eval.scoring import brier_score, expected_calibration_error
from checks.eval.suite import SuiteError
from checks.opinion.calibration import out_of_fold

FITTED_AT = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)  # fixed: the cases' result never depends on now


def default_cases_path() -> Path:
    """The shipped recalibration cases."""
    return Path(__file__).parent / "cases" / "recalibration.yaml"


class RecalibrationCase(BaseModel):
    """One case (module docstring)."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    why: str
    question: Literal["goal_met", "act"]
    labelled: list[tuple[float, int, int]] = Field(min_length=1)
    expect: Literal["lower_ece"] | None = None
    brier_within: float | None = Field(default=None, ge=0)

    @model_validator(mode="after")
    def _sound(self) -> RecalibrationCase:
        for p, runs, held in self.labelled:
            if not 0.0 <= p <= 1.0 or runs < 1 or not 0 <= held <= runs:
                raise ValueError(
                    f"row [{p}, {runs}, {held}]: 0 <= p <= 1, runs >= 1, 0 <= held <= runs"
                )
        if (self.expect is None) == (self.brier_within is None):
            raise ValueError("a case says either expect: lower_ece or brier_within: X")
        return self

    def points(self) -> list[tuple[float, bool]]:
        """The labelled answers: (raw probability, whether the event held), row by row."""
        out: list[tuple[float, bool]] = []
        for p, runs, held in self.labelled:
            out += [(p, True)] * held + [(p, False)] * (runs - held)
        return out


@dataclass(frozen=True)
class RecalibrationScore:
    """What one case measured, and whether it met its expectation."""

    case_id: str
    question: str
    answers: int
    ece: float
    calibrated_ece: float
    brier: float
    calibrated_brier: float
    passed: bool
    expectation: str

    def to_dict(self) -> dict[str, Any]:
        """Return the case's entry of ``lookout eval --json``'s ``recalibration``."""
        return asdict(self)


def load_cases(path: str | Path) -> list[RecalibrationCase]:
    """Read recalibration cases from a YAML file (``{cases: [...]}``).

    Raises:
        SuiteError: the file is not YAML, or a case breaks the format (field named).
    """

    def problem(message: str, field: str | None = None) -> SuiteError:
        return SuiteError([ConfigError(message, path=str(path), field=field)])

    try:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as exc:
        raise problem(f"not valid YAML: {exc}") from None
    raw = data.get("cases") if isinstance(data, dict) else None
    if not isinstance(raw, list):
        raise problem("a list of recalibration cases", "cases")
    cases = []
    for index, item in enumerate(raw):
        try:
            cases.append(RecalibrationCase.model_validate(item))
        except ValidationError as exc:
            error = exc.errors()[0]
            where = ".".join(str(p) for p in ("cases", index, *error["loc"]))
            raise problem(error["msg"], where) from None
    return cases


def score_case(case: RecalibrationCase) -> RecalibrationScore:
    """Recalibrate a case's answers out of sample and score them against the raw ones."""
    points = case.points()
    ps, ys = [p for p, _ in points], [y for _, y in points]
    mapped = out_of_fold(points, fitted_at=FITTED_AT)
    ece, calibrated_ece = expected_calibration_error(ps, ys), expected_calibration_error(mapped, ys)
    brier, calibrated_brier = brier_score(ps, ys), brier_score(mapped, ys)
    assert None not in (ece, calibrated_ece, brier, calibrated_brier)  # points is never empty
    if case.expect == "lower_ece":
        passed, expectation = (calibrated_ece or 0) < (ece or 0), "recalibrated ECE below raw"
    else:
        limit = case.brier_within or 0.0
        passed = (calibrated_brier or 0) <= (brier or 0) + limit
        expectation = f"recalibrated Brier at most {limit:g} above raw"
    return RecalibrationScore(
        case.id,
        case.question,
        len(points),
        round(ece or 0, 6),
        round(calibrated_ece or 0, 6),
        round(brier or 0, 6),
        round(calibrated_brier or 0, 6),
        passed,
        expectation,
    )


def run_recalibration_cases(path: str | Path | None = None) -> list[RecalibrationScore]:
    """Score every case of ``path`` (default: the shipped cases).

    Raises:
        SuiteError: as ``load_cases``.
    """
    return [score_case(c) for c in load_cases(path or default_cases_path())]
