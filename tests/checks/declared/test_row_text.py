"""A value's normal text: the same from DuckDB's and PostgreSQL's SQL as from Python."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

import duckdb
import psycopg
import pytest
from sqlglot import exp

from checks.declared import row_text
from checks.declared.row_text import Rule
from tests.conftest import PG_ADMIN_URL

CASES: list[tuple[str, str, Rule, Any, str]] = [
    # SQL literal, its type, the rule, the value a driver gives, the normal text
    ("10.5", "DECIMAL(10,2)", Rule("number", 4), Decimal("10.50"), "10.5000"),
    ("-0.001", "DECIMAL(10,3)", Rule("number", 2), Decimal("-0.001"), "0.00"),
    ("1.005", "DECIMAL(10,3)", Rule("number", 2), Decimal("1.005"), "1.01"),
    ("-1.005", "DECIMAL(10,3)", Rule("number", 2), Decimal("-1.005"), "-1.01"),
    ("42", "INTEGER", Rule("number", 2), 42, "42.00"),
    ("0.1", "DOUBLE PRECISION", Rule("number", 6), 0.1, "0.100000"),
    ("'a b  '", "VARCHAR(10)", Rule("text"), "a b  ", "a b"),
    ("' a'", "VARCHAR(10)", Rule("text"), " a", " a"),
    (
        "'2024-06-30 23:59:59.123456+02'",
        "TIMESTAMP WITH TIME ZONE",
        Rule("timestamp"),
        dt.datetime(2024, 6, 30, 23, 59, 59, 123456, tzinfo=dt.timezone(dt.timedelta(hours=2))),
        "2024-06-30 21:59:59.123456",
    ),
    (
        "'2024-01-01 10:00:00'",
        "TIMESTAMP",
        Rule("timestamp"),
        "2024-01-01 10:00:00",
        "2024-01-01 10:00:00.000000",
    ),
    ("'2024-02-29'", "DATE", Rule("date"), dt.date(2024, 2, 29), "2024-02-29"),
    ("TRUE", "BOOLEAN", Rule("boolean"), True, "1"),
]


def sql_of(dialect: str, literal: str, type_name: str, rule: Rule) -> str:
    value = exp.column("v", table="t")
    text = row_text.sql_text(value, rule, type_name, dialect)
    inner = f"SELECT CAST({literal} AS {type_name}) AS v"
    return f"SELECT {text.sql(dialect=dialect)} FROM ({inner}) AS t"


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[1]}-{c[0]}")
def test_python_writes_the_text_the_sql_does(case: tuple[str, str, Rule, Any, str]) -> None:
    literal, type_name, rule, value, text = case
    assert row_text.py_text(value, rule) == text
    with duckdb.connect() as conn:
        conn.execute("SET TimeZone = 'America/New_York'")  # not UTC: the zone is turned
        row = conn.execute(sql_of("duckdb", literal, type_name, rule)).fetchone()
        assert row == (text,)
    with psycopg.connect(PG_ADMIN_URL) as pg:
        pg.execute("SET TIME ZONE 'Asia/Tokyo'")
        row = pg.execute(sql_of("postgres", literal, type_name, rule)).fetchone()  # type: ignore[arg-type]
        assert row == (text,)


def test_a_null_is_nothing_and_a_value_is_marked() -> None:
    assert row_text.py_row_text([None, "", "x"]) == "\x1f:\x1f:x"
    assert row_text.key_shown(row_text.py_row_text(["k0", "7"])) == "(k0, 7)"
    assert row_text.key_shown(row_text.py_row_text([None])) == "NULL"


def test_the_rule_takes_the_larger_scale_and_the_typed_side() -> None:
    assert row_text.rule_for(("DECIMAL(10,2)", "duckdb"), ("NUMERIC(12, 4)", "postgres")) == Rule(
        "number", 4
    )
    assert row_text.rule_for(("INTEGER", "sqlite"), ("DOUBLE", "duckdb")) == Rule("number", 6)
    assert row_text.rule_for(("TEXT", "sqlite"), ("TIMESTAMPTZ", "postgres")) == Rule("timestamp")
    assert row_text.rule_for(("VARCHAR", "duckdb"), ("TEXT", "postgres")) == Rule("text")
