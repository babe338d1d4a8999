"""The words of a report: a run's status, its finding, a check's outcome, who decided."""

from __future__ import annotations

from enum import StrEnum


class Status(StrEnum):
    """Where a run is. ``completed`` runs have a finding; the others do not."""

    QUEUED = "queued"
    RUNNING = "running"
    COMPLETED = "completed"
    ERROR = "error"
    SKIPPED = "skipped"


class Finding(StrEnum):
    """The answer a completed run gives."""

    CLEAR = "clear"
    NEEDS_ATTENTION = "needs_attention"


class CheckOutcome(StrEnum):
    """How one declared check came out.

    ``not_evaluated`` is neither a pass nor a failure: the check could not look
    at any data (0 rows in its scope, an empty table, a percent over 0 rows).
    It makes the run Needs attention, with its reason, unless the check allows
    an empty scope (``allow_empty: true``; it then counts as passed and says so).

    ``warned`` held its ``expect`` but broke its stricter ``warn`` level
    (``checks.fields.warn_level``): not a failure, the run stays Clear, and
    the summary counts it.
    """

    PASSED = "passed"
    WARNED = "warned"
    FAILED = "failed"
    ERROR = "error"
    NOT_EVALUATED = "not_evaluated"


class FindingSource(StrEnum):
    """Who decided the finding: the checks, the agent, the runtime overriding it, or a plan.

    ``pinned``: the automation's pinned plan, an earlier accepted agent report
    whose evidence is unchanged (``checks.pinned``); no LLM was asked.
    """

    CHECKS = "checks"
    AGENT = "agent"
    OVERRIDE = "override"
    PINNED = "pinned"


FRESH_TRIGGER = "fresh"
"""The trigger of an on-demand service run asked to ignore the pinned plan (``run-now --fresh``).

Runs are triggered ``schedule``, ``manual``, ``eval`` or ``fresh``.
"""
