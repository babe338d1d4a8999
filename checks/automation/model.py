"""Automations: what must hold in a source's data, when to look, and who to tell.

A YAML file holds one automation (a mapping of fields) or several under a
top-level ``automations:`` key. ``load_automations`` reads a folder of such
files (or one file), validates every automation and returns the good ones with
every problem found, each pointing at the YAML line and column it comes from.

Unknown keys are errors, so a typo cannot silently turn a check off. Cron and
duration rules live in ``checks.fields.schedule``; ``expect`` strings are read
by ``checks.fields.expectation``.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from typing import Any, Literal
from zoneinfo import ZoneInfo

from pydantic import (
    Field,
    ValidationInfo,
    field_validator,
)

from checks.automation.check import Check, StrictModel
from checks.fields.rules import (
    DurationS,
    day_match,
    did_you_mean,
    fail,
    not_blank,
    slug,
    time_zone,
)
from checks.fields.schedule import MAX_DURATION_DAYS, MAX_DURATION_S, validate_cron
from checks.fields.yaml_messages import shown

LOADER_FIELDS = ("path", "line")  # set by the loader, never from YAML
CHECKS_GOAL = "Every declared check passes."
MONITOR_NAME = re.compile(r"monitor:[a-z0-9][a-z0-9_-]*\.[^\x00-\x1f]{1,200}")
"""A monitor's name, ``monitor:SOURCE.TABLE`` (``checks.automation.monitors``): never a file's."""
"""The goal of an automation that states none: its checks are what must hold."""


class Automation(StrictModel):
    """One automation, as validated from its YAML file.

    Durations are given in YAML as seconds or strings like ``"30m"`` and held in
    seconds (``catchup_window_s``, ``repeat_interval_s``, ``repin_after_s``; YAML
    keys ``catchup_window``, ``repeat_interval``, ``repin_after``: the oldest its
    pinned plan may be, None for ``llm.repin_after``). ``path`` and ``line`` say where the
    automation was defined (1-based line of its first key); they are set by the
    loader and refused in YAML. ``goal`` may be left out when the automation
    declares checks (they say what must hold: ``task_goal``), never otherwise.
    Rules for ``schedule`` and ``day_match`` are in
    ``checks.fields.schedule`` and docs/design.md, Scheduling.
    """

    name: str
    description: str | None = None
    enabled: bool = True
    schedule: str | None = None
    day_match: Literal["any", "all"] | None = Field(default=None, validate_default=True)
    timezone: str = "UTC"
    source: str
    goal: str | None = Field(default=None, validate_default=True)
    instructions: str | None = None
    checks: list[Check] = Field(default_factory=list, validate_default=True)
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
    repin_after_s: DurationS | None = Field(default=None, alias="repin_after")
    path: str
    line: int

    @field_validator("name")
    @classmethod
    def _slug(cls, value: str, info: ValidationInfo) -> str:
        # a monitor's name (monitor:SOURCE.TABLE) only where monitors are made or run again
        if (info.context or {}).get("monitor") and MONITOR_NAME.fullmatch(value):
            return value
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

    @field_validator("timeout_s")
    @classmethod
    def _time_limit(cls, value: float) -> float:
        if value > MAX_DURATION_S:  # past it, the run's lease and deadlines overflow
            raise ValueError(
                f"a run's time limit is at most {MAX_DURATION_DAYS} days "
                f"({MAX_DURATION_S:.0f} s) (got {shown(value)})"
            )
        return value

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
    def _not_blank(cls, value: str | None) -> str | None:
        return None if value is None else not_blank(value)

    @property
    def task_goal(self) -> str:
        """What must hold, for the agent and the second opinion: the goal, or the checks."""
        return self.goal or CHECKS_GOAL

    @field_validator("checks")
    @classmethod
    def _unique_checks(cls, checks: list[Check], info: ValidationInfo) -> list[Check]:
        # goal may be left out when checks say what must hold; said beside any other error
        if not checks and "goal" in info.data and info.data["goal"] is None:
            raise fail("required field is missing", ("goal",))
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
