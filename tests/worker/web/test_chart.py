"""The inline SVG chart of a check's history: exact shapes and coordinates, escaped text."""

from __future__ import annotations

import datetime as dt
import xml.etree.ElementTree as ET

from worker.review.history import CheckHistory, HistoryPoint, number
from worker.web.chart import Scale, history_chart

SLOT = dt.datetime(2026, 3, 2, 6, 0, tzinfo=dt.UTC)


def point(
    run: int,
    value: float | None,
    low: float | None = None,
    high: float | None = None,
    outcome: str = "passed",
    *,
    current: bool = False,
) -> HistoryPoint:
    return HistoryPoint(
        run, SLOT + dt.timedelta(days=run - 1), value, low, high, outcome, current=current
    )


def parse(history: CheckHistory) -> ET.Element:
    return ET.fromstring(str(history_chart(history, "chart-1")))


def markers(svg: ET.Element) -> list[tuple[str, str, dict[str, str]]]:
    """(the point's classes, its marker's tag, the marker's attributes) of every point."""
    found = []
    for group in svg.iter("g"):
        marker = group.find("*[@class='marker']")
        assert marker is not None
        found.append((group.get("class", ""), marker.tag, dict(marker.attrib)))
    return found


KNOWN = CheckHistory(
    "orders",
    [
        point(1, 10.0, high=20.0),
        point(2, 15.0, high=20.0),
        point(3, 25.0, high=20.0, outcome="failed"),
        point(4, None, high=20.0, outcome="error", current=True),
    ],
    total=9,
)


def test_a_known_series_is_drawn_at_exact_coordinates() -> None:
    svg = parse(KNOWN)
    assert svg.get("viewBox") == "0 0 640 168"
    assert (svg.get("role"), svg.get("aria-labelledby")) == ("img", "chart-1-title")
    assert (svg.get("data-points"), svg.get("data-total")) == ("4", "9")
    # four slots of 141 across the plot (x 64 to 628); the scale is 10 to 25 over y 136 to 12
    bands = [dict(r.attrib) for r in svg.iter("rect") if r.get("class") == "band"]
    assert bands == [
        {
            "class": "band",
            "x": "64.0",
            "y": "53.3",  # 20 on the scale; no lower bound: down to the plot's edge
            "width": "564.0",
            "height": "82.7",
            "data-low": "",
            "data-high": "20.0",
        }
    ]
    lines = [p.get("d") for p in svg.iter("path") if p.get("class") == "line"]
    assert lines == ["M134.5,136.0 L275.5,94.7 L416.5,12.0"]  # no value in run 4: no segment
    assert markers(svg) == [
        ("point passed", "circle", {"class": "marker", "cx": "134.5", "cy": "136.0", "r": "3.5"}),
        ("point passed", "circle", {"class": "marker", "cx": "275.5", "cy": "94.7", "r": "3.5"}),
        (
            "point failed above",
            "path",
            {"class": "marker", "d": "M416.5,6.0 L422.0,16.0 L411.0,16.0 Z"},
        ),
        (
            "point missing current",
            "path",
            {"class": "marker", "d": "M553.5,127.0 L561.5,135.0 M561.5,127.0 L553.5,135.0"},
        ),
    ]
    ring = svg.find(".//circle[@class='ring']")
    assert ring is not None and (ring.get("cx"), ring.get("cy")) == ("557.5", "131.0")
    labels = [(t.get("x"), t.get("y"), t.text) for t in svg.iter("text")]
    assert labels == [
        ("58.0", "16.0", "25"),
        ("58.0", "140.0", "10"),
        ("64.0", "156.0", "2026-03-02 06:00"),
        ("628.0", "156.0", "2026-03-05 06:00 UTC"),
    ]


def test_every_point_carries_its_values_and_says_them_in_words() -> None:
    svg = parse(KNOWN)
    title = svg.find("title")
    assert title is not None and title.get("id") == "chart-1-title"
    assert title.text == (
        "orders over the last 4 of 9 runs, 1 failed. "
        "Oldest first: 10, 15, 25 failed above the band, no value (this run); "
        "latest band up to 20."
    )
    groups = list(svg.iter("g"))
    assert [(g.get("data-run"), g.get("data-value"), g.get("data-outcome")) for g in groups] == [
        ("1", "10.0", "passed"),
        ("2", "15.0", "passed"),
        ("3", "25.0", "failed"),
        ("4", "", "error"),
    ]
    assert [g.findtext("title") for g in groups] == [
        "run 1 · 2026-03-02 06:00 UTC · 10 · band up to 20 · passed",
        "run 2 · 2026-03-03 06:00 UTC · 15 · band up to 20 · passed",
        "run 3 · 2026-03-04 06:00 UTC · 25 · band up to 20 · failed, above the band",
        "this run 4 · 2026-03-05 06:00 UTC · no value · band up to 20 · error: no value",
    ]


def test_a_percent_check_writes_its_values_with_the_unit_as_the_report_does() -> None:
    history = CheckHistory(
        "late share",
        [
            point(1, 2.45, high=5.0),
            point(2, 0.004, high=5.0),
            point(3, 14.99, high=5.0, outcome="failed", current=True),
        ],
        total=3,
        unit="percent",
    )
    svg = parse(history)
    assert svg.findtext("title") == (
        "late share over 3 runs, 1 failed. "
        "Oldest first: 2.45 %, < 0.01 %, 14.99 % failed above the band (this run); "
        "latest band up to 5.00 %."
    )
    assert [g.findtext("title") for g in svg.iter("g")][2] == (
        "this run 3 · 2026-03-04 06:00 UTC · 14.99 % · band up to 5.00 % · failed, above the band"
    )
    labels = [t.text for t in svg.iter("text") if t.get("class") == "axis-label"][:2]
    assert all(label is not None and label.endswith(" %") for label in labels), labels


def test_a_drop_below_the_band_points_down_and_a_failure_inside_it_is_a_square() -> None:
    history = CheckHistory(
        "volume",
        [
            point(1, 100.0, 90.0, 110.0),
            point(2, 104.0, 92.0, 112.0),  # an anomaly band moves with its baseline
            point(3, 60.0, 92.0, 112.0, "failed"),
            point(4, 100.0, outcome="failed"),  # `!= 100`: no band to say which side
        ],
        total=4,
    )
    svg = parse(history)
    # scale 60 to 112: y = 136 - (v - 60) / 52 * 124
    bands = [(r.get("y"), r.get("height")) for r in svg.iter("rect") if r.get("class") == "band"]
    assert bands == [("16.8", "47.7"), ("12.0", "47.7")]  # 90–110, then 92–112 for two runs
    assert [(r.get("x"), r.get("width")) for r in svg.iter("rect") if r.get("class") == "band"] == [
        ("64.0", "141.0"),
        ("205.0", "282.0"),
    ]
    assert markers(svg)[2:] == [
        (
            "point failed below",
            "path",
            {"class": "marker", "d": "M416.5,142.0 L422.0,132.0 L411.0,132.0 Z"},
        ),
        (
            "point failed",
            "rect",
            {"class": "marker", "x": "553.0", "y": "36.1", "width": "9", "height": "9"},
        ),
    ]


def test_the_scale_fits_the_values_and_a_far_bound_stays_at_the_edge() -> None:
    far = [point(1, 10.0, high=1_000_000.0), point(2, 20.0, high=1_000_000.0)]
    scale = Scale(far)
    assert (scale.low, scale.high) == (10.0, 20.0)
    band = [r for r in parse(CheckHistory("c", far, 2)).iter("rect") if r.get("class") == "band"]
    assert [(b.get("y"), b.get("height")) for b in band] == [("12.0", "124.0")]  # the whole plot
    near = Scale([point(1, 10.0, high=25.0), point(2, 20.0, high=25.0)])
    assert (near.low, near.high) == (10.0, 25.0)
    flat = Scale([point(1, 5.0), point(2, 5.0)])
    assert (flat.low, flat.high) == (4.5, 5.5)
    zero = Scale([point(1, 0.0, 0.0, 0.0)])
    assert (zero.low, zero.high) == (-1.0, 1.0)
    nothing = Scale([point(1, None, outcome="error")])
    assert (nothing.low, nothing.high) == (-1.0, 1.0)


def test_an_exact_band_of_one_value_is_still_drawn() -> None:
    svg = parse(
        CheckHistory("empty", [point(1, 0.0, 0.0, 0.0), point(2, 3.0, 0.0, 0.0, "failed")], 2)
    )
    band = [r for r in svg.iter("rect") if r.get("class") == "band"]
    assert [(b.get("y"), b.get("height")) for b in band] == [("135.0", "2.0")]


def test_untrusted_text_is_escaped_and_the_chart_stays_one_element() -> None:
    hostile = '</title><script>alert(1)</script><g onload="x">&'
    svg = parse(
        CheckHistory(hostile, [point(1, 1.0, outcome='"><script>x</script>', current=True)], 1)
    )
    assert svg.findtext("title", "").startswith(hostile + " over 1 run, 0 failed.")
    assert [e.tag for e in svg.iter() if e.tag in {"script", "foreignObject"}] == []
    assert [k for e in svg.iter() for k in e.attrib if k.startswith("on")] == []
    group = svg.find("g")
    assert group is not None and group.get("data-outcome") == '"><script>x</script>'
    assert "style" not in str(history_chart(CheckHistory(hostile, [point(1, 1.0)], 1), "c"))


def test_numbers_are_written_whole_or_to_six_digits() -> None:
    assert [number(v) for v in (3.0, -12.0, 0.0123, 2 / 3, 1e20, 123456789.5)] == [
        "3",
        "-12",
        "0.0123",
        "0.666667",
        "1e+20",
        "1.23457e+08",
    ]


def test_an_anomaly_over_daily_buckets_draws_its_baseline_tested_day_and_the_day_filling() -> None:
    from tests.worker.review.test_history import ANOMALY, BUCKETS
    from worker.review.history import bucket_history

    history = bucket_history("daily orders", ANOMALY, BUCKETS, "failed", 7)
    assert history is not None
    svg = parse(history)
    # eight slots of 70.5; the scale 12 to 125 (the band's top); the band behind the six
    # baseline days and the tested one, none behind the day still filling
    bands = [dict(r.attrib) for r in svg.iter("rect") if r.get("class") == "band"]
    assert [(b["x"], b["y"], b["width"], b["height"]) for b in bands] == [
        ("64.0", "12.0", "493.5", "49.4")
    ]
    groups = list(svg.iter("g"))
    assert [g.get("class") for g in groups] == [
        *["point baseline"] * 6,
        "point failed below current",
        "point filling",
    ]
    assert [g.findtext("title") for g in groups][5:] == [
        "day from 2026-03-07 00:00 CET · 106 · baseline",
        "day from 2026-03-08 00:00 CET · 40 · band 80 to 125 · tested: failed, below the band",
        "day from 2026-03-09 00:00 CET · 12 · still filling, not tested",
    ]
    assert svg.findtext("title") == (
        "daily orders per day over 6 baseline days, the tested day and the day still filling, "
        "1 failed. Oldest first: 101, 102, 103, 104, 105, 106, 40 failed below the band (tested), "
        "12 (still filling); latest band 80 to 125."
    )
    labels = [t.text for t in svg.iter("text")][2:]
    assert labels == ["2026-03-02 00:00", "2026-03-09 00:00 CET"]
