"""Tables for the terminal that never cut a name, at any width.

A ``Grid`` has *kept* columns (names, ids, times: never cut, never wrapped)
and at most one *flexible* column (a note, an error) that wraps. It is laid
out for the console's width in the first of three forms that fits:

1. **columns**: every column side by side, the flexible one wrapped in what
   is left (at least ``MIN_FLEX`` cells, or its widest cell);
2. **note below**: the kept columns side by side, the flexible cell on the
   lines under its row, indented and wrapped to the full width;
3. **stacked**: one block per row: its *title* cells on the first line (or
   ``header: value`` of its first cell when no column is a title), then
   ``header: value`` of each other cell, packed on lines indented under it.

Every cell is one line, cleaned (``worker.cli.safe_text.one_line``: no
terminal escapes; a newline or tab in a value shown as a symbol) and printed
as ``Text``, never read as Rich markup. Columns are separated by two
spaces and have no borders, so the output stays greppable. Where a cell wraps
(the flexible one, a stacked pair longer than a line), a value is never
parted from its unit (``worker.cli.no_break``): ``12.5 %`` stays on one line.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from rich.console import Console
from rich.text import Text

from worker.cli.safe_text import one_line, wrap_text

GAP = 2
"""Cells between two columns."""

MIN_FLEX = 24
"""Narrowest the flexible column may be beside the others before it moves below its row."""

INDENT = 4
"""Indent of a flexible cell printed below its row, and of a stacked block's lines."""

Cell = str | Text

Form = Literal["columns", "note below", "stacked"]
"""The three forms of the module docstring, in the order they are tried."""


@dataclass(frozen=True)
class Column:
    """One column: its header, and how it is laid out.

    Attributes:
        header: the column's title.
        flex: the one column that may wrap (or move below its row); others are kept whole.
        justify: ``left`` or ``right`` (numbers).
        title: in the stacked form, the cell heads its row's block, unlabelled
            (a run's id and automation, say).
    """

    header: str
    flex: bool = False
    justify: Literal["left", "right"] = "left"
    title: bool = False


@dataclass
class Grid:
    """Rows of cells under columns; ``print`` lays them out (see the module docstring).

    Raises:
        ValueError: more than one flexible column, or one that is not last.
    """

    columns: Sequence[Column]
    rows: list[list[Text]] = field(default_factory=list)
    _indent: Text = field(default_factory=Text, init=False, repr=False)

    def __post_init__(self) -> None:
        flex = [i for i, c in enumerate(self.columns) if c.flex]
        if len(flex) > 1 or (flex and flex[0] != len(self.columns) - 1):
            raise ValueError("a grid has at most one flexible column, and it is the last")

    def add_row(self, *cells: Cell | None) -> None:
        """Add a row: one cell per column (``None`` or ``""`` for an empty cell)."""
        if len(cells) != len(self.columns):
            raise ValueError(f"{len(cells)} cells for {len(self.columns)} columns")
        self.rows.append([_text(cell) for cell in cells])

    def form(self, width: int) -> Form:
        """The form the grid takes in ``width`` cells: the first of the three that fits."""
        has_flex = bool(self.columns) and self.columns[-1].flex
        widths = self._kept_widths()
        used = sum(widths) + GAP * (len(widths) - 1)
        if used > width:
            return "stacked"
        if not has_flex:
            return "columns"
        room = width - used - GAP
        widest = self._width(len(widths))
        return "columns" if room >= min(MIN_FLEX, widest) and room > 0 else "note below"

    def print(self, console: Console, *, indent: int = 0) -> None:
        """Print the grid in the first form that fits ``console.width`` less ``indent``."""
        if not self.rows:
            return
        self._indent = Text(" " * indent)
        width = console.width - indent
        form = self.form(width)
        widths = self._kept_widths()
        if form == "stacked":
            self._stacked(console)
        elif form == "note below":
            self._note_below(console, widths)
        elif not (self.columns and self.columns[-1].flex):
            self._columns(console, widths, None)
        else:
            room = width - sum(widths) - GAP * len(widths)
            self._columns(console, widths, min(room, self._width(len(widths))))

    def _out(self, console: Console, line: Text) -> None:
        console.print(self._indent + line, soft_wrap=True)

    # -- the three forms -----------------------------------------------------

    def _kept_widths(self) -> list[int]:
        """The widths of the kept columns: all but a flexible last one."""
        kept = len(self.columns) - (1 if self.columns and self.columns[-1].flex else 0)
        return [self._width(i) for i in range(kept)]

    def _width(self, index: int) -> int:
        header = len(self.columns[index].header)
        return max([header, *(row[index].cell_len for row in self.rows)])

    def _line(self, cells: Sequence[Text], widths: Sequence[int]) -> Text:
        line = Text()
        for i, (cell, width) in enumerate(zip(cells, widths, strict=False)):
            pad = " " * (width - cell.cell_len)
            right = self.columns[i].justify == "right"
            line.append_text(Text(pad) + cell if right else cell + Text(pad))
            if i < len(widths) - 1:
                line.append(" " * GAP)
        line.rstrip()
        return line

    def _header(self, widths: Sequence[int]) -> Text:
        headers = [Text(c.header, style="bold") for c in self.columns[: len(widths)]]
        return self._line(headers, widths)

    def _columns(self, console: Console, widths: list[int], flex: int | None) -> None:
        all_widths = widths if flex is None else [*widths, flex]
        self._out(console, self._header(all_widths))
        start = sum(widths) + GAP * len(widths)
        for row in self.rows:
            if flex is None:
                self._out(console, self._line(row, widths))
                continue
            wrapped = wrap_text(console, row[-1], flex) if row[-1].plain else [Text()]
            first = self._line([*row[:-1], wrapped[0]], all_widths)
            self._out(console, first)
            for more in wrapped[1:]:
                self._out(console, Text(" " * start) + more)

    def _note_below(self, console: Console, widths: list[int]) -> None:
        self._out(console, self._header(widths))
        for row in self.rows:
            self._out(console, self._line(row[:-1], widths))
            if row[-1].plain:
                room = max(1, console.width - len(self._indent) - INDENT)
                for more in wrap_text(console, row[-1], room):
                    self._out(console, Text(" " * INDENT) + more)

    def _stacked(self, console: Console) -> None:
        room = max(1, console.width - len(self._indent) - INDENT)
        titled = [i for i, c in enumerate(self.columns) if c.title] or [0]
        for row in self.rows:
            if self.columns[titled[0]].title:
                head = Text(" " * GAP).join(row[i] for i in titled if row[i].plain)
                head.stylize("bold")
            else:
                head = Text(f"{self.columns[0].header}: ", style="bold") + row[0]
            self._out(console, head)
            pairs = [
                Text(f"{column.header}: ", style="dim") + cell
                for i, (column, cell) in enumerate(zip(self.columns, row, strict=True))
                if cell.plain and i not in titled
            ]
            for line in _pack(console, pairs, room):
                self._out(console, Text(" " * INDENT) + line)


def _pack(console: Console, pairs: list[Text], room: int) -> list[Text]:
    """Lay ``header: value`` pairs into lines of at most ``room`` cells, whole pairs first."""
    lines: list[Text] = []
    line = Text()
    for pair in pairs:
        if line.plain and line.cell_len + GAP + pair.cell_len <= room:
            line.append(" " * GAP)
            line.append_text(pair)
            continue
        if line.plain:
            lines.append(line)
        if pair.cell_len <= room:
            line = pair
        else:  # a pair longer than a line: wrapped on lines of its own
            lines.extend(wrap_text(console, pair, room))
            line = Text()
    if line.plain:
        lines.append(line)
    return lines


def _text(cell: Cell | None) -> Text:
    if cell is None:
        return Text()
    if isinstance(cell, Text):
        copy = cell.copy()
        copy.plain = one_line(copy.plain)
        return copy
    return Text(one_line(cell))
