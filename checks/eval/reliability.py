"""The reliability diagram of the decision model's "goal met?" answers, as a PNG.

Top panel: for each of the 10 equal-width bins (``checks.eval.scoring.calibration_bins``),
the share of true labels against the mean predicted probability, beside the
diagonal of perfect calibration; bar widths are the bins. Bottom panel: how many
answers fell in each bin. Drawn with matplotlib's object API on the Agg canvas
(no pyplot, no display, safe to call from any thread).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from checks.eval.scoring import CalibrationBin


def write_reliability_diagram(
    bins: Sequence[CalibrationBin],
    path: str | Path,
    *,
    title: str,
    ece: float | None,
    brier: float | None,
) -> Path:
    """Draw ``bins`` and write the PNG to ``path`` (parent folders are created).

    With no answers at all the diagram still is written, saying so, so a CI
    artefact always exists.

    Returns:
        The path written.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    figure = Figure(figsize=(6.0, 6.5), dpi=100)
    FigureCanvasAgg(figure)
    top, bottom = figure.subplots(2, 1, sharex=True, gridspec_kw={"height_ratios": [3, 1]})
    top.plot([0, 1], [0, 1], linestyle="--", color="grey", label="perfect calibration")
    filled = [b for b in bins if b.count and b.frequency is not None]
    width = bins[0].high - bins[0].low if bins else 0.1
    top.bar(
        [b.low for b in filled],
        [b.frequency or 0.0 for b in filled],
        width=width,
        align="edge",
        edgecolor="black",
        alpha=0.6,
        label="share where the goal was met",
    )
    top.plot(
        [b.mean_p for b in filled],
        [b.frequency for b in filled],
        marker="o",
        color="black",
        linestyle="none",
        label="bin mean probability",
    )
    top.set_xlim(0, 1)
    top.set_ylim(0, 1)
    top.set_ylabel("observed frequency of 'goal met'")
    total = sum(b.count for b in bins)
    scores = [f"{total} answers"]
    if ece is not None:
        scores.append(f"ECE {ece:.3f}")
    if brier is not None:
        scores.append(f"Brier {brier:.3f}")
    top.set_title(f"{title}\n{' · '.join(scores)}", fontsize=10)
    if not total:
        top.text(0.5, 0.5, "no decision-model answers", ha="center", va="center")
    top.legend(loc="upper left", fontsize=8)
    bottom.bar(
        [b.low for b in bins], [b.count for b in bins], width=width, align="edge", edgecolor="black"
    )
    bottom.set_xlabel("predicted probability that the goal is met")
    bottom.set_ylabel("answers")
    figure.tight_layout()
    figure.savefig(target, format="png")
    return target
