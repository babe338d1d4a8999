"""The store's clock: one clock for every process that shares a store, and the skew warning.

Slot and lease times are read from the database (``store_now``), never from a
process's wall clock, so a worker whose clock is ahead or behind neither drops
slots nor lets leases run out early: every time compared in the store was
written by the same clock. Each process still compares its own clock with the
store's (``SkewWatch``) and warns when they differ by more than
``service.clock_skew_warn_s``, since the process's clock still stamps its own
logs and reports.
"""

from __future__ import annotations

import datetime as dt
import logging
import threading
from typing import Any

from sqlalchemy import ColumnElement, func, select
from sqlalchemy.engine import Connection

log = logging.getLogger("lookout.clock")


def store_now_sql(dialect: str) -> ColumnElement[Any]:
    """The database's current time as a SQL expression, for ``dialect`` (SQLAlchemy's name).

    PostgreSQL: ``clock_timestamp()`` (the time now, not the transaction's
    start like ``now()``), a ``timestamptz``. SQLite: ``strftime('%Y-%m-%d
    %H:%M:%f', 'now')``, UTC text to the millisecond (SQLite's date and time
    functions). Any other database: ``CURRENT_TIMESTAMP``.
    """
    if dialect == "postgresql":
        return func.clock_timestamp()
    if dialect == "sqlite":
        return func.strftime("%Y-%m-%d %H:%M:%f", "now")
    return func.current_timestamp()


def store_now(connection: Connection) -> dt.datetime:
    """Return the store's current time, zone-aware in UTC, read on ``connection``.

    Raises:
        sqlalchemy.exc.SQLAlchemyError: when the store cannot be read.
    """
    value = connection.execute(select(store_now_sql(connection.dialect.name))).scalar_one()
    if isinstance(value, str):  # SQLite's text, UTC
        value = dt.datetime.fromisoformat(value)
    if not isinstance(value, dt.datetime):
        raise TypeError(f"the store's clock gave {value!r}, not a time")
    if value.tzinfo is None:  # SQLite, or CURRENT_TIMESTAMP without a zone: UTC
        return value.replace(tzinfo=dt.UTC)
    return value.astimezone(dt.UTC)


def skew_message(process: dt.datetime, store: dt.datetime, threshold_s: float) -> str:
    """The warning's text: both times, their difference (process minus store, in s), the limit."""
    difference = (process - store).total_seconds()
    return (
        f"this process's clock reads {process.isoformat(timespec='milliseconds')} but the "
        f"store's reads {store.isoformat(timespec='milliseconds')}: {difference:+.1f} s apart, "
        f"more than service.clock_skew_warn_s ({threshold_s:g} s); slot and lease times "
        "follow the store's clock, fix this host's time (NTP)"
    )


class SkewWatch:
    """Warns once when a process's clock drifts from the store's, and again each time it returns.

    One per process (``worker.service.run_queue.RunQueue`` holds it): the
    first reading past the threshold logs a WARNING, later ones do not until a
    reading is back within it; the next crossing warns again.

    Args:
        threshold_s: the largest difference, in seconds, that is not warned about.
    """

    def __init__(self, threshold_s: float) -> None:
        self.threshold_s = threshold_s
        self.skewed = False
        self._lock = threading.Lock()

    def check(self, process: dt.datetime, store: dt.datetime) -> bool:
        """Compare the two times (zone-aware); return whether they differ beyond the threshold."""
        skewed = abs((process - store).total_seconds()) > self.threshold_s
        with self._lock:
            crossed = skewed and not self.skewed
            self.skewed = skewed
        if crossed:
            log.warning("%s", skew_message(process, store, self.threshold_s))
        return skewed
