"""Untrusted text on the terminal: never markup, never an escape sequence.

Report text, data values, names and model output are untrusted. ``clean``
shows control characters (ESC, so no terminal escape sequence; BEL; C1
controls) and bidirectional overrides as visible symbols, one character for
one, so styled spans stay in place. ``SafeConsole`` cleans every string and
``Text`` it prints and never reads them as Rich markup; ``SafeMarkdown``
renders a summary's Markdown from cleaned text with raw HTML shown as text
and links printed with their address, never as hidden terminal hyperlinks.
Where either wraps a line, a value is never parted from its unit
(``worker.cli.no_break``): ``(0.22 %)`` stays on one line.

A data value (a table cell, a segment's value) is one line: ``one_line``
also shows its newlines and tabs as symbols. Whatever either console writes
never holds a line a CI runner reads as a command (``defuse_commands``).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.segment import Segment
from rich.text import Text

from worker.cli.no_break import held, released

if TYPE_CHECKING:
    from rich.markdown import Markdown

# C0 controls but newline and tab → Unicode "control pictures" (U+2400…); DEL → U+2421;
# C1 controls and bidi marks/overrides/isolates → U+FFFD. Same length, so spans stay valid.
_SAFE = {c: 0x2400 + c for c in range(0x20) if c not in (0x09, 0x0A)}
_SAFE |= {0x7F: 0x2421}
_SAFE |= {
    c: 0xFFFD
    for c in (*range(0x80, 0xA0), 0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F),
              *range(0x2066, 0x206A))
}  # fmt: skip


# A data value is one line: its newline and tab as the control pictures ␊ and ␉ too.
_ONE_LINE = _SAFE | {0x0A: 0x240A, 0x09: 0x2409}

# GitHub's runner reads a line as a workflow command when it starts with ``::`` after
# leading blanks (``ActionCommand.TryParseV2``), or holds ``##[`` anywhere (``TryParse``,
# the legacy form), https://github.com/actions/runner/blob/main/src/Runner.Common/ActionCommand.cs;
# it splits lines at CR as at LF.
_COMMAND_START = re.compile(r"(?:^|(?<=[\r\n]))([^\S\r\n]*):(?=:)")
_LEGACY_COMMAND = re.compile(r"#(?=#\[)")


def clean(value: object) -> str:
    """Return ``str(value)`` with control characters replaced by visible symbols."""
    return str(value).translate(_SAFE)


def one_line(value: object) -> str:
    """``clean``, newlines and tabs shown as ``␊`` and ``␉`` too: a data value on one line."""
    return str(value).translate(_ONE_LINE)


def defuse_commands(text: str) -> str:
    """``text`` with no line a CI runner reads as a command, each line otherwise unchanged.

    A line whose first non-blank characters are ``::`` gets ``∶`` (U+2236,
    one cell as ``:`` is) for its first colon, and ``##[`` anywhere becomes
    ``⌗#[`` (U+2317): GitHub Actions reads both as workflow commands (the
    runner's ``ActionCommand.TryParseV2`` and ``TryParse``), so a data value
    printed in a report can never raise an annotation, mask a log or stop the
    commands. Lookout's own annotations are written past the consoles.
    """
    return _LEGACY_COMMAND.sub("\u2317", _COMMAND_START.sub("\\1\u2236", text))


class SafeConsole(Console):
    """A Rich console that cleans every string and ``Text`` it prints (see ``clean``).

    No line it writes is a CI runner's command (``defuse_commands``).
    Strings are printed as plain text: ``markup`` is off unless a caller turns
    it on for text of its own. A line made only of strings is not wrapped by
    Rich (``soft_wrap``: the terminal wraps it, and it stays one line for
    ``grep``); ``Text`` and renderables are wrapped to the console's width.
    Unless a ``width`` is given, the width is the terminal's (or ``COLUMNS``)
    at each print, not at creation: the consoles are made when their module
    is imported.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if kwargs.get("width") is None:
            self._width = None

    def _render_buffer(self, buffer: Iterable[Segment]) -> str:
        # Every line either console writes, after layout and wrapping: no workflow command.
        return defuse_commands(super()._render_buffer(buffer))

    def print(self, *objects: Any, **kwargs: Any) -> None:  # noqa: D102 - see class
        safe: list[Any] = []
        for obj in objects:
            if isinstance(obj, str):
                obj = clean(obj)
            elif isinstance(obj, Text):
                obj = obj.copy()
                obj.plain = clean(obj.plain)
            safe.append(obj)
        kwargs.setdefault("markup", False)
        if objects and all(isinstance(obj, str) for obj in objects):
            kwargs.setdefault("soft_wrap", True)
        elif len(safe) == 1 and isinstance(safe[0], Text) and not kwargs.get("soft_wrap"):
            lines = wrap_text(self, safe[0], self.width)  # Rich leaves a blank where it wraps
            safe = [Text("\n").join(lines)]
            kwargs["soft_wrap"] = True
        super().print(*safe, **kwargs)


@functools.cache
def _safe_markdown() -> type[Markdown]:
    """``SafeMarkdown``, built on first use: only a report's summary needs a Markdown parser."""
    from markdown_it import MarkdownIt
    from rich.markdown import Markdown

    class SafeMarkdown(Markdown):
        """Rich's Markdown over untrusted text.

        The text is cleaned first (``clean``); raw HTML is shown as the text it is
        (CommonMark with ``html`` off: Rich's default parser drops it, which would
        hide what a report says); links print their address after the label
        (``hyperlinks=False``: no OSC 8 escape whose target differs from its
        label); images print as their alt text. Rich markup in the text is never
        interpreted: Rich's Markdown renders text spans as plain ``Text``.
        """

        def __init__(self, markup: str) -> None:
            safe = clean(markup)
            super().__init__(safe, hyperlinks=False, justify="default")
            parser = MarkdownIt("commonmark", {"html": False}).enable(["strikethrough", "table"])
            self.parsed = parser.parse(safe)

    return SafeMarkdown


def print_markdown(console: Console, markdown: str) -> None:
    """Print untrusted Markdown (``SafeMarkdown``) at the console's width, no trailing blanks.

    A value and its unit are never parted: their spaces are held in the
    Markdown source and given back in each line as it is printed.
    """
    source, mark = held(markdown)
    rendered = console.render_lines(_safe_markdown()(source), console.options, pad=False)
    with released(console, mark):
        for line in rendered:
            while line and not line[-1].control and not line[-1].text.rstrip():
                line.pop()
            if line:
                last = line[-1]
                line[-1] = Segment(last.text.rstrip(), last.style, last.control)
            text = Text()
            for segment in line:
                if not segment.control:
                    text.append(segment.text, segment.style)
            console.print(text, soft_wrap=True)


def wrap_text(console: Console, text: Text, width: int) -> list[Text]:
    """``text`` wrapped at spaces to ``width`` cells, each line without trailing blanks.

    Never inside a value with its unit (``worker.cli.no_break``); styles stay
    where they were, and a value wider than ``width`` is folded as any word
    that long is.
    """
    plain, mark = held(text.plain)
    if mark is not None:
        text = text.copy()
        text.plain = plain
    lines = list(text.wrap(console, max(1, width)))
    for line in lines:
        line.rstrip()
        if mark is not None:
            line.plain = line.plain.replace(mark, " ")
    return lines


def print_hanging(console: Console, line: str, *, hang: int = 4) -> None:
    """Print one line of (untrusted) text wrapped at the console's width, continuations indented.

    The lines after the first start ``hang`` cells further in than the line's
    own leading blanks, so a wrapped line still reads as one item of a list.
    """
    text = clean(line)
    lead = len(text) - len(text.lstrip(" "))
    first, *_ = wrap_text(console, Text(text), console.width) or [Text()]
    console.print(first, soft_wrap=True)
    rest = text[len(first.plain) :].strip()
    if rest:
        pad = " " * (lead + hang)
        for more in wrap_text(console, Text(rest), console.width - len(pad)):
            console.print(Text(pad) + more, soft_wrap=True)
