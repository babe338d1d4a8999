"""Where a value is in its YAML file: a node's line and column, and points inside its text."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Place:
    """Where a value is in its file, and how to find a line and column inside it.

    Attributes:
        line: 1-based line where the value starts (for a ``|`` block, the
            line of the ``|``).
        column: 1-based column where it starts.
        style: the scalar's YAML style: ``|``, ``>``, ``"``, ``'`` or ``""``
            (plain), or ``""`` for a mapping or list.
        indent: a ``|`` block's indentation (its text's column 1 is at
            ``indent + 1``); 0 otherwise.
        single_line: the value is written on one line.
    """

    line: int
    column: int
    style: str = ""
    indent: int = 0
    single_line: bool = True

    def inside(self, line: int | None, column: int | None) -> tuple[int, int]:
        """Map a 1-based (line, column) in the value's text to the file's.

        Exact for a ``|`` block and for a value on one line (plain or quoted,
        assuming no escapes before the point); anything else maps to where
        the value starts.
        """
        if line is None or column is None:
            return self.line, self.column
        if self.style == "|":
            return self.line + line, self.indent + column
        if self.single_line and line == 1:
            quote = 1 if self.style in ('"', "'") else 0
            return self.line, self.column + quote + column - 1
        return self.line, self.column


PlaceFields = tuple[int, int, str, int, bool]
"""A ``Place``'s fields in order: what a load keeps per value, built into a ``Place`` when asked."""


def place(node: Any, lines: list[str] | None = None) -> Place | None:
    """Return the ``Place`` of a node, or None without one.

    ``lines`` is the file's text split in lines (``YamlTree.lines``): libyaml's
    marks carry no copy of the text, so a ``|`` block's indentation is read there.
    """
    fields = place_fields(node, lines)
    return None if fields is None else Place(*fields)


def place_fields(node: Any, lines: list[str] | None = None) -> PlaceFields | None:
    """Return the fields of the ``Place`` of a node (see ``place``), or None without one."""
    if node is None:
        return None
    start, end = node.start_mark, node.end_mark
    style = getattr(node, "style", None) or ""
    indent = 0
    if lines is None and start.buffer is not None:
        lines = start.buffer.splitlines()
    if style == "|" and lines is not None:
        for text in lines[start.line + 1 : end.line + 1]:
            if text.strip():
                indent = len(text) - len(text.lstrip(" "))
                break
    return (
        start.line + 1,
        start.column + 1,
        style if isinstance(style, str) else "",
        indent,
        start.line == end.line or (end.line == start.line + 1 and end.column == 0),
    )


def position(node: Any) -> tuple[int | None, int | None]:
    """Return the 1-based (line, column) where ``node`` starts, or (None, None)."""
    if node is None:
        return None, None
    return node.start_mark.line + 1, node.start_mark.column + 1
