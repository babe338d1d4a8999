"""Field-level rules shared by automation and suite models.

Slugs, check names, time zones, durations and ``expect`` strings: the
validators and annotated types that ``checks.automation.model`` and ``checks.eval.suite``
apply to single fields, plus the helpers their messages use.
"""

from __future__ import annotations

import difflib
import functools
import re
from collections.abc import Collection
from typing import Annotated
from zoneinfo import ZoneInfo, available_timezones

from pydantic import BeforeValidator, PlainSerializer, PlainValidator
from pydantic_core import PydanticCustomError

from checks.fields.anomaly_rule import ANOMALY, rule_from_mapping
from checks.fields.expectation import Expectation, parse_expectation
from checks.fields.schedule import (
    check_computable,
    cron_fields,
    needs_day_match,
    parse_duration,
)
from checks.fields.yaml_messages import shown
from checks.fields.yaml_tree import Loc

SLUG = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")
CHECK_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9 _.-]{0,99}")
HOST_ZONES = frozenset({"localtime", "posixrules", "Factory"})  # not IANA names: host-dependent


def fail(message: str, at: Loc) -> PydanticCustomError:
    """Return an error to raise at ``at`` (relative to the model), not at the field."""
    return PydanticCustomError("lookout", "{message}", {"message": message, "at": at})


def fail_here(message: str, at: Loc) -> PydanticCustomError:
    """Return an error to raise at ``at`` relative to the model whose validator raises it."""
    return PydanticCustomError(
        "lookout", "{message}", {"message": message, "at": at, "relative": True}
    )


def slug(value: str, noun: str = "a name") -> str:
    """Return ``value`` if it is a slug, else raise ``ValueError`` calling it ``noun``."""
    if not SLUG.fullmatch(value):
        raise ValueError(
            f"{noun} is lowercase letters, digits, '_' and '-', starting with a letter "
            f"or digit, at most 64 characters (got {shown(value)})"
        )
    return value


def check_name(value: str) -> str:
    """Return ``value`` if it is a valid check name, else raise ``ValueError``."""
    if not CHECK_NAME.fullmatch(value):
        raise ValueError(
            "a check name is letters, digits, spaces and '_.-', starting with a letter "
            f"or digit, at most 100 characters (got {shown(value)})"
        )
    if value != value.rstrip():  # 'rows ' would read as 'rows', yet be another check
        raise ValueError(f"a check name does not end with a space (got {shown(value)})")
    return value


def not_blank(value: str, message: str = "must not be empty") -> str:
    """Return ``value`` unless it is empty or only spaces, which raises ``ValueError``."""
    if not value.strip():
        raise ValueError(message)
    return value


def day_match(value: str | None, schedule: str | None) -> str | None:
    """Return ``day_match`` if ``schedule`` can run with it, else raise at ``schedule``.

    Required when the cron restricts both day-of-month and day-of-week.
    """
    if value is None and schedule and needs_day_match(schedule):
        fields = cron_fields(schedule)
        raise fail(
            f"day-of-month ({fields[2]}) and day-of-week ({fields[4]}) are both restricted, "
            "and cron runs on days matching EITHER; add day_match: any (either, as cron "
            "does) or day_match: all (both)",
            ("schedule",),
        )
    if schedule:
        try:
            check_computable(schedule, value)
        except ValueError as exc:
            raise fail(str(exc), ("schedule",)) from None
    return value


def time_zone(value: str) -> str:
    """Return ``value`` if it is an IANA time zone name, else raise ``ValueError``."""
    known = zone_names()
    try:
        ZoneInfo(value)
        if value in HOST_ZONES or (known and value not in known):
            raise KeyError(value)
    except (ValueError, KeyError, OSError):  # not found is a KeyError; odd names others
        hint = did_you_mean(value, known) or "; use an IANA name such as 'Europe/Paris'"
        raise ValueError(f"unknown time zone {shown(value)}{hint}") from None
    return value


@functools.cache
def zone_names() -> frozenset[str]:
    """Return the IANA zone names on this host (empty when there is no tz database)."""
    return frozenset(available_timezones()) - HOST_ZONES


def did_you_mean(word: str, choices: Collection[str]) -> str:
    """Return `` (did you mean 'x'?)`` for the closest of ``choices``, or ``""``."""
    close = difflib.get_close_matches(word, list(choices), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def to_expectation(value: object) -> Expectation:
    """Read an ``expect`` value: text, ``{anomaly: {…}}``, or an already parsed ``Expectation``."""
    if isinstance(value, Expectation):
        return value
    if isinstance(value, dict) and list(value) == [ANOMALY]:
        try:
            return Expectation("anomaly", anomaly=rule_from_mapping(value[ANOMALY]))
        except ValueError as exc:  # "anomaly.method: …": said at that key, not at expect:
            key, _, message = str(exc).partition(": ")
            parts = tuple(key.split("."))
            rule = value[ANOMALY]
            if (
                len(parts) == 2
                and parts[0] == ANOMALY
                and isinstance(rule, dict)
                and parts[1] in rule
            ):
                raise fail_here(message, parts) from None
            raise
    if isinstance(value, dict):
        raise ValueError(
            f"expect as a mapping is {{anomaly: {{…}}}} (got the keys {', '.join(map(str, value))})"
        )
    if not isinstance(value, str):
        raise ValueError(f"expect must be text such as '== 0' (got {shown(value)})")
    return _parsed_expectation(value)


@functools.lru_cache(maxsize=4096)
def _parsed_expectation(text: str) -> Expectation:
    """Return ``parse_expectation(text)``, kept per text (a text it refuses is not kept).

    An ``Expectation`` is immutable, and the same few texts (``== 0``, ``empty``)
    come back in most checks.
    """
    return parse_expectation(text)


ExpectField = Annotated[
    Expectation,
    PlainValidator(to_expectation, json_schema_input_type=str),
    PlainSerializer(lambda e: e.text, return_type=str),
]


def to_warning(value: object) -> Expectation:
    """Read a ``warn`` value: the forms of ``expect`` (``to_expectation``), errors naming warn."""
    try:
        return to_expectation(value)
    except ValueError as exc:
        raise ValueError(str(exc).replace("expect", "warn", 1)) from None


WarnField = Annotated[
    Expectation,
    PlainValidator(to_warning, json_schema_input_type=str),
    PlainSerializer(lambda e: e.text, return_type=str),
]
DurationS = Annotated[float, BeforeValidator(parse_duration)]
