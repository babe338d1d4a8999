"""A check's result in words: ``12 of 1,000 rows missing (1.20 %)``, ``3h 12m old``.

Used by the finding's Markdown summary (``checks.finding.check_lines``), the
agent's override text and the alerts. Numbers come from the check's metrics,
each typed kind's words from its kind (``Kind.words``), shown as
``checks.kinds.in_words`` shows numbers, percents and durations.
"""

from __future__ import annotations

from checks.declared import anomaly
from checks.declared.segments import MAX_NAMED, segment_label
from checks.fields.expectation import parse_expectation
from checks.kinds.in_words import duration, metric, number, percent
from checks.kinds.registry import KINDS
from checks.report import Buckets, CheckOutcome, CheckResult, Segment, Segments


def _unit(expect: str) -> str | None:
    try:
        return parse_expectation(expect).unit
    except ValueError:
        return None


def _sql(check: CheckResult) -> str:
    if check.expect in ("empty", "not empty"):
        rows = int(check.value or 0)
        return f"{rows} row{'' if rows == 1 else 's'}"
    if "count" in check.metrics and "total" in check.metrics:
        count, total = metric(check, "count"), metric(check, "total")
        return f"{count:,} of {total:,} ({percent(count, total)})"
    if isinstance(check.value, float) and _unit(check.expect) == "duration":
        return duration(check.value)
    return number(check.value)


def measured(check: CheckResult) -> str:
    """What a judged check measured, in words (its kind's numbers).

    A typed check compared as a percent (``expect: < 5%``) also gives the
    compared count (``metrics["compared"]``) as a percent of its rows in
    scope, e.g. ``… in 334,264 rows (14.99 %)``.
    """
    if check.segments is not None and check.segments.items:  # none: judged as one check
        return segments_text(check, check.segments)
    kind = KINDS.get(check.kind)
    if check.kind == "sql":
        text = _sql(check)
    else:
        text = kind.words(check) if kind is not None else number(check.value)
    compared = check.metrics.get("compared")
    if (
        not (kind is not None and kind.SHOWS_ITS_PERCENT)
        and isinstance(compared, str)
        and _unit(check.expect) == "percent"
    ):
        text += f" ({percent(metric(check, compared), metric(check, 'rows_in_scope'))})"
    return text


def segments_text(check: CheckResult, segments: Segments) -> str:
    """A segmented check in words: how many segments failed, the first ``MAX_NAMED`` named.

    ``2 of 16 segments by carrier failed: `AA`: 35 of 1,000 rows missing (3.50 %); `UA`:
    …; and 3 more`` (names as Markdown code spans, ``segment_label``); with no failure,
    the warned ones, else how many passed.
    """
    total, by = len(segments.items), ", ".join(segments.by)
    head = f"{total:,} segment{'' if total == 1 else 's'} by {by}"
    shown = segments.failed
    if shown:
        head = f"{len(shown):,} of {head} failed"
    else:
        shown = segments.having(CheckOutcome.WARNED)
        passed = len(segments.having(CheckOutcome.PASSED))
        head += f": {len(shown):,} warned" if shown else f": {passed:,} passed"
    named = [f"{segment_label(s.name)}: {segment_words(check, s)}" for s in shown[:MAX_NAMED]]
    if len(shown) > MAX_NAMED:
        named.append(f"and {len(shown) - MAX_NAMED:,} more")
    return f"{head}: {'; '.join(named)}" if named else head


def segment_words(check: CheckResult, segment: Segment) -> str:
    """One segment of ``check`` in words, as its kind words a check (its anomaly too).

    ``71 of 17,416 rows missing (0.41 %)``: plain text, the segment's name is not in it.
    """
    alone = CheckResult(
        check.name,
        "",
        check.expect,
        segment.value,
        segment.outcome,
        kind=check.kind,
        metrics=segment.metrics,
        anomaly=segment.anomaly,
    )
    text = measured(alone)
    if segment.anomaly is not None:
        text += f", {anomaly.describe(segment.anomaly)}"
    return text


def buckets_text(found: Buckets) -> str:
    """Which bucket was tested and which is still filling, in words."""
    filling = (
        "" if found.filling_value is None else f" ({anomaly.figure(found.filling_value)} so far)"
    )
    return (
        f"tested the {found.bucket} from {_when(found.tested_start)} ({found.timezone});"
        f" the {found.bucket} from {_when(found.filling_start)} is still filling{filling}"
        " and is not tested"
    )


def _when(iso: str) -> str:
    return iso[:16].replace("T", " ")


def describe_value(check: CheckResult) -> str:
    """The check's result in words, e.g. ``722 rows``, ``0.0245``, ``not evaluated: …``."""
    if check.outcome is CheckOutcome.ERROR:
        return f"error: {check.error}"
    if check.outcome is CheckOutcome.NOT_EVALUATED:
        return f"not evaluated: {check.reason}"
    text = measured(check)
    if check.anomaly is not None:
        text += f"; {anomaly.describe(check.anomaly)}"
    if check.buckets is not None:
        text += f"; {buckets_text(check.buckets)}"
    if check.reason:
        text += f"; {check.reason}"
    return text
