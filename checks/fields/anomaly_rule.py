"""``expect: anomaly``: a value judged against its own history, not a fixed bound.

Written in an automation file as the word or as a mapping::

    expect: anomaly
    expect: {anomaly: {sensitivity: 3, method: zscore, min_history: 7,
                       direction: both, seasonality: none, runs: 28}}

=============  =========  ======================================================
key            default    meaning
=============  =========  ======================================================
method         zscore     ``zscore`` (mean and standard deviation) or ``mad``
                          (median and 1.4826 × the median absolute deviation)
sensitivity    3          how many spreads from the centre a value may be
min_history    7          fewer baseline points than this: not evaluated
direction      both       ``up`` flags only rises, ``down`` only drops
seasonality    none       ``weekly``: a value is set only against the same
                          weekday (and, for hourly buckets, the same hour)
runs           28         without ``over:``, how many past completed runs
                          make the baseline (with ``over:`` the lookback does)
=============  =========  ======================================================

How the baseline is scored is ``checks.declared.anomaly``. The normalised
text (``AnomalyRule.text``) is ``anomaly`` followed by the keys that differ
from their defaults (``anomaly: mad, direction down``); it reads back to the
same rule (``parse_rule``), so a stored definition loads again.
"""

from __future__ import annotations

import math
import re
from decimal import Decimal
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

ANOMALY = "anomaly"

_ITEM = re.compile(r"(method|sensitivity|min_history|direction|seasonality|runs)\s+(\S+)")
_KEYS = ("method", "sensitivity", "min_history", "direction", "seasonality", "runs")


class AnomalyRule(BaseModel):
    """How an anomaly expectation judges a value (the keys are in the module docstring)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    method: Literal["zscore", "mad"] = "zscore"
    sensitivity: float = Field(default=3.0, gt=0)
    min_history: int = Field(default=7, ge=2, le=10_000)
    direction: Literal["both", "up", "down"] = "both"
    seasonality: Literal["none", "weekly"] = "none"
    runs: int = Field(default=28, ge=1, le=10_000)

    @field_validator("sensitivity", mode="before")
    @classmethod
    def _finite(cls, value: Any) -> Any:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ValueError(f"sensitivity is a number such as 3 (got {value!r})")
        if not math.isfinite(value):
            raise ValueError(f"sensitivity must be finite (got {value})")
        return float(value)

    @field_validator("min_history", "runs", mode="before")
    @classmethod
    def _whole(cls, value: Any) -> Any:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"a whole number is needed (got {value!r})")
        return value

    @property
    def text(self) -> str:
        """``anomaly``, then the keys differing from their defaults: ``anomaly: mad, runs 14``."""
        default = AnomalyRule()
        parts: list[str] = []
        for key in _KEYS:
            value = getattr(self, key)
            if value == getattr(default, key):
                continue
            if key == "method":
                parts.append(str(value))
            elif key == "sensitivity":
                parts.append(f"sensitivity {_number(value)}")
            else:
                parts.append(f"{key} {value}")
        return ANOMALY + (": " + ", ".join(parts) if parts else "")


def _number(value: float) -> str:
    return f"{Decimal(repr(value)).normalize():f}"


def rule_from_mapping(value: object) -> AnomalyRule:
    """Read the mapping under ``anomaly:`` (None or an empty mapping: every default).

    Raises:
        ValueError: an unknown key or a value out of range, in one line.
    """
    if value is None:
        return AnomalyRule()
    if not isinstance(value, dict):
        raise ValueError(
            "anomaly takes a mapping such as {sensitivity: 3, method: mad} (or write "
            "expect: anomaly)"
        )
    try:
        return AnomalyRule.model_validate(value)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        message = str(first["msg"]).removeprefix("Value error, ")
        if first["type"] == "extra_forbidden":
            message = f"unknown key; anomaly takes {', '.join(_KEYS)}"
        raise ValueError(f"anomaly.{where}: {message}") from None


def parse_rule(text: str) -> AnomalyRule | None:
    """Read ``anomaly`` or its normalised text (``anomaly: mad, direction up``); None if neither.

    Raises:
        ValueError: it starts with ``anomaly`` but an item is not understood.
    """
    cleaned = " ".join(text.split())
    head, _, rest = cleaned.partition(":")
    if head.strip().lower() != ANOMALY:
        return None
    fields: dict[str, Any] = {}
    for raw in (part.strip() for part in rest.split(",") if part.strip()):
        if raw in ("zscore", "mad"):
            fields["method"] = raw
            continue
        match = _ITEM.fullmatch(raw)
        if not match:
            keys = ", ".join(_KEYS)
            raise ValueError(f"cannot read '{raw}' in '{cleaned}'; anomaly takes {keys}")
        key, word = match.groups()
        number: Any = word
        if key in ("min_history", "runs"):
            number = int(word) if word.isdigit() else word
        elif key == "sensitivity":
            try:
                number = float(word)
            except ValueError:
                number = word
        fields[key] = number
    return rule_from_mapping(fields)
