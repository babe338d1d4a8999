"""Where terminal text may not break a line: inside a value with its unit.

Lookout writes a unit after its value with a space (``0.22 %``, ``12 ms``,
``2 min 05 s``, ``< 0.01 %``), as the docs do. Rich wraps at every
space, so at 80 columns a report could read ``(0.22`` at the end of one line
and ``%)`` at the start of the next. Here a *value* is an optional comparison
(``<``, ``<=``, ``>``, ``>=``, ``≤``, ``≥``, ``≈``, ``~``), a number (digits,
thousands commas, decimals, a sign), then a unit: a percent or per-mille sign,
a time unit (``ns`` … ``d``, or spelled out: ``seconds`` … ``weeks``), a size
(``B``, ``kB`` … ``TiB``); a duration of several parts (``2 min 05 s``) is one
value. Count nouns (``rows``, ``runs``) are words, not units: a line may break
before them. A date-time is one value too: ``YYYY-MM-DD HH:MM`` with optional
seconds (and their fraction) and an optional zone after a space, an
abbreviation (``UTC``, ``EST``) or an offset (``+01:00``), as Lookout writes a
run's time (``2026-12-02 02:37 UTC``); a line breaks before it, not inside it.

The spaces inside a value are held while the text is wrapped: each becomes a
placeholder (a private-use character absent from the text, one cell wide,
not whitespace, so Rich does not break there), and is a space again in every
line printed. Nothing else of the text changes. ``worker.cli.safe_text``'s
wrapping and Markdown apply it, so every caller of those keeps values whole.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager

from rich.console import Console, ConsoleRenderable, RenderHook
from rich.text import Text

__all__ = ["VALUE", "held", "released"]

_UNIT = (
    r"(?:%|‰|ns|µs|μs|us|ms|s|sec|secs|seconds?|min|mins|minutes?|h|hr|hrs|hours?"
    r"|d|days?|w|wk|weeks?|B|kB|KB|MB|GB|TB|KiB|MiB|GiB|TiB)"
)
_NUMBER = r"[-+]?\d[\d,]*(?:\.\d+)?"
_PART = rf"{_NUMBER} ?{_UNIT}(?![\w%‰])"
_QUANTITY = rf"(?<![\w.,])(?:(?:[<>]=?|[≤≥≈~]) )?{_PART}(?: {_PART})*"
_DATE_TIME = (
    r"(?<![\w.,:-])\d{4}-\d\d-\d\d \d\d:\d\d(?::\d\d(?:\.\d+)?)?"
    r"(?: (?:[A-Z]{2,5}|[+-]\d\d:?\d\d)(?![\w:]))?(?![\w:])"
)
VALUE = re.compile(rf"{_DATE_TIME}|{_QUANTITY}")
"""A value with its unit, or a date-time, as the module docstring describes them."""

_PLACEHOLDERS = [chr(code) for code in range(0xE000, 0xE100)]  # Unicode private use area


def held(text: str) -> tuple[str, str | None]:
    """``text`` with the spaces inside each value replaced by a placeholder, and the placeholder.

    The text is returned unchanged with ``None`` when it holds no value with
    a space in it, or every candidate placeholder already (text made to).
    The result has the same length and cell width as ``text``.
    """
    if " " not in text or not VALUE.search(text):
        return text, None
    mark = next((c for c in _PLACEHOLDERS if c not in text), None)
    if mark is None:
        return text, None
    return VALUE.sub(lambda m: m.group(0).replace(" ", mark), text), mark


class _Release(RenderHook):
    """Turns a placeholder back into a space in every ``Text`` a console prints."""

    def __init__(self, mark: str) -> None:
        self.mark = mark

    def process_renderables(self, renderables: list[ConsoleRenderable]) -> list[ConsoleRenderable]:
        released: list[ConsoleRenderable] = []
        for renderable in renderables:
            if isinstance(renderable, Text) and self.mark in renderable.plain:
                renderable = renderable.copy()
                renderable.plain = renderable.plain.replace(self.mark, " ")
            released.append(renderable)
        return released


@contextmanager
def released(console: Console, mark: str | None) -> Iterator[None]:
    """While in this block, ``console`` prints every ``mark`` in a ``Text`` as a space again.

    A Rich render hook, pushed for the block only; with ``mark`` None nothing is pushed.
    """
    if mark is None:
        yield
        return
    console.push_render_hook(_Release(mark))
    try:
        yield
    finally:
        console.pop_render_hook()
