"""Ops' resolution of an earlier run, as the next run is told it (the agent, the pinned plan)."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass


@dataclass(frozen=True)
class OpsResolution:
    """Ops' resolution of an earlier run: its reason, comment (untrusted text) and when.

    Attributes:
        run_id: the run resolved.
        reason: ``false_positive`` or ``expected``.
        comment: what the person wrote, or None; untrusted text.
        finding: the resolved run's finding.
        labelled_at: when it was resolved (aware, UTC).
    """

    run_id: int
    reason: str
    comment: str | None
    finding: str | None
    labelled_at: dt.datetime
