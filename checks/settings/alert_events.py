"""What an alert is about: the events a run announces, for the channels and routes."""

from __future__ import annotations

from enum import StrEnum


class EventKind(StrEnum):
    """What an alert is about; also the keys of ``alerts.routes`` and a channel's ``events``."""

    NEEDS_ATTENTION = "needs_attention"
    DOUBLE_CHECK_DISAGREES = "double_check_disagrees"
    CHANGED_SINCE_LAST_RUN = "changed_since_last_run"
    RUN_ERROR = "run_error"
    RESOLVED = "resolved"
    WARNED = "warned"


ALL_EVENTS: tuple[EventKind, ...] = tuple(EventKind)
