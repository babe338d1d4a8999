"""``validity``: rows whose text column holds a value of the wrong form.

::

    validity: {table, column, format?, regex?, min_length?, max_length?, null?, filter?}
                                                                 expect "== 0"

A value is valid when it meets every rule given (at least one): ``format``, a
named form (``checks.kinds.value_formats``: ``email``, ``uuid``, … ``iso_currency``);
``regex``, a pattern matching the **whole** value, in the subset every engine
reads alike (``checks.kinds.portable_regex``, checked at load); ``min_length`` and
``max_length``, in characters. Values are not trimmed: ``' a@x.org'`` is no email,
and an empty text is a value (not NULL) that no format matches.

NULL rule: a NULL has no form and is not invalid (``null: allowed``, the
default, counted apart as ``null_values``; a scope holding only NULLs is not
evaluated); ``null: violation`` counts it. Metrics: ``rows_in_scope``,
``invalid``, ``null_values``, ``violations`` (compared: ``invalid`` plus the
NULLs with ``null: violation``), ``distinct_invalid``, ``invalid_percent`` (of
the rows in scope).
"""

from __future__ import annotations

from fractions import Fraction
from typing import ClassVar, Literal

from pydantic import Field, field_validator, model_validator
from sqlglot import exp

from checks.fields.rules import fail_here
from checks.kinds.base import Compiled, Counts, Judged, Loc, OneColumn, Scope, all_null
from checks.kinds.in_words import metric, rows
from checks.kinds.portable_regex import problem
from checks.kinds.regex_sql import char_length, full_match
from checks.kinds.row_count import in_scope
from checks.kinds.sql_terms import count_distinct_when, count_when, is_null, literal, not_null
from checks.kinds.value_formats import CODE_LISTS, PATTERNS, FormatName, codes
from checks.report import CheckResult, Metrics


class Validity(OneColumn):
    """``validity``: rows whose text column holds a value of the wrong form."""

    KIND: ClassVar[str] = "validity"
    OVER: ClassVar[bool] = True

    format: FormatName | None = None
    regex: str | None = None
    min_length: int | None = Field(default=None, ge=0)
    max_length: int | None = Field(default=None, ge=1)
    null: Literal["allowed", "violation"] = "allowed"

    @field_validator("regex")
    @classmethod
    def _regex(cls, value: str | None) -> str | None:
        if value is None:
            return None
        found = problem(value)
        if found is not None:
            raise ValueError(f"the regex {found}")
        return value

    @model_validator(mode="after")
    def _rules(self) -> Validity:
        rules = (self.format, self.regex, self.min_length, self.max_length)
        if all(rule is None for rule in rules):
            raise ValueError("validity needs format, regex, min_length or max_length")
        low, high = self.min_length, self.max_length
        if low is not None and high is not None and low > high:
            raise fail_here(f"min_length ({low}) is above max_length ({high})", ("min_length",))
        return self

    def valid(self, ref: exp.Expr, dialect: str) -> exp.Expr:
        """The condition a non-NULL value meets when it is valid: every rule given, ANDed."""
        rules: list[exp.Expr] = []
        if self.format is not None:
            rules.append(full_match(ref, PATTERNS[self.format], dialect))
            if self.format in CODE_LISTS:
                listed = [literal(code) for code in codes(self.format)]
                rules.append(exp.In(this=ref.copy(), expressions=listed))
        if self.regex is not None:
            rules.append(full_match(ref, self.regex, dialect))
        if self.min_length is not None:
            size = exp.Literal.number(self.min_length)
            rules.append(exp.GTE(this=char_length(ref, dialect), expression=size))
        if self.max_length is not None:
            size = exp.Literal.number(self.max_length)
            rules.append(exp.LTE(this=char_length(ref, dialect), expression=size))
        return exp.and_(*rules) if len(rules) > 1 else rules[0]

    def sql(self, scope: Scope) -> Compiled:
        """Invalid, NULL and distinct invalid values; the sample is the violating values."""
        column = scope.column(self.column)
        ref = scope.col(column.name)
        invalid = exp.and_(not_null(ref), exp.Not(this=exp.paren(self.valid(ref, scope.dialect))))
        counts = scope.scoped(
            in_scope(),
            exp.alias_(count_when(invalid), "invalid"),
            exp.alias_(count_when(is_null(ref)), "null_values"),
            exp.alias_(count_distinct_when(invalid, ref), "distinct_invalid"),
        )
        violation = invalid if self.null == "allowed" else exp.or_(is_null(ref), invalid.copy())
        return scope.done(counts, scope.value_sample(ref, column.name, violation), column)

    def judged(self, counts: Counts) -> Judged:
        """Invalid values (and NULLs with ``null: violation``) against ``expect``."""
        nulls = counts.count("null_values") if self.null == "violation" else 0
        invalid = counts.count("invalid")
        counts.metrics["violations"] = invalid + nulls
        counts.metrics["invalid_percent"] = _percent(invalid, counts.in_scope)
        sample = counts.count("distinct_invalid") + (1 if nulls else 0)
        return counts.judge_compared(self, sample_rows=sample)

    def nothing_compared(self, counts: Counts) -> str | None:
        """With ``null: allowed``, a column NULL in every row compared nothing."""
        return all_null(self.column, counts) if self.null == "allowed" else None

    def unmeasured(self, metrics: Metrics) -> None:
        """No percent of an empty scope."""
        metrics["invalid_percent"] = None

    @classmethod
    def words(cls, result: CheckResult) -> str:
        """``3 invalid and 1 NULL in 1,000 rows`` (a percent ``expect`` adds the percent)."""
        invalid, nulls = metric(result, "invalid"), metric(result, "null_values")
        return f"{invalid:,} invalid and {nulls:,} NULL in {rows(metric(result, 'rows_in_scope'))}"

    def column_problems(self, column_type: str, have: str) -> list[tuple[Loc, str]]:
        """Its column must be text: a form is a text's."""
        if have == "text":
            return []
        return [
            (
                ("column",),
                f"{self.column} is {column_type}, not text: validity checks a text's form"
                " (cast it in a view, or use range or accepted_values)",
            )
        ]


def _percent(count: int, total: int) -> float | None:
    return float(Fraction(count, total) * 100) if total else None
