"""A source's ``monitor:``: its tables watched without automation files.

::

    sources:
      shop:
        type: duckdb
        database: shop.duckdb
        monitor: {tables: all, freshness: true, volume: true, schema: true, schedule: "0 * * * *"}

``tables`` is ``all`` (every data set of the source's catalog, as it is when
the automations load) or a list of names. ``freshness`` is true (a newest row
at most ``DEFAULT_MAX_AGE`` old), false, or the greatest age allowed as a
duration (``"6h"``); ``volume`` watches the row count against its own history
(``expect: anomaly``); ``schema`` is true (a change fails: ``forbid``),
``warn`` (a change warns) or false. ``schedule`` is a cron expression (none:
run only by hand, ``lookout run monitor:SOURCE.TABLE``); ``timezone`` its zone;
``notify`` the channels told, as an automation's. What each watch becomes is
``checks.automation.monitors``.
"""

from __future__ import annotations

from typing import Literal

from pydantic import (
    Field,
    ValidationError,
    ValidatorFunctionWrapHandler,
    field_validator,
    model_validator,
)

from checks.fields.rules import time_zone
from checks.fields.schedule import parse_duration, validate_cron
from checks.settings.strict import Strict

DEFAULT_MAX_AGE = "1d"
"""``freshness: true``: a table whose newest timestamp is older than a day is stale."""


class Monitor(Strict):
    """``monitor:`` of one source (the keys are in the module docstring)."""

    tables: Literal["all"] | list[str] = "all"
    freshness: bool | str = True
    volume: bool = True
    schema_: bool | Literal["warn"] = Field(default=True, alias="schema")
    schedule: str | None = None
    timezone: str = "UTC"
    notify: list[str] = Field(default_factory=list)

    @field_validator("tables")
    @classmethod
    def _tables(cls, value: str | list[str]) -> str | list[str]:
        if isinstance(value, list):
            if not value:
                raise ValueError("list at least one table, or write 'all'")
            seen: set[str] = set()
            for name in value:
                if not name.strip():
                    raise ValueError("a table name must not be empty")
                if name in seen:
                    raise ValueError(f"table {name!r} is listed twice")
                seen.add(name)
        return value

    @field_validator("freshness")
    @classmethod
    def _max_age(cls, value: bool | str) -> bool | str:
        if isinstance(value, str):
            parse_duration(value)  # its message says what a duration is
        return value

    @field_validator("schema_", mode="wrap")
    @classmethod
    def _schema(cls, value: object, handler: ValidatorFunctionWrapHandler) -> bool | str:
        try:
            return handler(value)  # type: ignore[no-any-return]
        except ValidationError:  # pydantic's words name a boolean only, never warn
            raise ValueError(f"true, false or warn, not {value!r}") from None

    @field_validator("schedule")
    @classmethod
    def _cron(cls, value: str | None) -> str | None:
        return None if value is None else validate_cron(value)

    @field_validator("timezone")
    @classmethod
    def _zone(cls, value: str) -> str:
        return time_zone(value)

    @model_validator(mode="after")
    def _watches(self) -> Monitor:
        if self.freshness is False and not self.volume and self.schema_ is False:
            raise ValueError("a monitor watches freshness, volume or schema: all three are off")
        return self

    @property
    def max_age(self) -> str | None:
        """The greatest age of the newest row, as written; None when freshness is off."""
        if self.freshness is False:
            return None
        return DEFAULT_MAX_AGE if self.freshness is True else self.freshness
