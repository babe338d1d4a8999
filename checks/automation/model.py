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
    ModelWrapValidatorHandler,
    SerializerFunctionWrapHandler,
    ValidationInfo,
    field_validator,
    model_serializer,
    model_validator,
)

from checks.automation.check_kinds import (
    KINDS,
    AcceptedValues,
    Duplicates,
    Freshness,
    Kind,
    Missing,
    Range,
    Relationships,
    RowCount,
    Schema,
)
from checks.automation.expectation import Expectation
from checks.automation.fields import (
    DurationS,
    ExpectField,
    check_name,
    day_match,
    did_you_mean,
    fail,
    fail_here,
    not_blank,
    slug,
    time_zone,
    to_expectation,
)
from checks.automation.schedule import MAX_DURATION_DAYS, MAX_DURATION_S, validate_cron
from checks.automation.time_buckets import OVER_KINDS, Over
from checks.automation.yaml_messages import shown

LOADER_FIELDS = ("path", "line")  # set by the loader, never from YAML
CHECKS_GOAL = "Every declared check passes."
"""The goal of an automation that states none: its checks are what must hold."""
_KIND_ATTRIBUTES = tuple(
    (key, "schema_" if key == "schema" else key) for key in ("sql", *KINDS)
)  # (YAML key, attribute): a check holds exactly one
_ATTRIBUTE = dict(_KIND_ATTRIBUTES)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class Check(_Strict):
    """One declared check: a raw SQL query, or one typed kind, whose result must meet ``expect``.

    ``name`` is letters, digits, spaces and ``_.-`` (at most 100 characters) and
    unique within its automation. A check holds exactly one of ``sql`` and the
    kinds of ``checks.automation.check_kinds`` (``row_count``, ``missing``, …).
    ``expect`` is written as a string in YAML and parsed when the file is
    loaded (see ``checks.automation.expectation``); a raw query needs one, a
    typed kind has a default (``Kind.default_expect``), filled in here.
    ``allow_empty`` lets a check whose scope (or, for ``sql``, a table it
    reads) has 0 rows count as passed instead of not evaluated. ``over``
    computes a count kind per time bucket and tests the latest complete one
    (``checks.automation.time_buckets``).
    """

    name: str
    sql: str | None = None
    expect: ExpectField | None = None
    allow_empty: bool = False
    row_count: RowCount | None = None
    missing: Missing | None = None
    duplicates: Duplicates | None = None
    accepted_values: AcceptedValues | None = None
    relationships: Relationships | None = None
    freshness: Freshness | None = None
    range: Range | None = None
    schema_: Schema | None = Field(default=None, alias="schema")
    over: Over | None = None

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        return check_name(value)

    @field_validator("sql")
    @classmethod
    def _sql(cls, value: str | None) -> str | None:
        return None if value is None else not_blank(value)

    @model_validator(mode="after")
    def _one_kind(self) -> Check:
        written = self.model_fields_set  # a kind not written is None: its attribute is not read
        given = [
            key
            for key, name in _KIND_ATTRIBUTES
            if name in written and getattr(self, name) is not None
        ]
        if not given:
            raise fail_here(
                "a check needs 'sql:' or one of the typed kinds: " + ", ".join(KINDS), ()
            )
        if len(given) > 1:
            raise fail_here(
                f"a check is one of sql, {', '.join(KINDS)}; this one has {' and '.join(given)}",
                (given[1],),
            )
        spec: Kind | None = None if given[0] == "sql" else getattr(self, _ATTRIBUTE[given[0]])
        if spec is None:
            if self.expect is None:
                raise fail_here("required field is missing", ("expect",))
            self._check_over(None)
            return self
        if self.expect is None:
            try:
                default = spec.default_expect()
            except ValueError as exc:
                raise fail_here(str(exc), (spec.KIND,)) from None
            object.__setattr__(self, "expect", to_expectation(default))
        elif isinstance(spec, Freshness) and spec.max_age_s is not None:
            raise fail_here(
                "give max_age or expect, not both: max_age is the same as expect '<= max_age'",
                ("expect",),
            )
        expect = self.expectation
        if expect.unit not in spec.UNITS:
            raise fail_here(_unit_mismatch(spec, expect.text, expect.unit), ("expect",))
        self._check_over(spec)
        return self

    def never_evaluated(self) -> tuple[str, str] | None:
        """Why an anomaly's baseline could never hold ``min_history`` points, or None.

        Its baseline is at most ``runs`` past runs, or with ``over:`` the lookback's
        buckets (with ``seasonality: weekly`` only those on the tested bucket's weekday,
        and hour); fewer points than ``min_history`` is "not evaluated" (never a pass),
        so such a check is never judged, on any run. Returns the field the reason is
        about (``expect`` or ``over``) and the reason, which ``lookout validate`` warns of.
        """
        rule = self.expectation.anomaly
        if rule is None:
            return None
        need = f"the {rule.min_history} points min_history needs: the check is never evaluated"
        if self.over is None:
            if rule.runs >= rule.min_history:
                return None
            return "expect", (
                f"a baseline of at most {rule.runs} runs never holds {need}; raise runs or "
                "lower min_history"
            )
        buckets = self.over.baseline_buckets
        bucket = self.over.bucket
        points, holds = buckets, "never holds"
        if rule.seasonality == "weekly":  # only the tested bucket's weekday (and hour) count
            points = buckets // (7 if bucket == "day" else 7 * 24)
            same = "days on the same weekday" if bucket == "day" else "hours on the same weekday"
            holds = f"holds {points} {same}, never"
        if points >= rule.min_history:
            return None
        return "over", (
            f"a lookback of {buckets} {bucket}{'' if buckets == 1 else 's'} {holds} {need}; "
            "lengthen lookback or lower min_history"
        )

    def _check_over(self, spec: Kind | None) -> None:
        rule = self.expectation.anomaly
        if self.over is None:
            return
        if spec is None or spec.KIND not in OVER_KINDS:
            raise fail_here(
                f"over: is for the count kinds ({', '.join(OVER_KINDS)}), "
                f"not {spec.KIND if spec else 'a raw sql query'}",
                ("over",),
            )
        if rule is not None and "runs" in rule.model_fields_set:
            raise fail_here(
                "runs is the baseline of an anomaly over past runs; with over: the "
                "lookback sets the baseline",
                ("expect",),
            )
        if rule is not None and rule.seasonality == "weekly" and self.over.bucket == "week":
            raise fail_here(
                "seasonality: weekly compares a day (or hour) with the same weekday; "
                "weekly buckets have none",
                ("expect",),
            )

    @model_validator(mode="wrap")
    @classmethod
    def _validated_once(cls, value: Any, handler: ModelWrapValidatorHandler[Check]) -> Check:
        """A ``Check`` given where a check is expected is kept as it is, not validated again.

        Its after-validator has filled in the default ``expect``: run again, it took
        that for a written one (``max_age`` and ``expect`` both given). Defined after
        ``_one_kind``, so that it wraps it.
        """
        if isinstance(value, Check):
            return value
        return handler(value)

    @model_serializer(mode="wrap")
    def _without_other_kinds(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """Dump only the kind this check is (no ``sql: null``, ``missing: null``…).

        ``allow_empty`` appears only when true: a raw check's definition keeps
        the shape it had before typed checks existed. A ``freshness`` check
        written with ``max_age`` is dumped without the ``expect`` filled in from
        it: ``max_age`` is its expectation, and the two together do not load
        (what is dumped loads back as the same check).
        """
        data: dict[str, Any] = handler(self)
        derived = isinstance(self.freshness, Freshness) and self.freshness.max_age_s is not None
        return {
            key: value
            for key, value in data.items()
            if (value is not None or key not in ("sql", "schema_", "over", *KINDS))
            and not (key == "allow_empty" and value is False)
            and not (key == "expect" and derived)
        }

    @property
    def spec(self) -> Kind | None:
        """The typed kind of this check, or None for a raw ``sql`` check."""
        for _, name in _KIND_ATTRIBUTES[1:]:
            found = getattr(self, name)
            if isinstance(found, Kind):
                return found
        return None

    @property
    def kind(self) -> str:
        """``sql``, or the typed kind's YAML key."""
        spec = self.spec
        return "sql" if spec is None else spec.KIND

    @property
    def expectation(self) -> Expectation:
        """``expect``, given or filled in from the kind's default."""
        assert self.expect is not None  # set by the validator for every valid check
        return self.expect


def _unit_mismatch(spec: Kind, text: str, unit: str) -> str:
    wanted = {
        "number": "a number ('== 0')",
        "percent": "a percent ('<= 1%')",
        "rows": "'empty' / 'not empty'",
        "duration": "a duration ('< 3h')",
        "anomaly": "'anomaly'",
    }
    names = [
        wanted[u] for u in ("number", "percent", "duration", "rows", "anomaly") if u in spec.UNITS
    ]
    allowed = " or ".join([", ".join(names[:-1]), names[-1]] if len(names) > 1 else names)
    what = {
        "number": "a number",
        "percent": "a percent",
        "duration": "a duration",
        "boolean": "a boolean",
        "rows": "rows",
        "anomaly": "against its history",
    }[unit]
    return f"{spec.KIND} is compared with {allowed}; '{text}' compares {what}"


class Automation(_Strict):
    """One automation, as validated from its YAML file.

    Durations are given in YAML as seconds or strings like ``"30m"`` and held in
    seconds (``catchup_window_s``, ``repeat_interval_s``, ``repin_after_s``; YAML
    keys ``catchup_window``, ``repeat_interval``, ``repin_after``: the oldest its
    pinned plan may be, None for ``llm.repin_after``). ``path`` and ``line`` say where the
    automation was defined (1-based line of its first key); they are set by the
    loader and refused in YAML. ``goal`` may be left out when the automation
    declares checks (they say what must hold: ``task_goal``), never otherwise.
    Rules for ``schedule`` and ``day_match`` are in
    ``checks.automation.schedule`` and the design notes §5.
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
