"""The clock every room reads: the current time, zone-aware in UTC (the store keeps UTC)."""

from __future__ import annotations

import datetime as dt


def utcnow() -> dt.datetime:
    """Return the current time, zone-aware in UTC."""
    return dt.datetime.now(dt.UTC)
