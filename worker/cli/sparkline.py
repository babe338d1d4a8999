"""A check's history as one line of the terminal: a sparkline of block characters.

``lookout show`` prints, under a report, one row per check
(``print_histories``): its name, the sparkline of its value in the last runs
up to this one (``worker.review.history``, oldest first), the smallest and
largest value, and how many runs of how many with how many failed.

Each run is one character. A failing value is a shape rather than a height,
so it reads without colour: ``▲`` above its band, ``▼`` below it, ``■`` when
the band does not say (``!= N``); a run with no value (an error, not
evaluated) is ``×``. Failing shapes are also bold red where the terminal has
colour. A passing value is a block whose height is its place between the
smallest and largest *passing* value (``▁`` to ``█``, to the nearest of the
eight; all ``▄`` when they are the same): the failures are already shapes,
so a spike does not flatten the rest. The min and max printed beside it are
of every value shown. An anomaly check ``over:`` time buckets shows its
buckets instead (``worker.review.history.bucket_history``): the baseline, the
tested one, and ``░`` for the one still filling (never tested; left out of
the min and max).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from rich.console import Console
from rich.text import Text

from worker.cli.layout import Column, Grid
from worker.cli.safe_text import wrap_text
from worker.review.history import CheckHistory, HistoryPoint, figure

BLOCKS = "▁▂▃▄▅▆▇█"
ABOVE, BELOW, FAILED, NO_VALUE, FILLING = "▲", "▼", "■", "×", "░"
LEGEND = (
    f"history, oldest first: {ABOVE} {BELOW} failed above/below the band, "
    f"{FAILED} failed, {NO_VALUE} no value"
)
BUCKET_LEGEND = f", {FILLING} a bucket still filling, not tested"
MIN_POINTS = 10
"""Fewest newest points a sparkline is shortened to before min and max give way."""


def _char(point: HistoryPoint, low: float, high: float) -> tuple[str, str]:
    """One run's character and style (``low``, ``high``: the passing values' range)."""
    if point.outcome == "filling":
        return FILLING, "dim"
    if point.value is None:
        return NO_VALUE, "dim"
    if point.failed:
        shape = {"above": ABOVE, "below": BELOW}.get(point.side or "", FAILED)
        return shape, "bold red"
    if high == low:
        return BLOCKS[3], ""
    level = math.floor((point.value - low) / (high - low) * (len(BLOCKS) - 1) + 0.5)
    return BLOCKS[level], ""


def sparkline(history: CheckHistory) -> Text:
    """The history's points as one character each (see the module docstring)."""
    passing = [
        p.value
        for p in history.points
        if p.value is not None and not p.failed and p.outcome != "filling"
    ]
    low, high = (min(passing), max(passing)) if passing else (0.0, 0.0)
    line = Text()
    for point in history.points:
        char, style = _char(point, low, high)
        line.append(char, style=style)
    return line


def counts(history: CheckHistory) -> str:
    """``the last 30 of 35 runs, 1 failed``, ``4 runs``, ``per day: 28 baseline days, …``."""
    per = f"per {history.bucket}: " if history.bucket else ""
    return per + history.shown_words + (f", {history.failed} failed" if history.failed else "")


def measured(history: CheckHistory) -> list[float]:
    """The values min and max are of: every one shown but a bucket's still filling."""
    return [p.value for p in history.points if p.value is not None and p.outcome != "filling"]


def print_histories(
    console: Console, histories: Sequence[CheckHistory], *, indent: int = 2
) -> None:
    """Print one row per check with a history: name, sparkline, min, max and counts.

    The table is the first that fits the width (``fitting``). Checks without a
    stored point are left out; with none at all nothing is printed.
    """
    shown = [h for h in histories if h.points]
    if not shown:
        return
    legend = LEGEND + (BUCKET_LEGEND if any(h.bucket for h in shown) else "")
    for line in wrap_text(console, Text(legend, style="dim"), console.width - indent):
        console.print(Text(" " * indent) + line, soft_wrap=True)
    fitting(shown, console.width - indent).print(console, indent=indent)


def fitting(histories: Sequence[CheckHistory], width: int) -> Grid:
    """The table of ``histories`` (each with a point) that fits ``width`` cells, one line a check.

    Tried in order (the module docstring): every column; every point without
    the counts; the newest points only, one fewer at a time down to
    ``MIN_POINTS``; the same again without min and max. When none fits (a name
    too wide for even that), every column, laid out in the grid's first form
    that fits (``Grid.form``), the name whole.
    """
    full = _grid(histories, with_counts=True)
    if full.form(width) == "columns":
        return full
    longest = max(len(h.points) for h in histories)
    for values in (True, False):
        for last in range(longest, min(longest, MIN_POINTS) - 1, -1):
            grid = _grid(histories, with_counts=False, values=values, last=last)
            if grid.form(width) == "columns":
                return grid
    return full


def newest(history: CheckHistory, last: int) -> CheckHistory:
    """``history`` with only its ``last`` newest points (its total of runs unchanged)."""
    return CheckHistory(history.check, history.points[-last:], history.total, history.unit)


def _grid(
    histories: Sequence[CheckHistory],
    *,
    with_counts: bool,
    values: bool = True,
    last: int | None = None,
) -> Grid:
    """One candidate table: ``last`` newest points (None or the longest: all), min/max, counts."""
    longest = max(len(h.points) for h in histories)
    cut = last is not None and last < longest
    columns = [Column("check", title=True), Column(f"last {last}" if cut else "history")]
    if values:
        columns += [Column("min", justify="right"), Column("max", justify="right")]
    if with_counts:
        columns.append(Column("of"))  # kept whole: a check is one line, or its counts go
    grid = Grid(columns)
    for history in histories:
        if cut and last is not None:
            history = newest(history, last)
        cells: list[Text | str] = [Text(history.check), sparkline(history)]
        if values:
            measure = measured(history)
            shown = [figure(f(measure), history.unit) for f in (min, max)] if measure else []
            cells += shown or ["", ""]
        if with_counts:
            cells.append(counts(history))
        grid.add_row(*cells)
    return grid
