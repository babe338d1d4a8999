"""``over:``: a typed check computed per time bucket of its data, in one grouped query.

::

    over: {column: created_at, bucket: day, lookback: 28d}

=========  ========  ===========================================================
key        default   meaning
=========  ========  ===========================================================
column     —         the time column (a date, a timestamp, or one with a zone)
bucket     —         ``hour``, ``day`` or ``week`` (weeks start on Monday)
lookback   —         how far back the baseline reaches before the tested
                     bucket: a whole number of buckets (``28d``: 28 days or
                     4 weeks; ``48h``: 48 hours)
timezone   UTC       the zone a timestamp *without* a zone is written in
=========  ========  ===========================================================

Bucket boundaries follow the automation's ``timezone:``; how the window is cut
and read is ``checks.declared.buckets``. ``over:`` is for the count kinds
(each kind's ``OVER``, listed by ``checks.kinds.registry.over_kinds``).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from checks.fields.rules import DurationS, not_blank, time_zone

BUCKET_S: dict[str, int] = {"hour": 3600, "day": 86400, "week": 7 * 86400}
"""Each bucket's nominal length in seconds (a local day is 23 or 25 hours across DST)."""

MAX_BUCKETS = 2000
"""At most this many baseline buckets (``lookback`` / ``bucket``)."""


class Over(BaseModel):
    """``over:`` as written (the keys are in the module docstring)."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    column: str
    bucket: Literal["hour", "day", "week"]
    lookback_s: DurationS = Field(alias="lookback")
    timezone: str = "UTC"

    @field_validator("column")
    @classmethod
    def _column(cls, value: str) -> str:
        return not_blank(value.strip(), "must name a time column")

    @field_validator("timezone")
    @classmethod
    def _zone(cls, value: str) -> str:
        return time_zone(value)

    @model_validator(mode="after")
    def _whole_buckets(self) -> Over:
        size = BUCKET_S[self.bucket]
        count = self.lookback_s / size
        if count < 1 or count != int(count):
            raise ValueError(
                f"lookback is a whole number of {self.bucket}s (a {self.bucket} is "
                f"{size} s; got {self.lookback_s:g} s)"
            )
        if count > MAX_BUCKETS:
            raise ValueError(f"lookback covers {int(count)} {self.bucket}s; at most {MAX_BUCKETS}")
        return self

    @property
    def baseline_buckets(self) -> int:
        """How many buckets before the tested one make the baseline."""
        return int(self.lookback_s // BUCKET_S[self.bucket])
