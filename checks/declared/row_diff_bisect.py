"""The row diff of two sides: hash key ranges, and cut only the ranges whose hashes differ.

The method is data-diff's (datafold/data-diff, MIT; its fork reladiff): each
side sums a 60-bit hash of each row over a key range; equal rows and sums
mean the range is the same on both sides (up to a 60-bit collision), else it
is cut in sub-ranges and each is compared again, until a range holds at most
``leaf_rows`` rows: those rows' keys and hashes are then read from both sides
and compared key by key. Two departures from data-diff, which sends one
query per segment and cuts each in ``bisection_factor`` (32): each level here
is one ``GROUP BY`` statement per side over every range still open
(``Side.segments``), and a range is cut in as many parts as make each about
``leaf_rows`` rows (``parts_for``: at least 32, at most 1,024), so up to about
a million rows the first level's differing parts are read row by row at once.

With ``d`` differing rows among ``n``, the cost per side is a summary
(``count(*)``, and the key's ``min`` and ``max``: no hashing), one hashed scan
of the whole table, then for ``n`` over about a million one more level over
the differing ranges only (key ranges, where the key is one integer column),
and about ``d × leaf_rows`` key rows fetched: bench/README.md,
Reconciliation, has the measurements.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from checks.declared.compare_sides import Range, Side, Summary
from checks.declared.row_text import POSITIONS

FACTOR = 32
"""Sub-ranges a differing range is cut in at least (data-diff's ``bisection_factor``)."""
MAX_PARTS = 1_024
"""Sub-ranges a range is cut in at most."""
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


def parts_for(rows: int, width: int, *, factor: int = FACTOR, leaf_rows: int = LEAF_ROWS) -> int:
    """How many sub-ranges a differing range of ``rows`` rows is cut in.

    Enough that each holds about ``leaf_rows`` rows (then read row by row at
    once), at least ``factor``, at most ``MAX_PARTS`` and ``width``.
    """
    wanted = max(factor, -(-rows // leaf_rows))
    return max(1, min(wanted, MAX_PARTS, width))


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
        factor: sub-ranges a differing range is cut in, at least.
        leaf_rows: the largest range read row by row.

    Raises:
        QueryError: a side's query failed (from the sides).
    """
    found = RowDiff()
    a, b = left.summary(), right.summary()
    found.summaries = (a, b)
    if a.rows == 0 and b.rows == 0:
        return found
    null_at: int | None = None
    if int_key:
        lows = [s.low for s in (a, b) if s.low is not None]
        highs = [s.high for s in (a, b) if s.high is not None]
        whole = (min(lows), max(highs) + 1) if lows else (0, 1)
        if a.null_keys or b.null_keys:  # NULL keys go just below every key of both sides
            null_at = whole[0] - 1
            whole = (null_at, whole[1])
            left.spec.null_at = right.spec.null_at = null_at
    else:
        whole = (0, POSITIONS)
    open_ranges: list[tuple[Range, int]] = [(whole, max(a.rows, b.rows))]
    first = True
    while open_ranges:
        # the first range is always cut (its hash sums are the whole tables' comparison)
        leaves = [] if first else [(r, n) for r, n in open_ranges if n <= leaf_rows]
        cut = [(r, n) for r, n in open_ranges if (r, n) not in leaves]
        _read_leaves(left, right, leaves, found)
        open_ranges, first = [], False
        if cut:
            found.levels += 1
        for batch in _batches(cut, factor, leaf_rows):
            ours, theirs = left.segments(batch), right.segments(batch)
            for part in sorted(set(ours) | set(theirs)):
                if ours.get(part) != theirs.get(part):
                    rows = max(ours.get(part, (0, 0))[0], theirs.get(part, (0, 0))[0])
                    open_ranges.append((part, rows))
    for keys in (found.missing, found.extra, found.different):  # in key order
        keys.sort(key=lambda k: (key_position(k, int_key, null_at), k) if int_key else (0, k))
    return found


def _batches(
    cut: list[tuple[Range, int]], factor: int, leaf_rows: int
) -> list[list[tuple[Range, int]]]:
    """The ranges to cut with their parts, in statements of at most ``MAX_FETCH`` parts."""
    batches: list[list[tuple[Range, int]]] = [[]]
    total = 0
    for whole, rows in cut:
        parts = parts_for(rows, whole[1] - whole[0], factor=factor, leaf_rows=leaf_rows)
        if batches[-1] and (total + parts > MAX_FETCH or len(batches[-1]) >= MAX_RANGES):
            batches.append([])
            total = 0
        batches[-1].append((whole, parts))
        total += parts
    return [b for b in batches if b]


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
    position = key_position(key, left.spec.int_key, left.spec.null_at)
    return whole[0] <= position < whole[1]


def key_position(key: str, int_key: bool, null_at: int | None = None) -> int:
    """A key's position from its normal text (``:123`` for an integer key; ``""`` for NULL)."""
    from checks.declared.row_text import KEY_DIGITS, py_hash

    if not int_key:
        return py_hash(key, KEY_DIGITS)
    if key == "":
        assert null_at is not None  # a NULL integer key was seen, so placed
        return null_at
    return int(key.removeprefix(":").split(".")[0])
