"""Automations: what must hold in a source's data, when to look, and who to tell.

A YAML file holds one automation (a mapping of fields) or several under a
top-level ``automations:`` key. ``load_automations`` reads a folder of such
files (or one file), validates every automation and returns the good ones with
every problem found, each pointing at the YAML line and column it comes from.

Unknown keys are errors, so a typo cannot silently turn a check off. Cron and
duration rules live in ``checks.automation.schedule``; ``expect`` strings are read
by ``checks.automation.expectation``.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any, Literal
from zoneinfo import ZoneInfo

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationInfo,
    field_validator,
)

from checks.automation.fields import (
    DurationS,
    ExpectField,
    check_name,
    day_match,
    did_you_mean,
    fail,
    not_blank,
    slug,
    time_zone,
)
from checks.automation.schedule import validate_cron

LOADER_FIELDS = ("path", "line")  # set by the loader, never from YAML


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class Check(_Strict):
    """One declared check: a SQL query whose result must meet ``expect``.

    ``name`` is letters, digits, spaces and ``_.-`` (at most 100 characters) and
    unique within its automation. ``expect`` is written as a string in YAML and
    parsed when the file is loaded (see ``checks.automation.expectation``).
    """

    name: str
    sql: str
    expect: ExpectField

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        return check_name(value)

    @field_validator("sql")
    @classmethod
    def _sql(cls, value: str) -> str:
        return not_blank(value)


class Automation(_Strict):
    """One automation, as validated from its YAML file.

    Durations are given in YAML as seconds or strings like ``"30m"`` and held in
    seconds (``catchup_window_s``, ``repeat_interval_s``; YAML keys
    ``catchup_window``, ``repeat_interval``). ``path`` and ``line`` say where the
    automation was defined (1-based line of its first key); they are set by the
    loader and refused in YAML. Rules for ``schedule`` and ``day_match`` are in
    ``checks.automation.schedule`` and the design notes §5.
    """

    name: str
    description: str | None = None
    enabled: bool = True
    schedule: str | None = None
    day_match: Literal["any", "all"] | None = Field(default=None, validate_default=True)
    timezone: str = "UTC"
    source: str
    goal: str
    instructions: str | None = None
    checks: list[Check] = Field(default_factory=list)
    severity: Literal["low", "medium", "high"] = "medium"
    owner: str | None = None
    tags: list[str] = Field(default_factory=list)
    notify: list[str] = Field(default_factory=list)
    timeout_s: float = Field(default=300.0, gt=0, allow_inf_nan=False)
    model: str | None = None
    catchup: Literal["latest", "none", "all"] = "latest"
    catchup_window_s: DurationS = Field(default=3600.0, alias="catchup_window")
    overlap: Literal["skip", "buffer_one", "allow"] = "skip"
    repeat_interval_s: DurationS = Field(default=86400.0, alias="repeat_interval")
    path: str
    line: int

    @field_validator("name")
    @classmethod
    def _slug(cls, value: str) -> str:
        return slug(value)

    @field_validator("schedule")
    @classmethod
    def _cron(cls, value: str | None) -> str | None:
        return None if value is None else validate_cron(value)

    @field_validator("day_match")
    @classmethod
    def _day_match(cls, value: str | None, info: ValidationInfo) -> str | None:
        return day_match(value, info.data.get("schedule"))

    @field_validator("timezone")
    @classmethod
    def _zone(cls, value: str) -> str:
        return time_zone(value)

    @field_validator("source")
    @classmethod
    def _source(cls, value: str, info: ValidationInfo) -> str:
        known: Collection[str] | None = (info.context or {}).get("known_sources")
        if known is not None and value not in known:
            names = ", ".join(sorted(known)) or "none are configured"
            raise ValueError(
                f"unknown source {value!r}{did_you_mean(value, known)}; known: {names}"
            )
        return value

    @field_validator("goal")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        return not_blank(value)

    @field_validator("checks")
    @classmethod
    def _unique_checks(cls, checks: list[Check]) -> list[Check]:
        first: dict[str, int] = {}
        for index, check in enumerate(checks):
            if check.name in first:
                raise fail(
                    f"duplicate check name {check.name!r} (also checks.{first[check.name]})",
                    ("checks", index, "name"),
                )
            first[check.name] = index
        return checks

    @property
    def zone(self) -> ZoneInfo:
        """The ``timezone`` as a ``ZoneInfo``, for zone-aware cron occurrences."""
        return ZoneInfo(self.timezone)

    def definition(self) -> dict[str, Any]:
        """Return the automation with defaults filled in, keyed as in YAML, JSON-safe.

        Stored with each run. ``expect`` is its normalised text; durations are
        seconds; ``path`` and ``line`` are left out.
        """
        return self.model_dump(mode="json", by_alias=True, exclude=set(LOADER_FIELDS))
