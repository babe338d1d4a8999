"""What a statement reads: an engine's estimate before it runs, and a run's total in words.

``Source.estimate_scan`` gives a ``ScanEstimate`` for one checked statement
(None where the engine gives nothing); ``ScanTotal`` sums a run's, counting
the statements that could not be estimated; ``size_words`` writes a byte
count as people read it ("1.2 GB"). What a statement actually read, where an
engine reports it after running, is a ``ScanStats`` on ``QueryResult.scanned``.
No sqlglot or pydantic here: a DuckDB query process imports ``result``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class ScanEstimate:
    """What one statement would read, estimated before it runs.

    Attributes:
        bytes: bytes read from the tables (an engine's estimate), >= 0.
        rows: rows read from the tables, >= 0.
        how: how it was obtained, in words ("EXPLAIN estimate and relation
            sizes", "statistics").

    """

    bytes: int
    rows: int
    how: str


@dataclass(frozen=True)
class ScanStats:
    """What one statement read, as the engine reported it after running it.

    Attributes:
        bytes: bytes the engine says it read (None: it reports rows only).
        rows: rows the engine says it read (None: it reports bytes only).
        how: where the figure comes from ("query statistics").

    """

    bytes: int | None
    rows: int | None
    how: str


@dataclass
class ScanTotal:
    """A run's bytes and rows read: the sum of its statements' estimates.

    Attributes:
        bytes: bytes summed over the estimated statements.
        rows: rows summed over the estimated statements.
        statements: statements estimated.
        unestimated: statements the engine gave no estimate for (not in the sums).
        how: each distinct ``ScanEstimate.how`` seen, in order.

    """

    bytes: int = 0
    rows: int = 0
    statements: int = 0
    unestimated: int = 0
    how: list[str] = field(default_factory=list)

    def add(self, found: ScanEstimate | None) -> None:
        """Count one statement's estimate (None: the engine gave none)."""
        if found is None:
            self.unestimated += 1
            return
        self.bytes += found.bytes
        self.rows += found.rows
        self.statements += 1
        if found.how not in self.how:
            self.how.append(found.how)

    def to_dict(self) -> dict[str, Any]:
        """The report's ``scanned`` entry.

        ``{"bytes", "rows", "estimated": true, "statements", "unestimated", "how"}``;
        ``bytes`` and ``rows`` are None when no statement could be estimated.
        """
        known = self.statements > 0
        return {
            "bytes": self.bytes if known else None,
            "rows": self.rows if known else None,
            "estimated": True,
            "statements": self.statements,
            "unestimated": self.unestimated,
            "how": list(self.how),
        }


_UNITS = ("bytes", "KB", "MB", "GB", "TB", "PB")


def size_words(count: int) -> str:
    """A byte count in decimal units, as people read it.

    ``0`` → ``"0 bytes"``, ``999`` → ``"999 bytes"``, ``1_234_567`` → ``"1.2 MB"``,
    ``10_000_000_000`` → ``"10 GB"`` (1 KB = 1000 bytes; one decimal, dropped
    when it is 0).
    """
    value, unit = float(count), 0
    while value >= 1000 and unit < len(_UNITS) - 1:
        value, unit = value / 1000, unit + 1
    if unit == 0:
        return f"{count} bytes" if count != 1 else "1 byte"
    shown = f"{value:.1f}".removesuffix(".0")
    return f"{shown} {_UNITS[unit]}"


def scanned_words(scanned: dict[str, Any] | None) -> str | None:
    """A report's ``scanned`` entry in words: ``"read about 1.2 GB (estimate)"``.

    None when the report has no entry; ``"were not estimated: this engine gives
    no estimate of bytes read"`` when no statement could be estimated (the
    words follow "the queries"). Statements the engine
    could not estimate are named: ``"… (estimate; 2 statements not estimated)"``;
    a run refused over its ``max_bytes`` (``refused``) says ``"would have read
    about 12.3 GB (estimate); none ran"``.
    """
    if not scanned:
        return None
    if scanned.get("bytes") is None:
        return "were not estimated: this engine gives no estimate of bytes read"
    left = int(scanned.get("unestimated") or 0)
    note = "estimate" if scanned.get("estimated", True) else "reported by the engine"
    if left:
        note += f"; {left} statement{'s' if left != 1 else ''} not estimated"
    size = size_words(int(scanned["bytes"]))
    if scanned.get("refused"):
        return f"would have read about {size} ({note}); none ran"
    return f"read about {size} ({note})"
