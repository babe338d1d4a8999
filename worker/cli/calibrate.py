"""``lookout calibrate``: the command-line edge over ``worker.review.calibrate``.

Scores each decision model on the runs ops labelled on the review page, and
fits the recalibrations the next runs apply. Exit status: 0 when it ran (a
model that scores badly is a result, not an error), 2 for bad settings.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from worker.cli.layout import Column, Grid
from worker.cli.render import SafeConsole
from worker.cli.safe_text import print_hanging

if TYPE_CHECKING:
    from checks.settings.config import Settings
    from worker.review.calibrate import CalibrationReport, ModelReport

# The settings, the store and the calibration are imported inside the command:
# `lookout --help` never loads them.

out = SafeConsole(highlight=False)


def register(app: typer.Typer) -> None:
    """Add ``lookout calibrate`` to ``app``."""
    app.command("calibrate")(calibrate_command)


def _settings(ctx: typer.Context) -> Settings:
    obj: Any = ctx.obj
    from checks.settings.config import load_settings

    return obj.settings() if hasattr(obj, "settings") else load_settings()


def _number(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


_COLUMNS = (
    Column("question", title=True),
    Column("reviews", justify="right"),
    Column("held", justify="right"),
    Column("Brier", justify="right"),
    Column("ECE", justify="right"),
    Column("calibrated Brier / ECE"),
    Column("fit", flex=True),
)


def _model_grid(model: ModelReport) -> Grid:
    """One row per question; laid out for the width (``worker.cli.layout``), never cut."""
    grid = Grid(_COLUMNS)
    for q in model.questions:
        after = (
            f"{_number(q.calibrated_brier)} / {_number(q.calibrated_ece)} (5-fold)"
            if q.calibrated_ece is not None
            else "-"
        )
        fit = "stored" if q.fitted else (q.why_not or "not stored (--no-fit)")
        grid.add_row(
            q.question, str(q.reviews), str(q.held), _number(q.brier), _number(q.ece), after, fit
        )
    return grid


def nothing_to_score(without_opinion: int) -> str:
    """What to do when no labelled run has a second opinion (``without_opinion``: labelled runs)."""
    if without_opinion == 0:
        return (
            "nothing to score yet: no run has been resolved on the review page; resolve "
            "reports there (lookout serve), then run lookout calibrate again"
        )
    return (
        f"nothing to score yet: none of the {without_opinion} resolved run(s) has a second "
        "opinion; configure a decision model (decision: in the config) so later runs get one"
    )


def print_report(report: CalibrationReport) -> None:
    """Print the report for a person: one block per decision model, wrapped to the width."""
    if not report.models:
        print_hanging(out, nothing_to_score(report.without_opinion))
        return
    for model in report.models:
        reasons = ", ".join(f"{n} {r}" for r, n in sorted(model.reasons.items()))
        print_hanging(
            out,
            f"{model.backend} {model.model or '(model not recorded)'}: "
            f"{model.reviews} labelled run(s) ({reasons})",
        )
        _model_grid(model).print(out, indent=2)
        for flag, (raised, right) in model.flags.items():
            share = f" ({right / raised:.0%})" if raised else ""
            print_hanging(out, f"  {flag}: raised {raised}, right {right}{share}")
        for q in model.questions:
            if q.fitted:
                print_hanging(
                    out,
                    f"  {q.question}: {q.fitted.describe()}, applied to the next runs' answers "
                    "beside the raw ones",
                )
            if q.diagram:
                out.print(f"  reliability diagram ({q.question}): {q.diagram}")  # kept whole
    print_hanging(
        out,
        f"a fit needs {report.min_reviews} labelled answers with both outcomes "
        "(decision.calibration_min_reviews, --min-reviews); the flags are never a filter",
    )


def calibrate_command(
    ctx: typer.Context,
    min_reviews: Annotated[
        int | None,
        typer.Option(
            "--min-reviews", min=2, help="Labelled answers a fit needs (default: the config's)."
        ),
    ] = None,
    fit: Annotated[
        bool,
        typer.Option("--fit/--no-fit", help="Store the recalibrations (default) or only report."),
    ] = True,
    plot: Annotated[
        Path | None, typer.Option("--plot", help="Write reliability diagrams (PNG) to this folder.")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON document.")] = False,
) -> None:
    """Score the decision model on ops' verdicts and fit the recalibration the next runs use."""
    from checks.clock import utcnow
    from checks.store.store import Store
    from worker.review.calibrate import calibrate, report_json

    settings = _settings(ctx)
    store = Store(settings.store_url)
    report = calibrate(
        store,
        min_reviews=min_reviews or settings.decision.calibration_min_reviews,
        now=utcnow(),
        fit=fit,
        plot_dir=plot,
    )
    if as_json:
        out.print(json.dumps(report_json(report)), markup=False, soft_wrap=True)
    else:
        print_report(report)
