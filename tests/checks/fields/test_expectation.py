from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import pytest

from checks.fields.expectation import Expectation, duration_text, parse_expectation
from checks.fields.judgement import Judgement, evaluate, judge_percent
from checks.fields.value_words import describe, interval_text

SHAPE = "a scalar expectation needs exactly one row with one column"
FORMS = (
    "'== N', '!= N', '< N', '<= N', '> N', '>= N', 'between A and B' (N may be a percent "
    "like '1%' or a duration like '3h'), 'is true', 'is false', 'empty', 'not empty' or 'anomaly'"
)


@dataclass(frozen=True)
class Parsed:
    text: str
    op: str
    low: str | None
    high: str | None
    normalised: str


PARSED = [
    Parsed("== 0", "==", "0", None, "== 0"),
    Parsed("!=3", "!=", "3", None, "!= 3"),
    Parsed("<  -2.5", "<", "-2.5", None, "< -2.5"),
    Parsed("<= 0.05", "<=", "0.05", None, "<= 0.05"),
    Parsed(" > 1e3 ", ">", "1E+3", None, "> 1E+3"),
    Parsed(">= +.5", ">=", "0.5", None, ">= 0.5"),
    Parsed("between 1 and 2", "between", "1", "2", "between 1 and 2"),
    Parsed("BETWEEN -1E-2  And 0.25", "between", "-0.01", "0.25", "between -0.01 and 0.25"),
    Parsed("between 3 and 3", "between", "3", "3", "between 3 and 3"),
    Parsed("empty", "empty", None, None, "empty"),
    Parsed("Not  Empty", "not_empty", None, None, "not empty"),
]


@pytest.mark.parametrize("case", PARSED, ids=lambda c: c.text)
def test_parse(case: Parsed) -> None:
    parsed = parse_expectation(case.text)
    assert parsed.op == case.op
    assert parsed.low == (None if case.low is None else Decimal(case.low))
    assert parsed.high == (None if case.high is None else Decimal(case.high))
    assert parsed.text == str(parsed) == case.normalised
    assert parsed.scalar is (case.op not in ("empty", "not_empty"))


@dataclass(frozen=True)
class BadText:
    text: str
    message: str


BAD_TEXTS = [
    BadText("= 0", f"cannot read expect '= 0'; use {FORMS}"),
    BadText("== abc", f"cannot read expect '== abc'; use {FORMS}"),
    BadText("== nan", f"cannot read expect '== nan'; use {FORMS}"),
    BadText("between 1", f"cannot read expect 'between 1'; use {FORMS}"),
    BadText("is empty", f"cannot read expect 'is empty'; use {FORMS}"),
    BadText("0", f"cannot read expect '0'; use {FORMS}"),
    BadText("between 5 and 1", "between 5 and 1: the first bound is above the second"),
    BadText("", f"expect is empty; use {FORMS} (in YAML, quote a value starting with '>')"),
]


@pytest.mark.parametrize("case", BAD_TEXTS, ids=lambda c: c.text or "blank")
def test_parse_rejects(case: BadText) -> None:
    with pytest.raises(ValueError) as raised:
        parse_expectation(case.text)
    assert str(raised.value) == case.message


def test_expectation_built_in_code_fills_its_text() -> None:
    assert Expectation("<=", Decimal("0.05")).text == "<= 0.05"
    assert Expectation("between", Decimal(1), Decimal(2)).text == "between 1 and 2"
    with pytest.raises(ValueError, match="needs a finite number"):
        Expectation("==")
    with pytest.raises(ValueError, match="takes no number"):
        Expectation("empty", Decimal(1))


@dataclass(frozen=True)
class Judged:
    expect: str
    value: Any
    passed: bool
    note: str = ""


JUDGED = [
    Judged("== 0", 0, True),
    Judged("== 0", 1, False),
    Judged("!= 0", 1, True),
    Judged("!= 0", 0, False),
    Judged("< 10", 9, True),
    Judged("< 10", 10, False),
    Judged("<= 10", 10, True),
    Judged("<= 10", 11, False),
    Judged("> 10", 11, True),
    Judged("> 10", 10, False),
    Judged(">= 10", 10, True),
    Judged(">= 10", 9, False),
    Judged("between 1 and 2", 1, True, "inclusive low end"),
    Judged("between 1 and 2", 2, True, "inclusive high end"),
    Judged("between 1 and 2", Decimal("1.5"), True),
    Judged("between 1 and 2", Decimal("0.999"), False),
    Judged("between 1 and 2", Decimal("2.001"), False),
    Judged("== 0.3", Decimal("0.1") + Decimal("0.2"), True, "DECIMAL sum is exact"),
    Judged("== 0.3", 0.1 + 0.2, True, "DOUBLE sum within tolerance"),
    Judged("< 0.3", 0.30000000000000004, False, "within tolerance counts as equal"),
    Judged("<= 0.3", 0.30000000000000004, True),
    Judged("> 0.3", 0.30000000000000004, False),
    Judged(">= 0.3", 0.30000000000000004, True),
    Judged("!= 0.3", 0.30000000000000004, False),
    Judged("between 0.1 and 0.3", 0.30000000000000004, True),
    Judged("between 0.3 and 0.5", 0.29999999999999993, True),
    Judged("== 0.3", 0.3003, False, "outside tolerance"),
    Judged("== 0.3", Decimal("0.30000000000000004"), False, "decimals are exact"),
    Judged("== 9007199254740993", 9007199254740993, True, "ints never go through float"),
    Judged("== 9007199254740993", 9007199254740992, False),
    Judged("== 0", 0.0, True, "zero equals zero"),
    Judged("== 0", -0.0, True),
    Judged("== 0", 1e-300, False, "no absolute tolerance"),
    Judged("> -1e-3", Decimal("-0.0005"), True, "negative scientific bound"),
    Judged("< 1E+3", 999.5, True),
    # Bounds beyond what a float holds compare by their exact value, not 0.0 or infinity.
    Judged("== 1e-400", 0.0, False, "1e-400 is not zero"),
    Judged("> 1e-400", 0.0, False),
    Judged("< 1e-400", 0.0, True),
    Judged("> 1e-400", 5e-324, True, "the smallest float is above 1e-400"),
    Judged("between -1e-400 and 1e-400", 0.0, True),
    Judged("!= -1e-400", -0.0, True),
    Judged("== 1e309", 1e308, False, "1e309 is not infinite"),
    Judged("< 1e309", 1.7976931348623157e308, True),
    Judged(">= -1e400", -1.7976931348623157e308, True),
    Judged("== 0.1", 0.1, True, "the float nearest 0.1 is within tolerance"),
    Judged("== 1e-310", 1e-310, True, "a subnormal float against its own text"),
    Judged("== 1", 1 + 0.9e-10, True, "within the tolerance"),
    Judged("== 1", 1 + 1.1e-10, False),
    Judged("< 100", 99.9999999, True, "one part in 10^9 below is below"),
    Judged("between 0.15 and 0.15", 0.15000000000000002, True, "DOUBLE avg(0.1, 0.2)"),
    Judged("between 0.15 and 0.15", 0.14999999999717117, True, "float8 avg over 1e6 rows"),
]


@pytest.mark.parametrize("case", JUDGED, ids=lambda c: f"{c.expect} vs {c.value!r}")
def test_evaluate_scalar(case: Judged) -> None:
    outcome = evaluate(parse_expectation(case.expect), ["v"], [(case.value,)], 1)
    expected = int(case.value) if isinstance(case.value, int) else float(case.value)
    assert outcome == Judgement(value=expected, passed=case.passed, error=None)
    assert type(outcome.value) is type(expected)  # one JSON type: int for ints, else float


@dataclass(frozen=True)
class Failed:
    name: str
    columns: list[str]
    rows: list[tuple[Any, ...]]
    row_count: int
    error: str
    value: Any = None


DECIMAL_NAN = Decimal("NaN")
FAILED = [
    Failed("null", ["v"], [(None,)], 1, "returned NULL"),
    Failed("no row", ["v"], [], 0, "returned no row"),
    Failed("two rows", ["v"], [(1,), (2,)], 2, f"returned 2 rows; {SHAPE}"),
    Failed("rows beyond those fetched", ["v"], [(1,)], 3, f"returned 3 rows; {SHAPE}"),
    Failed("two columns", ["a", "b"], [(1, 2)], 1, f"returned 2 columns; {SHAPE}"),
    Failed("no column", [], [()], 1, f"returned 0 columns; {SHAPE}"),
    Failed("text", ["v"], [("abc",)], 1, "returned text 'abc', not a number"),
    Failed("numeric text", ["v"], [("5",)], 1, "returned text '5', not a number"),
    Failed(
        "bool",
        ["v"],
        [(True,)],
        1,
        "returned a boolean (true), not a number; compare it with 'is true' or 'is false'",
    ),
    Failed("nan", ["v"], [(math.nan,)], 1, "returned NaN, not a finite number"),
    Failed("inf", ["v"], [(math.inf,)], 1, "returned Infinity, not a finite number"),
    Failed("minus inf", ["v"], [(-math.inf,)], 1, "returned -Infinity, not a finite number"),
    Failed("decimal nan", ["v"], [(DECIMAL_NAN,)], 1, "returned NaN, not a finite number"),
    Failed(
        "date",
        ["v"],
        [(dt.date(2024, 1, 31),)],
        1,
        "returned a date (2024-01-31), not a number",
    ),
    Failed(
        "interval",
        ["v"],
        [(dt.timedelta(hours=3),)],
        1,
        "returned an interval (3h); compare it with a duration such as '< 3h'",
    ),
]


@pytest.mark.parametrize("case", FAILED, ids=lambda c: c.name)
def test_evaluate_errors_never_pass(case: Failed) -> None:
    outcome = evaluate(parse_expectation("== 5"), case.columns, case.rows, case.row_count)
    assert outcome.passed is None
    assert outcome.error == case.error
    assert outcome.value is None  # one JSON type across runs: no stray text or NaN


@dataclass(frozen=True)
class Counted:
    expect: str
    row_count: int
    passed: bool


COUNTED = [
    Counted("empty", 0, True),
    Counted("empty", 3, False),
    Counted("not empty", 3, True),
    Counted("not empty", 0, False),
]


@pytest.mark.parametrize("case", COUNTED, ids=lambda c: f"{c.expect} with {c.row_count}")
def test_evaluate_row_count(case: Counted) -> None:
    rows = [("x", i) for i in range(case.row_count)]
    outcome = evaluate(parse_expectation(case.expect), ["a", "b"], rows, case.row_count)
    assert outcome == Judgement(value=case.row_count, passed=case.passed, error=None)


@dataclass(frozen=True)
class Unit:
    text: str
    op: str
    unit: str
    low: str | None
    high: str | None
    normalised: str


UNITS = [
    Unit("<= 1%", "<=", "percent", "1", None, "<= 1%"),
    Unit("> 0 %", ">", "percent", "0", None, "> 0%"),
    Unit("between 1% and 5%", "between", "percent", "1", "5", "between 1% and 5%"),
    Unit("< 3h", "<", "duration", "10800", None, "< 3h"),
    Unit("<= 30m", "<=", "duration", "1800", None, "<= 30m"),
    Unit("<= 90m", "<=", "duration", "5400", None, "<= 90m"),
    Unit("< 1.5h", "<", "duration", "5400.0", None, "< 90m"),
    Unit("between 1h and 2d", "between", "duration", "3600", "172800", "between 1h and 2d"),
    Unit("< 45s", "<", "duration", "45", None, "< 45s"),
    Unit("is true", "is_true", "boolean", None, None, "is true"),
    Unit("IS  False", "is_false", "boolean", None, None, "is false"),
]


@pytest.mark.parametrize("case", UNITS, ids=lambda c: c.text)
def test_parse_percents_durations_and_booleans(case: Unit) -> None:
    parsed = parse_expectation(case.text)
    assert (parsed.op, parsed.unit, parsed.text) == (case.op, case.unit, case.normalised)
    assert parsed.low == (None if case.low is None else Decimal(case.low))
    assert parsed.high == (None if case.high is None else Decimal(case.high))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("<= -1%", "a percent is never negative"),
        ("<= 150%", "a percent of a count is at most 100% (got 150%)"),
        ("between 5% and 100.5%", "a percent of a count is at most 100% (got 100.5%)"),
        ("> -3h", "a duration is never negative"),
        ("between 1h and 30", "between 1h and 30: both bounds need the same unit"),
        ("between 2h and 1h", "between 2h and 1h: the first bound is above the second"),
        ("< 3 hours", f"cannot read expect '< 3 hours'; use {FORMS}"),
        ("is maybe", f"cannot read expect 'is maybe'; use {FORMS}"),
    ],
)
def test_parse_rejects_units(text: str, message: str) -> None:
    with pytest.raises(ValueError) as raised:
        parse_expectation(text)
    assert str(raised.value) == message


@pytest.mark.parametrize(
    ("expect", "count", "total", "passed", "value"),
    [
        ("> 0%", 3, 1_000_000, True, 0.0003),
        ("<= 0%", 3, 1_000_000, False, 0.0003),
        ("< 100%", 999_999, 1_000_000, True, 99.9999),
        ("< 100%", 999_999_999_999, 1_000_000_000_000, True, 99.9999999999),
        ("<= 1%", 1, 100, True, 1.0),
        ("< 1%", 1, 100, False, 1.0),
        ("== 33.333%", 1, 3, False, 100 / 3),  # exact: 1/3 is not 33.333 %
        ("between 0% and 100%", 0, 5, True, 0.0),
    ],
)
def test_percent_is_exact_from_the_counts(
    expect: str, count: int, total: int, passed: bool, value: float
) -> None:
    outcome = judge_percent(parse_expectation(expect), count, total)
    assert (outcome.passed, outcome.value, outcome.error) == (passed, value, None)


def test_percent_over_no_rows_is_not_evaluated() -> None:
    outcome = judge_percent(parse_expectation("< 1%"), 0, 0)
    assert outcome == Judgement(
        value=None,
        passed=None,
        not_evaluated="a percent over 0 rows is undefined (the total is 0)",
    )


@pytest.mark.parametrize(
    ("count", "total", "error"),
    [
        (None, 5, "the count is NULL"),
        (1, None, "the total is NULL"),
        (Decimal("1.5"), 5, "the count is a number (1.5), not a count of rows"),
        ("3", 5, "the count is text '3', not a count of rows"),
        (-1, 5, "counts are never negative (-1 of 5)"),
    ],
)
def test_percent_needs_two_counts(count: Any, total: Any, error: str) -> None:
    assert judge_percent(parse_expectation("< 1%"), count, total) == Judgement(None, None, error)


def test_percent_of_a_raw_query_reads_its_two_columns() -> None:
    expect = parse_expectation("< 1%")
    assert evaluate(expect, ["bad", "all"], [(Decimal(3), 1_000_000)], 1).passed is True
    one_column = evaluate(expect, ["share"], [(0.5,)], 1)
    assert one_column.error == (
        "returned 1 column; a percent needs one row with two columns: the count and the total"
    )


@pytest.mark.parametrize(
    ("expect", "value", "passed", "seconds"),
    [
        ("< 3h", dt.timedelta(hours=2, minutes=59, seconds=59), True, 10799.0),
        ("< 3h", dt.timedelta(hours=3), False, 10800.0),
        ("<= 3h", dt.timedelta(hours=3), True, 10800.0),
        ("between 1h and 2d", dt.timedelta(days=2), True, 172800.0),
        ("between 1h and 2d", dt.timedelta(days=2, microseconds=1), False, 172800.000001),
        ("<= 30d", dt.timedelta(days=30), True, 2592000.0),
        ("< 1h", dt.timedelta(hours=-2), True, -7200.0),
    ],
)
def test_durations_compare_exactly(
    expect: str, value: dt.timedelta, passed: bool, seconds: float
) -> None:
    outcome = evaluate(parse_expectation(expect), ["age"], [(value,)], 1)
    assert (outcome.passed, outcome.value, outcome.error) == (passed, seconds, None)


def test_a_duration_needs_an_interval() -> None:
    outcome = evaluate(parse_expectation("< 3h"), ["age"], [(10800,)], 1)
    assert outcome.error == "returned a number (10800), not an interval; a duration needs one"


@pytest.mark.parametrize(
    ("expect", "value", "passed", "error"),
    [
        ("is true", True, True, None),
        ("is true", False, False, None),
        ("is false", False, True, None),
        ("is true", None, None, "returned NULL"),
        ("is true", 1, None, "returned a number (1), not a boolean"),
        ("is true", "t", None, "returned text 't', not a boolean"),
    ],
)
def test_booleans(expect: str, value: Any, passed: bool | None, error: str | None) -> None:
    outcome = evaluate(parse_expectation(expect), ["ok"], [(value,)], 1)
    assert (outcome.passed, outcome.error) == (passed, error)
    assert outcome.value == (value if error is None else None)


def test_duration_text() -> None:
    assert [duration_text(s) for s in (Decimal(10800), Decimal(5400), Decimal(90), 1.5, 0)] == [
        "3h",
        "90m",
        "90s",
        "1.5s",
        "0s",
    ]


@pytest.mark.parametrize(
    ("interval", "text"),
    [
        (dt.timedelta(hours=3), "3h"),
        (dt.timedelta(days=1, hours=2, minutes=30), "1d 2h 30m"),
        (dt.timedelta(days=400), "400d"),
        (dt.timedelta(seconds=-90), "-1m 30s"),
        (dt.timedelta(milliseconds=500), "0.5s"),
        (dt.timedelta(minutes=1, microseconds=1), "1m 0.000001s"),
        (dt.timedelta(0), "0s"),
    ],
)
def test_an_interval_in_an_error_reads_as_expect_writes_it(
    interval: dt.timedelta, text: str
) -> None:
    assert interval_text(interval) == text
    assert describe(interval) == f"an interval ({text})"


def test_weeks_are_a_duration_unit_in_bounds_and_durations() -> None:
    from checks.fields.schedule import parse_duration

    assert parse_duration("1w") == 604_800.0
    assert parse_expectation("<= 2w").low == Decimal(1_209_600)
