"""A value and its unit are never parted by a line break; everything else wraps as before."""

from __future__ import annotations

import io

import pytest
from rich.text import Text

from worker.cli.no_break import VALUE, held
from worker.cli.safe_text import SafeConsole, print_hanging, print_markdown, wrap_text


@pytest.mark.parametrize(
    ("text", "values"),
    [
        ("717 of 328,063 rows missing (0.22 %) (expected == 0)", ["0.22 %"]),
        ("missing (< 0.01 %) (expected < 5%)", ["< 0.01 %", "< 5%"]),
        ("took 2 min 05 s, then 12 ms", ["2 min 05 s", "12 ms"]),
        ("a 1,048.4 mph wind; 3 duplicate groups; 5 surplus rows", []),  # words, not units
        ("peak RSS 369 MiB, 2.5 days old, retry in -3 s", ["369 MiB", "2.5 days", "-3 s"]),
        ("N725MQ 575 flights, v1.5 s, 2013-01-01 12 h", ["12 h"]),
        ("run 16 · 2026-12-02 02:37 UTC", ["2026-12-02 02:37 UTC"]),  # a date-time is one value
        ("2026-12-07 09:00 EST · America/New_York", ["2026-12-07 09:00 EST"]),
        ("at 2026-12-02 02:37:05.5 +01:00, took 3 s", ["2026-12-02 02:37:05.5 +01:00", "3 s"]),
        ("made 2026-12-02 02:55, then 12:30 UTC", ["2026-12-02 02:55"]),  # no date: a word
    ],
)
def test_a_value_is_a_number_with_its_unit(text: str, values: list[str]) -> None:
    assert [m.group(0) for m in VALUE.finditer(text)] == values


def test_a_value_is_held_whole_and_its_space_given_back() -> None:
    console = SafeConsole(file=io.StringIO(), width=20, color_system=None)
    text = Text("a share of (0.22 %) missing")
    text.stylize("bold", 11, 19)
    lines = wrap_text(console, text, 16)
    assert [line.plain for line in lines] == ["a share of", "(0.22 %) missing"]
    assert [(s.start, s.end, str(s.style)) for s in lines[1].spans] == [(0, 8, "bold")]


def test_text_holding_the_placeholder_itself_is_held_with_another() -> None:
    text = "\ue000 took 12 ms"  # untrusted text may hold a private-use character
    source, mark = held(text)
    assert mark == "\ue001" and source == "\ue000 took 12\ue001ms"
    console = SafeConsole(file=io.StringIO(), width=10, color_system=None)
    assert [line.plain for line in wrap_text(console, Text(text), 10)] == [
        "\ue000 took",
        "12 ms",
    ]


def test_markdown_prints_no_placeholder_and_keeps_the_value_whole() -> None:
    buffer = io.StringIO()
    console = SafeConsole(file=buffer, width=36, color_system=None)
    print_markdown(console, "- **late** rows: 717 of 328,063 (0.22 %)")
    # without holding the value: " • late rows: 717 of 328,063 (0.22", then "   %)"
    assert buffer.getvalue().splitlines() == ["", " • late rows: 717 of 328,063", "   (0.22 %)"]
    assert console._render_hooks == []  # the hook was for that call only


def test_a_console_printing_one_text_keeps_the_value_whole() -> None:
    buffer = io.StringIO()
    console = SafeConsole(file=buffer, width=16, color_system=None)
    console.print(Text("a share of (0.22 %) missing"))
    assert buffer.getvalue().splitlines() == ["a share of", "(0.22 %) missing"]


def test_a_hanging_line_keeps_the_value_whole() -> None:
    buffer = io.StringIO()
    console = SafeConsole(file=buffer, width=24, color_system=None)
    print_hanging(console, "  late: 717 rows took 2 min 05 s in all")
    # not "  late: 717 rows took 2" / "      min 05 s in all"
    assert buffer.getvalue().splitlines() == ["  late: 717 rows took", "      2 min 05 s in all"]
