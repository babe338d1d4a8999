"""A channel's quiet hours: a daily window, in an IANA time zone, in which its alerts are held."""

from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import field_validator, model_validator

from checks.settings.strict import Strict, config_error


class QuietHours(Strict):
    """A daily window in which a channel holds back alerts (urgency ``act_now`` is never held).

    Held alerts are deferred, not dropped: they go out when the window ends.

    Attributes:
        start: local time the window opens, ``HH:MM`` (24 h).
        end: local time it closes, ``HH:MM``; earlier than ``start`` means it spans midnight.
        timezone: IANA zone name the times are read in (default UTC); DST is followed.
    """

    start: str
    end: str
    timezone: str = "UTC"

    @field_validator("start", "end")
    @classmethod
    def _clock(cls, value: str) -> str:
        try:
            dt.time.fromisoformat(value)
        except ValueError:
            raise config_error(f"a time of day is HH:MM, e.g. '22:00' (got {value!r})") from None
        if len(value) != 5:
            raise config_error(f"a time of day is HH:MM, e.g. '07:30' (got {value!r})")
        return value

    @field_validator("timezone")
    @classmethod
    def _zone(cls, value: str) -> str:
        try:
            ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError):
            raise config_error(f"unknown time zone {value!r}; use an IANA name") from None
        return value

    @model_validator(mode="after")
    def _not_empty(self) -> QuietHours:
        if self.start == self.end:
            raise config_error("quiet_hours start and end are the same time: the window is empty")
        return self

    def window_end(self, now: dt.datetime) -> dt.datetime | None:
        """Return when the window holding ``now`` ends (aware, UTC), or None outside it.

        Args:
            now: a zone-aware instant.
        """
        zone = ZoneInfo(self.timezone)
        local = now.astimezone(zone)
        start, end = dt.time.fromisoformat(self.start), dt.time.fromisoformat(self.end)
        clock = local.time().replace(tzinfo=None)
        # end before start: the window spans midnight
        inside = start <= clock < end if start < end else clock >= start or clock < end
        if not inside:
            return None
        day = local.date() if clock < end else local.date() + dt.timedelta(days=1)
        return dt.datetime.combine(day, end, tzinfo=zone).astimezone(dt.UTC)
