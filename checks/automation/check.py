"""A declared check of an automation: a raw query or one typed kind, with its expectation.

A check holds exactly one of ``sql`` or a registered kind (``checks.kinds``),
validated by that kind's model at its own key; its ``expect`` is given or the
kind's default. What a check dumps loads back as the same check.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from pydantic import (
    BaseModel,
    ConfigDict,
    ModelWrapValidatorHandler,
    PrivateAttr,
    SerializationInfo,
    SerializerFunctionWrapHandler,
    ValidationError,
    field_validator,
    model_serializer,
    model_validator,
)
from pydantic_core import InitErrorDetails

from checks.automation.nested_errors import located
from checks.automation.time_buckets import Over
from checks.fields.expectation import Expectation
from checks.fields.rules import (
    ExpectField,
    WarnField,
    check_name,
    fail_here,
    not_blank,
    to_expectation,
)
from checks.fields.warn_level import warn_problem
from checks.kinds.base import Kind
from checks.kinds.registry import KINDS, over_kinds

_BEFORE_KIND = ("name", "sql", "expect", "warn", "allow_empty")  # the keys written before the kind


class StrictModel(BaseModel):
    """A frozen, strict model that refuses unknown keys: the base of a file's models."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class Check(StrictModel):
    """One declared check: a raw SQL query, or one typed kind, whose result must meet ``expect``.

    ``name`` is letters, digits, spaces and ``_.-`` (at most 100 characters) and
    unique within its automation. A check holds exactly one of ``sql`` and the
    kinds of ``checks.kinds.registry`` (``row_count``, ``missing``, …), each
    validated by its kind's model at its own YAML key (``checks.0.missing.column``).
    ``expect`` is written as a string in YAML and parsed when the file is
    loaded (see ``checks.fields.expectation``); a raw query needs one, a
    typed kind has a default (``Kind.default_expect``), filled in here.
    ``allow_empty`` lets a check whose scope (or, for ``sql``, a table it
    reads) has 0 rows count as passed instead of not evaluated. ``over``
    computes a count kind per time bucket and tests the latest complete one
    (``checks.automation.time_buckets``). ``warn`` is an optional stricter
    level in the forms of ``expect`` (``checks.fields.warn_level``): a value
    meeting ``expect`` but not ``warn`` is ``warned``.
    """

    name: str
    sql: str | None = None
    expect: ExpectField | None = None
    warn: WarnField | None = None
    allow_empty: bool = False
    over: Over | None = None
    _spec: Kind | None = PrivateAttr(default=None)

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        return check_name(value)

    @field_validator("sql")
    @classmethod
    def _sql(cls, value: str | None) -> str | None:
        return None if value is None else not_blank(value)

    @model_validator(mode="wrap")
    @classmethod
    def _with_its_kind(cls, value: Any, handler: ModelWrapValidatorHandler[Check]) -> Check:
        """Validate the check, its kind by the registered kind's model at the kind's key.

        A ``Check`` given where a check is expected is kept as it is, not validated
        again: its default ``expect`` is filled in, and run again it would be taken
        for a written one (``max_age`` and ``expect`` both given). Errors keep the
        order of the keys (name, sql, expect, allow_empty, the kind, over, unknown keys).
        """
        if isinstance(value, Check):
            return value
        if not isinstance(value, dict):
            return handler(value)
        written = [key for key in KINDS if key in value]
        specs: dict[str, Kind] = {}
        kind_errors: list[InitErrorDetails] = []
        for key in written:
            if value[key] is None:  # written as null: not given
                continue
            try:
                specs[key] = KINDS[key].model_validate(value[key])
            except ValidationError as exc:
                kind_errors += [located(err, (key,)) for err in exc.errors()]
        try:
            check = handler({k: v for k, v in value.items() if k not in written})
        except ValidationError as exc:
            found = [located(err, ()) for err in exc.errors()]
            first = [err for err in found if err["loc"][:1] and err["loc"][0] in _BEFORE_KIND]
            rest = [err for err in found if err not in first]
            errors = first + kind_errors + rest
            raise ValidationError.from_exception_data(cls.__name__, errors) from None
        if kind_errors:
            raise ValidationError.from_exception_data(cls.__name__, kind_errors)
        check._one_kind(specs, sql_written="sql" in check.model_fields_set)
        return check

    def _one_kind(self, specs: dict[str, Kind], *, sql_written: bool) -> None:
        given = (["sql"] if sql_written and self.sql is not None else []) + list(specs)
        if not given:
            raise fail_here(
                "a check needs 'sql:' or one of the typed kinds: " + ", ".join(KINDS), ()
            )
        if len(given) > 1:
            raise fail_here(
                f"a check is one of sql, {', '.join(KINDS)}; this one has {' and '.join(given)}",
                (given[1],),
            )
        spec = specs.get(given[0])
        if spec is None:
            if self.expect is None:
                raise fail_here("required field is missing", ("expect",))
            self._check_warn()
            self._check_over(None)
            return
        self._spec = spec
        if self.expect is None:
            try:
                default = spec.default_expect()
            except ValueError as exc:
                raise fail_here(str(exc), (spec.KIND,)) from None
            object.__setattr__(self, "expect", to_expectation(default))
        else:
            conflict = spec.expect_conflict()
            if conflict is not None:
                raise fail_here(conflict, ("expect",))
        expect = self.expectation
        if expect.unit not in spec.UNITS:
            raise fail_here(spec.unit_mismatch(expect.text, expect.unit), ("expect",))
        self._check_warn()
        self._check_over(spec)

    def _check_warn(self) -> None:
        if self.warn is None:
            return
        problem = warn_problem(self.warn, self.expectation)
        if problem is not None:
            raise fail_here(problem, ("warn",))

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
        if spec is None or not spec.OVER:
            raise fail_here(
                f"over: is for the count kinds ({', '.join(over_kinds())}), "
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

    @model_serializer(mode="wrap")
    def _only_its_kind(
        self, handler: SerializerFunctionWrapHandler, info: SerializationInfo
    ) -> dict[str, Any]:
        """Dump the kind this check is at its key (no ``sql: null``, ``missing: null``…).

        The keys keep the order a check is written in: name, sql, expect,
        warn (only when given), allow_empty, the kind, over. ``allow_empty``
        appears only when true: a raw check's definition keeps the shape it had
        before typed checks existed. A kind that states its own expectation
        (``freshness``' ``max_age``) is dumped without the ``expect`` filled in
        from it: the two together do not load (what is dumped loads back as
        the same check).
        """
        data: dict[str, Any] = handler(self)
        derived = self._spec is not None and self._spec.expect_conflict() is not None
        kept = {
            key: value
            for key, value in data.items()
            if (value is not None or key not in ("sql", "over", "warn"))
            and not (key == "allow_empty" and value is False)
            and not (key == "expect" and derived)
        }
        dumped = {key: value for key, value in kept.items() if key != "over"}
        spec = self._spec
        if spec is not None:
            dumped[spec.KIND] = spec.model_dump(
                mode=info.mode,
                by_alias=info.by_alias,
                exclude_none=info.exclude_none,
                exclude_defaults=info.exclude_defaults,
                round_trip=info.round_trip,
            )
        if "over" in kept:
            dumped["over"] = kept["over"]
        return dumped

    def __repr_args__(self) -> Iterator[tuple[str | None, Any]]:
        """The fields, and the kind at its key (``missing=Missing(…)``)."""
        yield from super().__repr_args__()
        if self._spec is not None:
            yield self._spec.KIND, self._spec

    @property
    def spec(self) -> Kind | None:
        """The typed kind of this check, or None for a raw ``sql`` check."""
        return self._spec

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
