"""Where terminal text may not break a line: inside a value with its unit.

Lookout writes a unit after its value with a space (``0.22 %``, ``12 ms``,
``2 min 05 s``, ``< 0.01 %``), as the README does. Rich wraps at every
space, so at 80 columns a report could read ``(0.22`` at the end of one line
and ``%)`` at the start of the next. Here a *value* is an optional comparison
(``<``, ``<=``, ``>``, ``>=``, ``≤``, ``≥``, ``≈``, ``~``), a number (digits,
thousands commas, decimals, a sign), then a unit: a percent or per-mille sign,
a time unit (``ns`` … ``d``, or spelled out: ``seconds`` … ``weeks``), a size
(``B``, ``kB`` … ``TiB``); a duration of several parts (``2 min 05 s``) is one
value. Count nouns (``rows``, ``runs``) are words, not units: a line may break
before them.

The spaces inside a value are held while the text is wrapped: each becomes a
placeholder (a private-use character absent from the text, one cell wide,
not whitespace, so Rich does not break there), and is a space again in every
line printed. Nothing else of the text changes: untrusted text stays as
``worker.cli.safe_text`` cleans it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager

from rich.console import Console, ConsoleRenderable, RenderHook
from rich.text import Text

from worker.cli.safe_text import print_markdown, wrap_text

__all__ = ["held", "print_markdown_whole", "wrap_whole"]

_UNIT = (
    r"(?:%|‰|ns|µs|μs|us|ms|s|sec|secs|seconds?|min|mins|minutes?|h|hr|hrs|hours?"
    r"|d|days?|w|wk|weeks?|B|kB|KB|MB|GB|TB|KiB|MiB|GiB|TiB)"
)
_NUMBER = r"[-+]?\d[\d,]*(?:\.\d+)?"
_PART = rf"{_NUMBER} ?{_UNIT}(?![\w%‰])"
VALUE = re.compile(rf"(?<![\w.,])(?:(?:[<>]=?|[≤≥≈~]) )?{_PART}(?: {_PART})*")
"""A value with its unit, as the module docstring describes it."""

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


def wrap_whole(console: Console, text: Text, width: int) -> list[Text]:
    """``text`` wrapped at spaces to ``width`` cells (``wrap_text``), never inside a value.

    Styles stay where they were. A value wider than ``width`` is folded as any
    word that long is.
    """
    plain, mark = held(text.plain)
    if mark is None:
        return wrap_text(console, text, width)
    holding = text.copy()
    holding.plain = plain
    lines = wrap_text(console, holding, width)
    for line in lines:
        line.plain = line.plain.replace(mark, " ")
    return lines


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
def _released(console: Console, mark: str) -> Iterator[None]:
    console.push_render_hook(_Release(mark))
    try:
        yield
    finally:
        console.pop_render_hook()


def print_markdown_whole(console: Console, markdown: str) -> None:
    """Print untrusted Markdown as ``safe_text.print_markdown`` does, never breaking a value.

    The values' spaces are held in the Markdown source, and released in each
    line as the console prints it (a Rich render hook, for this call only).
    """
    source, mark = held(markdown)
    if mark is None:
        print_markdown(console, markdown)
        return
    with _released(console, mark):
        print_markdown(console, source)
