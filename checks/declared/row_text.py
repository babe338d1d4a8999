"""A row's normal text, the same on every engine, and its 60-bit hashes: what ``compare`` compares.

Two engines write the same value differently (``10.5`` and ``10.50``, a zoned
timestamp in the session's zone, ``CHAR(5)`` padded with spaces), so each
column is first written in a normal form chosen from both sides' types
(``Rule``), then the row's columns are joined and hashed with MD5, a function
DuckDB, PostgreSQL and MySQL/MariaDB all have (``HASHED_IN_SQL``). An engine
without it (SQLite) has its rows fetched and written, and hashed, in Python
by ``py_text`` and ``py_row_text``, which give the very text the SQL gives.

The rules (docs/checks.md, Reconciliation):

- numbers (integer, decimal, float on either side): written with the larger
  scale of the two sides (an integer's is 0, a float's 6), rounded half away
  from zero: ``10.5`` (scale 1) equals ``10.50`` (scale 2), ``-0.001`` at
  scale 2 is ``0.00``;
- text: trailing spaces dropped (``'abc  '`` equals ``'abc'``); leading spaces,
  case and other trailing whitespace (tabs, newlines) count;
- timestamps: a zoned timestamp is turned to UTC; one without a zone is taken
  as UTC; written to the microsecond (``2024-01-01 08:00:00.000000``);
  dates as ``2024-01-01``;
- booleans as ``1`` and ``0`` (MySQL's ``BOOLEAN`` is a ``TINYINT``);
- anything else as the engine casts it to text;
- NULL equals NULL and nothing else: a value is written ``:`` and its text, a
  NULL as nothing, joined by U+001F.

The hashes are data-diff's: 15 hex digits (60 bits) of the MD5 of the text,
an integer each engine can sum without overflow (``hash_sql``). The row's
hash takes digits 18–32; a key's position (where the key is not one integer
column) takes digits 1–15.
"""

from __future__ import annotations

import datetime as dt
import decimal
import hashlib
from dataclasses import dataclass
from typing import Any, Literal

from sqlglot import exp

from checks.sql.types import NUMBER_FAMILIES, family, parse_type

HASHED_IN_SQL = frozenset({"duckdb", "postgres", "mysql"})
"""The dialects whose MD5 and hex arithmetic Lookout writes; others are hashed in Python."""

SEPARATOR = "\x1f"
FLOAT_SCALE = 6
TIME_FORMAT = "%Y-%m-%d %H:%M:%S.%f"
ROW_DIGITS = (18, 15)  # 1-based start, length: the row hash
KEY_DIGITS = (1, 15)  # a key's position
POSITIONS = 2**60  # a key position is in [0, POSITIONS)

Form = Literal["number", "text", "timestamp", "date", "boolean", "other"]


@dataclass(frozen=True)
class Rule:
    """How one compared column is written on both sides.

    Attributes:
        form: the normal form (module docstring).
        scale: the decimals a number is written with.
    """

    form: Form
    scale: int = 0

    def words(self) -> str:
        """The rule in words, for the check's result."""
        if self.form == "number":
            return f"numbers at scale {self.scale}"
        return {
            "text": "text without trailing spaces",
            "timestamp": "timestamps in UTC",
            "date": "dates",
            "boolean": "booleans as 1/0",
            "other": "text as each engine writes it",
        }[self.form]


def _declared_scale(type_name: str, dialect: str) -> int | None:
    """A decimal type's written scale (``DECIMAL(10, 2)``: 2), None when it writes none."""
    built = parse_type(type_name, dialect)
    sizes = built.expressions if built is not None else []
    return int(sizes[1].sql()) if len(sizes) == 2 and sizes[1].sql().isdigit() else None


def _scale(type_name: str, dialect: str, have: str | None) -> int:
    if have == "float":
        return FLOAT_SCALE
    if have != "decimal":
        return 0
    declared = _declared_scale(type_name, dialect)
    return FLOAT_SCALE if declared is None else declared


def rule_for(left: tuple[str, str], right: tuple[str, str]) -> Rule:
    """The rule for a column of type ``left`` on one side and ``right`` on the other.

    Each side is ``(type name, dialect)``. A side whose type says nothing
    (SQLite's ``TEXT`` timestamps, an unknown name) takes the other's form; a
    date or timestamp on either side makes the column one (SQLAlchemy reflects
    SQLite's ``TIMESTAMP WITH TIME ZONE`` as ``NUMERIC``).
    """
    families = [family(name, dialect) for name, dialect in (left, right)]
    forms = [_form(f) for f in families]
    for form in ("timestamp", "date"):  # SQLite reflects TIMESTAMP WITH TIME ZONE as NUMERIC
        if form in forms:
            return Rule(form)
    if "number" in forms:
        scales = [
            _scale(name, dialect, have)
            for (name, dialect), have in zip((left, right), families, strict=True)
            if have in NUMBER_FAMILIES
        ]
        return Rule("number", max(scales))
    if "boolean" in forms:
        return Rule("boolean")
    return Rule("text" if "text" in forms else "other")


def _form(have: str | None) -> Form | None:
    if have in NUMBER_FAMILIES:
        return "number"
    if have in ("timestamp", "timestamptz"):
        return "timestamp"
    if have in ("date", "boolean", "text"):
        return have  # type: ignore[return-value]
    return None


def _text(node: exp.Expr) -> exp.Expr:
    return exp.cast(node, exp.DataType.build("text"))


def sql_text(ref: exp.Expr, rule: Rule, type_name: str, dialect: str) -> exp.Expr:
    """The column ``ref`` (of type ``type_name`` on its side) in its normal text; NULL stays NULL.

    A zoned timestamp is turned to UTC with ``timezone('UTC', …)``, but in MySQL, whose
    ``TIMESTAMP`` is read in the session's zone, which Lookout pins to UTC. An integer
    at scale 0, or a decimal at its own scale, is cast to text as it is (the same
    text, without the slower cast to ``DECIMAL(38, s)`` first).
    """
    have = family(type_name, dialect)
    if rule.form == "number":
        as_is = 0 if have == "integer" else _declared_scale(type_name, dialect)
        if have in ("integer", "decimal") and as_is == rule.scale:
            return _text(ref)
        if have not in NUMBER_FAMILIES:
            ref = exp.cast(ref, exp.DataType.build("double"))
        fixed = exp.DataType.build(f"DECIMAL(38, {rule.scale})")
        return _text(exp.cast(ref, fixed))
    if rule.form == "text":
        return exp.func("RTRIM", _text(ref) if have != "text" else ref)
    if rule.form == "timestamp":
        if have == "timestamptz" and dialect != "mysql":
            ref = exp.func("TIMEZONE", exp.Literal.string("UTC"), ref)
        return exp.TimeToStr(this=ref, format=exp.Literal.string(TIME_FORMAT))
    if rule.form == "date":
        return exp.TimeToStr(this=ref, format=exp.Literal.string("%Y-%m-%d"))
    if rule.form == "boolean" and have == "boolean":
        return _boolean(ref)
    return _text(ref)


def _boolean(ref: exp.Expr) -> exp.Expr:
    return exp.Case(
        ifs=[
            exp.If(this=ref.copy(), true=exp.Literal.string("1")),
            exp.If(this=exp.Not(this=ref.copy()), true=exp.Literal.string("0")),
        ]
    )


def sql_row_text(texts: list[exp.Expr]) -> exp.Expr:
    """The columns' normal texts joined: ``:`` and a value's text, NULL as nothing, by U+001F."""
    parts: list[exp.Expr] = []
    for index, text in enumerate(texts):
        field = exp.Coalesce(
            this=exp.DPipe(this=exp.Literal.string(":"), expression=text, safe=False),
            expressions=[exp.Literal.string("")],
        )
        if index:
            parts.append(exp.Literal.string(SEPARATOR))
        parts.append(field)
    joined = parts[0]
    for part in parts[1:]:
        joined = exp.DPipe(this=joined, expression=part, safe=False)
    return joined


def hash_sql(text: exp.Expr, dialect: str, digits: tuple[int, int]) -> exp.Expr:
    """A 60-bit integer of the MD5 of ``text``: ``digits`` (start, length) of its hex, as a BIGINT.

    Raises:
        ValueError: ``dialect`` is not in ``HASHED_IN_SQL``.
    """
    start, length = digits
    hex_part = exp.Substring(
        this=exp.MD5(this=text),
        start=exp.Literal.number(start),
        length=exp.Literal.number(length),
    )
    bigint = exp.DataType.build("BIGINT")
    if dialect == "duckdb":  # DuckDB casts '0x…' text to an integer
        return exp.cast(exp.DPipe(this=exp.Literal.string("0x"), expression=hex_part), bigint)
    if dialect == "postgres":  # 'x…' is a bit string; bit(60) casts to bigint
        bits = exp.cast(
            exp.DPipe(this=exp.Literal.string("x"), expression=hex_part),
            exp.DataType.build(f"BIT({length * 4})", dialect="postgres"),
        )
        return exp.cast(bits, bigint)
    if dialect == "mysql":  # CONV gives the decimal text of the hex digits
        converted = exp.func("CONV", hex_part, exp.Literal.number(16), exp.Literal.number(10))
        return exp.cast(converted, exp.DataType.build("DECIMAL(20, 0)"))
    raise ValueError(f"{dialect} is hashed in Python")


def py_text(value: Any, rule: Rule) -> str | None:
    """A fetched value in its normal text (the very text ``sql_text`` writes); None for NULL."""
    if value is None:
        return None
    if rule.form == "number":
        return _number_text(value, rule.scale)
    if rule.form == "text":
        return str(value).rstrip(" ")
    if rule.form in ("timestamp", "date"):
        try:
            moment = _moment(value)
        except ValueError:  # SQLite text that is no date: it differs, it is not an error
            return str(value)
        if rule.form == "date":
            return moment.strftime("%Y-%m-%d")
        if moment.tzinfo is not None:
            moment = moment.astimezone(dt.UTC).replace(tzinfo=None)
        return moment.strftime(TIME_FORMAT)
    if rule.form == "boolean":
        return "1" if value in (True, 1, "1", "true", "t") else "0"
    return str(value)


_NUMBERS = decimal.Context(prec=80)  # DECIMAL(38, s) and its sums: beyond the default 28 digits


def _number_text(value: Any, scale: int) -> str:
    """A number at ``scale`` decimals, rounded half away from zero; not a number: its text."""
    try:
        number = _NUMBERS.create_decimal(
            str(int(value) if isinstance(value, bool) else value).strip()
        )
        quantum = decimal.Decimal(1).scaleb(-scale)
        fixed = number.quantize(quantum, rounding=decimal.ROUND_HALF_UP, context=_NUMBERS)
    except (decimal.InvalidOperation, ValueError):
        return str(value)  # SQLite holds any value in any column: it differs, it is not an error
    return format(abs(fixed) if fixed == 0 else fixed, "f")


def _moment(value: Any) -> dt.datetime:
    if isinstance(value, dt.datetime):
        return value
    if isinstance(value, dt.date):
        return dt.datetime(value.year, value.month, value.day)
    return dt.datetime.fromisoformat(str(value).strip())


def py_row_text(texts: list[str | None]) -> str:
    """``sql_row_text`` in Python."""
    return SEPARATOR.join("" if text is None else f":{text}" for text in texts)


def py_hash(text: str, digits: tuple[int, int]) -> int:
    """``hash_sql`` in Python."""
    start, length = digits
    return int(hashlib.md5(text.encode()).hexdigest()[start - 1 : start - 1 + length], 16)


def key_shown(text: str) -> str:
    """A key's normal text as a person reads it: ``123``, ``(1, 'a')``, NULL as ``NULL``."""
    fields = ["NULL" if f == "" else f[1:] for f in text.split(SEPARATOR)]
    return fields[0] if len(fields) == 1 else f"({', '.join(fields)})"
