"""The row diff of two sides: hash key ranges, and cut only the ranges whose hashes differ.

The method is data-diff's (datafold/data-diff, MIT; its fork reladiff): each
side sums a 60-bit hash of each row over a key range; equal rows and sums
mean the range is the same on both sides (up to a 60-bit collision), else it
is cut in ``factor`` sub-ranges and each is compared again, until a range
holds at most ``leaf_rows`` rows: those rows' keys and hashes are then read
from both sides and compared key by key. Unlike data-diff, which sends one
query per segment, each level here is one ``GROUP BY`` statement per side
over every range still open (``Side.segments``), so the number of queries
grows with the depth (log of the rows, base ``factor``), not with the
number of differences.

With ``d`` differing rows among ``n`` the cost is one summary and about
``log_factor(n / leaf_rows)`` grouped statements per side, each reading only
the open ranges (where the key is one integer column, those are key ranges),
and at most ``d × leaf_rows`` rows fetched per side: bench/README.md,
Reconciliation, has the measurements.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from checks.declared.compare_sides import Range, Side, Summary
from checks.declared.row_text import POSITIONS

FACTOR = 32
"""Sub-ranges a differing range is cut in (data-diff's ``bisection_factor``)."""
LEAF_ROWS = 1_000
"""A range of at most this many rows (on either side) is read row by row."""
MAX_RANGES = 64
"""Ranges one statement asks about (its SQL grows with them)."""
MAX_FETCH = 10_000
"""Rows one statement may fetch (``Limits.max_rows``' own ceiling)."""


@dataclass
class RowDiff:
    """What the row diff found.

    Attributes:
        missing: keys (normal text) in ``with`` only, sorted (an integer key by its value).
        extra: keys in ``table`` only, sorted.
        different: keys on both sides whose rows differ, sorted.
        where: the leaf range each of those keys was found in (for the samples).
        summaries: the two sides' summaries (``table``, ``with``).
        levels: grouped statements per side (the depth reached).
        rows_fetched: key rows read from each side (``table``, ``with``).
    """

    missing: list[str] = field(default_factory=list)
    extra: list[str] = field(default_factory=list)
    different: list[str] = field(default_factory=list)
    where: dict[str, Range] = field(default_factory=dict)
    summaries: tuple[Summary, Summary] | None = None
    levels: int = 0
    rows_fetched: list[int] = field(default_factory=lambda: [0, 0])


def diff_rows(
    left: Side,
    right: Side,
    *,
    int_key: bool,
    factor: int = FACTOR,
    leaf_rows: int = LEAF_ROWS,
) -> RowDiff:
    """Compare ``left`` (the check's ``table``) with ``right`` (its ``with``), row by row.

    Args:
        int_key: key positions are the key's own values (else 60-bit hashes in
            ``[0, 2**60)``).
        factor: sub-ranges per differing range (at least 2).
        leaf_rows: the largest range read row by row.

    Raises:
        QueryError: a side's query failed (from the sides).
    """
    found = RowDiff()
    a, b = left.summary(), right.summary()
    found.summaries = (a, b)
    if (a.rows, a.checksum) == (b.rows, b.checksum):
        return found
    if int_key:
        lows = [s.low for s in (a, b) if s.low is not None]
        highs = [s.high for s in (a, b) if s.high is not None]
        whole = (min(lows), max(highs) + 1)
    else:
        whole = (0, POSITIONS)
    open_ranges: list[tuple[Range, int]] = [(whole, max(a.rows, b.rows))]
    while open_ranges:
        leaves = [(r, n) for r, n in open_ranges if n <= leaf_rows or r[1] - r[0] <= factor]
        cut = [r for r, n in open_ranges if (r, n) not in leaves]
        _read_leaves(left, right, leaves, found)
        open_ranges = []
        if cut:
            found.levels += 1
        for start in range(0, len(cut), MAX_RANGES):
            batch = cut[start : start + MAX_RANGES]
            ours, theirs = left.segments(batch, factor), right.segments(batch, factor)
            for part in sorted(set(ours) | set(theirs)):
                if ours.get(part) != theirs.get(part):
                    rows = max(ours.get(part, (0, 0))[0], theirs.get(part, (0, 0))[0])
                    open_ranges.append((part, rows))
    for keys in (found.missing, found.extra, found.different):  # in key order, by position
        keys.sort(key=lambda k: (key_position(k, int_key=int_key), k) if int_key else (0, k))
    return found


def _read_leaves(left: Side, right: Side, leaves: list[tuple[Range, int]], found: RowDiff) -> None:
    """Read the leaves' key rows from both sides, a statement per ``MAX_FETCH`` rows."""
    batch: list[Range] = []
    rows = 0
    for index, (whole, count) in enumerate(leaves):
        batch.append(whole)
        rows += count
        last = index == len(leaves) - 1
        if last or rows + leaves[index + 1][1] > MAX_FETCH or len(batch) >= MAX_RANGES:
            _compare_leaves(left, right, batch, rows, found)
            batch, rows = [], 0


def _compare_leaves(
    left: Side, right: Side, ranges: list[Range], rows: int, found: RowDiff
) -> None:
    ours, theirs = left.keyed(ranges, rows), right.keyed(ranges, rows)
    found.rows_fetched[0] += sum(len(v) for v in ours.values())
    found.rows_fetched[1] += sum(len(v) for v in theirs.values())
    for key in set(ours) | set(theirs):
        mine, other = ours.get(key), theirs.get(key)
        if mine is None:
            found.missing.append(key)
        elif other is None:
            found.extra.append(key)
        elif sorted(mine) != sorted(other):
            found.different.append(key)
        else:
            continue
        found.where[key] = next(r for r in ranges if _holds(r, key, left, right))


def _holds(whole: Range, key: str, left: Side, right: Side) -> bool:
    """Whether the leaf ``whole`` holds ``key`` (its position, on the side's terms)."""
    position = key_position(key, int_key=left.spec.int_key)
    return whole[0] <= position < whole[1]


def key_position(key: str, *, int_key: bool) -> int:
    """A key's position from its normal text (``:123`` for an integer key)."""
    from checks.declared.row_text import KEY_DIGITS, py_hash

    if int_key:
        return int(key.removeprefix(":").split(".")[0])
    return py_hash(key, KEY_DIGITS)
