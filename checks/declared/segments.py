"""Segments (``by:``): a typed check judged once per segment of its scope, failing when one fails.

A check whose kind's block has ``by: [region]`` runs one grouped counts query
(``checks.declared.segment_sql``): one row per segment (per segment and bucket
with ``over:``). Each segment is then judged exactly as the check alone would
be over that segment's rows, by the same code (``Judge``, an anomaly against
its own history, its warning level): a percent in ``expect`` is a percent of
the segment's rows. The check:

- **fails** when any segment fails; its ``value`` is how many segments failed,
  and its words name the failing ones (``MAX_NAMED``, then "and N more");
- else is in **error** when a segment is; else **warned** when a segment is;
- else **passes** when a segment passed (segments not evaluated are counted
  in its reason); else, no segment judged, is **not evaluated**;
- over an empty scope (no segment) is not evaluated; with ``allow_empty`` it is
  judged as the check without ``by:`` would be over that empty scope.

NULL in a ``by:`` column is a segment of its own, named ``NULL``. At most
``limits.max_segments`` segments are judged: past it the check is **not
evaluated** and says how many there were (never silently cut). Segment values
are data: they reach SQL only as literals (the failing segments' sample), and
every renderer escapes them (``segment_label`` writes one as a Markdown code span).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import math
from collections.abc import Callable
from dataclasses import replace
from decimal import Decimal, InvalidOperation
from typing import Any

from checks.automation.check import Check
from checks.declared.compile import Compiled
from checks.declared.segment_sql import SegmentValues, result_names
from checks.fields.warn_level import breaks_warning
from checks.kinds.base import Judged
from checks.report import CheckOutcome, CheckResult, Evidence, Segment, Segments

MAX_NAMED = 5
"""At most this many failing segments are named in a check's words; the rest are counted."""

MAX_LABEL_CHARS = 60
"""A segment's name is cut to this many characters where words show it."""

PerSegment = Callable[[CheckResult, Compiled, list[str], list[list[Any]], str], Judged]
"""Judges one segment into its result: (result, compiled with the segment's scope in
words, the counts' columns and rows without the segment columns, the series metric of
its history) → what judging found (``checks.declared.typed``)."""


def rows_needed(max_segments: int, buckets: int) -> int:
    """Rows the counts query is read up to: every segment's buckets, and one more to tell."""
    return max_segments * buckets + 1


MAX_HEX_BYTES = 8
"""A binary segment value longer than this is named by its first bytes and a digest."""


def value_name(value: Any) -> str:
    """One segment value in words: ``NULL``, ``true``, ``2024-01-01``, the text itself.

    Bytes are hex, ``0x00ff``; past ``MAX_HEX_BYTES`` bytes cut, with their length and
    8 hex digits of their SHA-256 (``0x0001020304050607… (40 bytes, sha256 1f2e3d4c)``),
    so two values never share a name.
    """
    if value is None:
        return "NULL"
    if isinstance(value, bytes | bytearray | memoryview):
        data = bytes(value)
        if len(data) <= MAX_HEX_BYTES:
            return "0x" + data.hex()
        digest = hashlib.sha256(data).hexdigest()[:8]
        return f"0x{data[:MAX_HEX_BYTES].hex()}… ({len(data)} bytes, sha256 {digest})"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dt.datetime):
        return value.isoformat(sep=" ")
    if isinstance(value, dt.date):
        return value.isoformat()
    return str(value)


def segment_name(values: SegmentValues) -> str:
    """A segment's name: its values in words, joined by `` / `` for several columns."""
    return " / ".join(value_name(v) for v in values)


def segment_label(name: str) -> str:
    r"""A segment's name as a Markdown code span: no formatting, link or tag inside it works.

    Cut to ``MAX_LABEL_CHARS``; control characters written as ``\xNN``; the fence
    is one backtick longer than the longest run inside (CommonMark, code spans).
    """
    text = name if len(name) <= MAX_LABEL_CHARS else name[: MAX_LABEL_CHARS - 1] + "…"
    text = "".join(c if c.isprintable() else f"\\x{ord(c):02x}" for c in text)
    run = longest = 0
    for char in text:
        run = run + 1 if char == "`" else 0
        longest = max(longest, run)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith(("`", " ")) or text.endswith(("`", " ")) else ""
    return f"{fence}{pad}{text}{pad}{fence}"


_NAN = math.nan
_DECIMAL_NAN = Decimal("NaN")


def is_nan(value: Any) -> bool:
    """Whether ``value`` is a float or Decimal NaN (never equal to itself)."""
    return isinstance(value, float | Decimal) and value != value


def _hashable(value: Any) -> Any:
    """A value as a segment key: one NaN object per type (NaN != NaN would split a segment)."""
    if is_nan(value):
        return _NAN if isinstance(value, float) else _DECIMAL_NAN
    if isinstance(value, bytearray | memoryview):
        return bytes(value)
    try:
        hash(value)
    except TypeError:
        return json.dumps(value, default=str, sort_keys=True)
    return value


def _order(values: SegmentValues) -> tuple[Any, ...]:
    """Values ascending (-inf first, inf after every number), then NaN, then NULL."""
    return tuple((2, 0) if v is None else (1, 0) if is_nan(v) else (0, v) for v in values)


def _sorted(keys: list[SegmentValues]) -> list[SegmentValues]:
    """Values ascending, NaN then NULL last (text by its characters, as Python compares them)."""
    try:
        return sorted(keys, key=_order)
    except (TypeError, InvalidOperation):  # values of mixed types in one column: by their words
        return sorted(keys, key=lambda k: tuple((v is None, value_name(v)) for v in k))


def judge_segments(
    result: CheckResult,
    check: Check,
    compiled: Compiled,
    columns: list[str],
    rows: list[list[Any]],
    row_count: int,
    max_segments: int,
    per_segment: PerSegment,
) -> tuple[int, list[SegmentValues]]:
    """Judge each segment of the counts' result into ``result`` (the rules: the docstring).

    Args:
        result: the check's result, filled in place.
        check: the check (its kind has ``by``).
        compiled: its compiled SQL; ``compiled.segments`` names the ``by:`` columns.
        columns: the counts' columns (``segment_1``… among them).
        rows: the rows read (at most ``rows_needed``).
        row_count: the rows the counts query returned in all.
        max_segments: ``limits.max_segments``.
        per_segment: judges one segment (``PerSegment``).

    Returns:
        (the rows the failing segments' sample would hold, the failing segments' values).
    """
    spec = check.spec
    assert spec is not None and spec.by
    by = list(compiled.segments) or list(spec.by)
    names = result_names(len(by))
    at = [columns.index(n) for n in names] if rows else []  # chdb names no column of no row
    kept = [c for i, c in enumerate(columns) if i not in at]
    groups: dict[SegmentValues, list[list[Any]]] = {}
    for row in rows:
        key = tuple(_hashable(row[i]) for i in at)
        groups.setdefault(key, []).append([v for i, v in enumerate(row) if i not in at])
    result.metrics = {"compared": spec.compared}
    result.segments = Segments(by=by)
    words = ", ".join(by)
    if row_count > len(rows) or len(groups) > max_segments:
        many = len(groups) if row_count <= len(rows) else f"more than {max_segments}"
        result.reason = (
            f"{many} segments by {words} in scope: {compiled.scope}; at most {max_segments}"
            " are judged (limits.max_segments): segment by fewer values, or raise the limit"
        )
        return 0, []
    if not groups:  # with allow_empty, judged as one check instead (``checks.declared.typed``)
        result.reason = f"0 rows in scope: {compiled.scope}"
        result.metrics.update(rows_in_scope=0, segments=0)
        return 0, []
    sample_rows = 0
    failing: list[SegmentValues] = []
    for key in _sorted(list(groups)):
        name = segment_name(key)
        own = CheckResult(check.name, "", result.expect, None, result.outcome, kind=spec.KIND)
        scope = replace(compiled, scope=f"{compiled.scope} ({words}: {segment_label(name)})")
        segment = Segment(name, dict(zip(by, key, strict=True)), CheckOutcome.NOT_EVALUATED)
        judged = per_segment(own, scope, kept, groups[key], segment.series_metric)
        _warn_level(own, check)
        if own.buckets is not None:
            result.buckets = own.buckets
        segment.outcome, segment.value, segment.metrics = own.outcome, own.value, own.metrics
        segment.rows_in_scope = _count(own.metrics.get("rows_in_scope"))
        segment.reason, segment.error, segment.anomaly = own.reason, own.error, own.anomaly
        result.segments.items.append(segment)
        if own.outcome is CheckOutcome.FAILED:
            sample_rows += judged.sample_rows
            failing.append(key)
    _overall(result, result.segments)
    return sample_rows, failing


def judged_alone(
    check: Check, run: Callable[[Check], tuple[CheckResult, list[Evidence]]]
) -> tuple[CheckResult, list[Evidence]]:
    """A segmented check over an empty scope with ``allow_empty``: judged as without ``by:``.

    No segment exists, so the check is the one check over its empty scope (a
    ``row_count`` of 0 against ``> 0`` fails), run by ``run`` without ``by:`` and
    without history (its series are its segments'); its ``segments`` are empty,
    its metrics say 0 segments.
    """
    spec = check.spec
    assert spec is not None and spec.by
    alone = check.model_copy()
    alone._spec = spec.model_copy(update={"by": None})
    result, evidence = run(alone)
    result.segments = Segments(by=list(spec.by))
    result.metrics.update(segments=0, segments_failed=0)
    return result, evidence


def _count(value: Any) -> int:
    return int(value) if isinstance(value, int | float | Decimal) else 0


def _warn_level(own: CheckResult, check: Check) -> None:
    """A passed segment beyond the check's ``warn:`` is warned (as a check alone would be)."""
    if check.warn is None or own.outcome is not CheckOutcome.PASSED or own.value is None:
        return
    if breaks_warning(check.warn, own.value, own.metrics).passed is False:
        own.outcome = CheckOutcome.WARNED
        note = f"beyond the warning level {check.warn.text}"
        own.reason = "; ".join(part for part in (own.reason, note) if part)


def _overall(result: CheckResult, segments: Segments) -> None:
    """The check's outcome, value and metrics from its segments' (the rules: the docstring)."""
    failed = segments.having(CheckOutcome.FAILED)
    errors = segments.having(CheckOutcome.ERROR)
    warned = segments.having(CheckOutcome.WARNED)
    passed = segments.having(CheckOutcome.PASSED)
    skipped = segments.having(CheckOutcome.NOT_EVALUATED)
    result.value = len(failed)
    result.metrics.update(
        rows_in_scope=sum(s.rows_in_scope for s in segments.items),
        segments=len(segments.items),
        segments_failed=len(failed),
        segments_warned=len(warned),
        segments_not_evaluated=len(skipped),
        segments_in_error=len(errors),
    )
    notes = []
    if errors and failed:
        notes.append(f"{_many(len(errors))} in error ({_said(errors[0], errors[0].error)})")
    if skipped and (failed or warned or passed):
        notes.append(
            f"{_many(len(skipped))} not evaluated ({_said(skipped[0], skipped[0].reason)})"
        )
    result.reason = "; ".join(notes) or None
    if failed:
        result.outcome = CheckOutcome.FAILED
    elif errors:
        result.outcome = CheckOutcome.ERROR
        result.error = f"segment {_said(errors[0], errors[0].error)}"
    elif warned:
        result.outcome = CheckOutcome.WARNED
    elif passed:
        result.outcome = CheckOutcome.PASSED
    else:
        result.outcome = CheckOutcome.NOT_EVALUATED
        first = skipped[0]
        result.reason = (
            f"no segment was judged ({_many(len(skipped))}); {_said(first, first.reason)}"
        )


def _said(segment: Segment, text: str | None) -> str:
    """``label: text``, the segment named as a code span (its reason names it in words too)."""
    return f"{segment_label(segment.name)}: {text}"


def _many(count: int) -> str:
    return f"{count} segment{'' if count == 1 else 's'}"
