"""A check's history as an inline SVG line chart: server-rendered, no script, no outside resource.

``history_chart`` draws one ``worker.review.history.CheckHistory``: the
value of each run, oldest left, evenly spaced (one slot per run, the point
at its centre); the band each run stored shaded behind it (adjacent runs
with the same band share one rectangle; a side without a bound reaches the
plot's edge); a line through the values, broken where a run had none.

Readable without colour: a passing value is a circle, a failing one a
triangle pointing the way it left the band (▲ above, ▼ below; a square when
the band does not say), a run without a value a cross on the axis, and the
run the page is about has a ring. Each point has a ``<title>`` (run, slot,
value, band, outcome) and ``data-`` attributes with the stored numbers; the
chart's accessible name lists every value in order.

The Content-Security-Policy (``worker.web.session``) allows styles from
``'self'`` only, so there are no ``style`` attributes: classes, styled in
``static/lookout.css``, and SVG presentation attributes (``text-anchor``).
Every piece of text is escaped here (a check name is untrusted); the result
is ``Markup`` only because of that.

The scale fits the values; a band edge widens it only when it lies within
the values' own spread of them (so ``< 1000000`` does not flatten a line
near 10); an edge off the scale is drawn at the plot's edge. A flat series
gets a margin of a tenth of its value (1 around 0).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace

from markupsafe import Markup, escape

from worker.review.history import CheckHistory, HistoryPoint, figure

WIDTH = 640
HEIGHT = 168
LEFT = 64.0
"""Left edge of the plot (the value labels are to its left)."""
RIGHT = 628.0
TOP = 12.0
BOTTOM = 136.0
LABEL_BASELINE = 156.0
"""Where the slot times under the plot sit."""
RADIUS = 3.5


def band_words(low: float | None, high: float | None, unit: str | None = None) -> str:
    """``band 1 to 2``, ``band up to 0.03``, ``band from 5 %``, ``band 0``, or ``no band``.

    Values are written with the check's ``unit`` (``worker.review.history.figure``).
    """
    if low is not None and high is not None:
        if low == high:
            return f"band {figure(low, unit)}"
        return f"band {figure(low, unit)} to {figure(high, unit)}"
    if high is not None:
        return f"band up to {figure(high, unit)}"
    if low is not None:
        return f"band from {figure(low, unit)}"
    return "no band"


def outcome_words(point: HistoryPoint) -> str:
    """``passed``, ``failed, above the band``, ``error: no value``, ``not evaluated: no value``.

    A bucket: ``baseline``, ``still filling, not tested``, or ``tested: `` and its outcome.
    """
    if point.outcome == "baseline":
        return "baseline"
    if point.outcome == "filling":
        return "still filling, not tested"
    if point.bucket is not None:
        return "tested: " + outcome_words(replace(point, bucket=None))
    if point.failed:
        return f"failed, {point.side} the band" if point.side else "failed"
    if point.value is None:
        return f"{point.outcome.replace('_', ' ')}: no value"
    return point.outcome.replace("_", " ")


def point_words(point: HistoryPoint, unit: str | None = None) -> str:
    """One point's title, its values with the check's ``unit``.

    ``this run 12 · 2026-03-02 06:00 UTC · 0.05 · band up to 0.03 · failed, above the band``.
    """
    value = "no value" if point.value is None else figure(point.value, unit)
    band = band_words(point.low, point.high, unit)
    if point.bucket is not None:
        start = f"{point.bucket} from {point.scheduled_for:%Y-%m-%d %H:%M %Z}".rstrip()
        if point.outcome in ("baseline", "filling"):  # the band is the tested bucket's
            return " · ".join((start, value, outcome_words(point)))
        return " · ".join((start, value, band, outcome_words(point)))
    slot = point.scheduled_for.strftime("%Y-%m-%d %H:%M UTC")
    run = f"{'this run' if point.current else 'run'} {point.run_id}"
    return " · ".join((run, slot, value, band, outcome_words(point)))


def summary_words(history: CheckHistory) -> str:
    """The chart's accessible name: what it shows, how many of how many, every value in order."""
    items = []
    for p in history.points:
        item = "no value" if p.value is None else figure(p.value, history.unit)
        if p.failed:
            item += f" failed{f' {p.side} the band' if p.side else ''}"
        if p.current:
            item += " (tested)" if p.bucket else " (this run)"
        if p.outcome == "filling":
            item += " (still filling)"
        items.append(item)
    failed = history.failed
    per = f" per {history.bucket}" if history.bucket else ""
    head = f"{history.check}{per} over {history.shown_words}, {failed} failed"
    current = [p for p in history.points if p.current]
    latest = current[-1] if current else history.points[-1] if history.points else None
    band = f"; latest {band_words(latest.low, latest.high, history.unit)}" if latest else ""
    return f"{head}. Oldest first: {', '.join(items) or 'none'}{band}."


class Scale:
    """Value → y on the plot: the values' range, widened by band edges near it (see the module)."""

    def __init__(self, points: Sequence[HistoryPoint]) -> None:
        values = [p.value for p in points if p.value is not None]
        edges = [e for p in points for e in (p.low, p.high) if e is not None]
        if not values:
            values = edges or [0.0]
            edges = []
        low, high = min(values), max(values)
        reach = (high - low) or abs(high) or 1.0
        near = [e for e in edges if low - reach <= e <= high + reach]
        low, high = min([low, *near]), max([high, *near])
        if low == high:
            pad = abs(low) / 10 or 1.0
            low, high = low - pad, high + pad
        self.low = low
        self.high = high

    def y(self, value: float) -> float:
        """The y of a value, clamped to the plot (SVG y grows downwards)."""
        share = (value - self.low) / (self.high - self.low)
        return min(BOTTOM, max(TOP, BOTTOM - share * (BOTTOM - TOP)))


def _f(value: float) -> str:
    return f"{value:.1f}"


def _attr(value: float | None) -> str:
    return "" if value is None else repr(value)


def _bands(points: Sequence[HistoryPoint], scale: Scale, step: float) -> Iterable[str]:
    """One rectangle per run of adjacent points with the same band."""
    start = 0
    for i in range(1, len(points) + 1):
        same = i < len(points) and (points[i].low, points[i].high) == (
            points[start].low,
            points[start].high,
        )
        if same:
            continue
        low, high = points[start].low, points[start].high
        if low is not None or high is not None:
            top = scale.y(high) if high is not None else TOP
            bottom = scale.y(low) if low is not None else BOTTOM
            if bottom - top < 2:  # a band of one value is a line, still visible
                top, bottom = (top + bottom) / 2 - 1, (top + bottom) / 2 + 1
            x = LEFT + start * step
            yield (
                f'<rect class="band" x="{_f(x)}" y="{_f(top)}" width="{_f((i - start) * step)}" '
                f'height="{_f(bottom - top)}" data-low="{_attr(low)}" data-high="{_attr(high)}"/>'
            )
        start = i


def _line(points: Sequence[HistoryPoint], xs: Sequence[float], scale: Scale) -> str:
    """The path through the values, a new segment after each point without one."""
    parts: list[str] = []
    pen_down = False
    for point, x in zip(points, xs, strict=True):
        if point.value is None:
            pen_down = False
            continue
        parts.append(f"{'L' if pen_down else 'M'}{_f(x)},{_f(scale.y(point.value))}")
        pen_down = True
    return f'<path class="line" d="{" ".join(parts)}"/>' if parts else ""


def _marker(point: HistoryPoint, x: float, scale: Scale) -> str:
    if point.value is None:
        y = BOTTOM - 5
        return (
            f'<path class="marker" d="M{_f(x - 4)},{_f(y - 4)} L{_f(x + 4)},{_f(y + 4)} '
            f'M{_f(x + 4)},{_f(y - 4)} L{_f(x - 4)},{_f(y + 4)}"/>'
        )
    y = scale.y(point.value)
    if not point.failed:
        return f'<circle class="marker" cx="{_f(x)}" cy="{_f(y)}" r="{RADIUS}"/>'
    if point.side == "above":
        return (
            f'<path class="marker" d="M{_f(x)},{_f(y - 6)} L{_f(x + 5.5)},{_f(y + 4)} '
            f'L{_f(x - 5.5)},{_f(y + 4)} Z"/>'
        )
    if point.side == "below":
        return (
            f'<path class="marker" d="M{_f(x)},{_f(y + 6)} L{_f(x + 5.5)},{_f(y - 4)} '
            f'L{_f(x - 5.5)},{_f(y - 4)} Z"/>'
        )
    return f'<rect class="marker" x="{_f(x - 4.5)}" y="{_f(y - 4.5)}" width="9" height="9"/>'


def _kind(point: HistoryPoint) -> str:
    """The point's class: failed, missing (no value), passed, baseline, filling or other."""
    if point.failed:
        return "failed"
    if point.value is None:
        return "missing"
    if point.outcome in ("baseline", "filling"):
        return point.outcome
    return "passed" if point.outcome in ("passed", "warned") else "other"  # warned held


def _point(point: HistoryPoint, x: float, scale: Scale, unit: str | None) -> str:
    kind = _kind(point)
    classes = f"point {kind}{f' {point.side}' if point.side else ''}"
    ring = ""
    if point.current:
        classes += " current"
        y = scale.y(point.value) if point.value is not None else BOTTOM - 5
        ring = f'<circle class="ring" cx="{_f(x)}" cy="{_f(y)}" r="8.5"/>'
    return (
        f'<g class="{classes}" data-run="{point.run_id}" data-value="{_attr(point.value)}" '
        f'data-low="{_attr(point.low)}" data-high="{_attr(point.high)}" '
        f'data-outcome="{escape(point.outcome)}"><title>{escape(point_words(point, unit))}</title>'
        f"{ring}{_marker(point, x, scale)}</g>"
    )


def history_chart(history: CheckHistory, chart_id: str) -> Markup:
    """The inline ``<svg>`` of one check's history (see the module for what it draws).

    Args:
        history: the check's points, oldest first (at most ``HISTORY_POINTS``), and their total.
        chart_id: an id unique on the page (the title is ``{chart_id}-title``).

    Returns:
        Escaped SVG markup, safe to place in a page as is.
    """
    points = history.points
    step = (RIGHT - LEFT) / max(1, len(points))
    xs = [LEFT + step * (i + 0.5) for i in range(len(points))]
    scale = Scale(points)
    title_id = escape(f"{chart_id}-title")
    parts = [
        f'<svg class="chart" id="{escape(chart_id)}" viewBox="0 0 {WIDTH} {HEIGHT}" '
        f'width="{WIDTH}" height="{HEIGHT}" role="img" aria-labelledby="{title_id}" '
        f'data-points="{len(points)}" data-total="{history.total}">',
        f'<title id="{title_id}">{escape(summary_words(history))}</title>',
        f'<rect class="plot" x="{_f(LEFT)}" y="{_f(TOP)}" width="{_f(RIGHT - LEFT)}" '
        f'height="{_f(BOTTOM - TOP)}"/>',
        *_bands(points, scale, step),
        f'<line class="axis" x1="{_f(LEFT)}" y1="{_f(BOTTOM)}" x2="{_f(RIGHT)}" '
        f'y2="{_f(BOTTOM)}"/>',
        f'<text class="axis-label" x="{_f(LEFT - 6)}" y="{_f(TOP + 4)}" text-anchor="end">'
        f"{escape(figure(scale.high, history.unit))}</text>",
        f'<text class="axis-label" x="{_f(LEFT - 6)}" y="{_f(BOTTOM + 4)}" text-anchor="end">'
        f"{escape(figure(scale.low, history.unit))}</text>",
    ]
    if points:
        first, last = points[0].scheduled_for, points[-1].scheduled_for
        zone = f" {last:%Z}" if history.bucket else " UTC"  # buckets are local times
        parts.append(
            f'<text class="axis-label" x="{_f(LEFT)}" y="{_f(LABEL_BASELINE)}" text-anchor="start">'
            f"{escape(f'{first:%Y-%m-%d %H:%M}' + (zone if len(points) == 1 else ''))}</text>"
        )
        if len(points) > 1:
            parts.append(
                f'<text class="axis-label" x="{_f(RIGHT)}" y="{_f(LABEL_BASELINE)}" '
                'text-anchor="end">'
                f"{escape(f'{last:%Y-%m-%d %H:%M}{zone}')}</text>"
            )
    parts.append(_line(points, xs, scale))
    parts += [_point(p, x, scale, history.unit) for p, x in zip(points, xs, strict=True)]
    parts.append("</svg>")
    return Markup("".join(part for part in parts if part))
