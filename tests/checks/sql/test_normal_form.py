"""A query's normal form: the same query whatever its spacing, case and comments."""

from __future__ import annotations

import pytest

from checks.sql.normal_form import normal_sql, query_key


@pytest.mark.parametrize("dialect", ["duckdb", "postgres"])
def test_spacing_keyword_and_name_case_and_comments_do_not_count(dialect: str) -> None:
    one = "SELECT tail FROM planes WHERE seats > 100"
    other = "select  TAIL\n from Planes -- big\n where seats>100"
    assert normal_sql(other, dialect) == "SELECT tail FROM planes WHERE seats > 100"
    assert query_key(one, dialect) == query_key(other, dialect)


def test_literals_and_quoted_names_keep_their_meaning() -> None:
    assert query_key("SELECT 1 WHERE 'A' = x", "postgres") != query_key(
        "SELECT 1 WHERE 'a' = x", "postgres"
    )
    assert normal_sql('SELECT "Tail" FROM t', "postgres") == 'SELECT "Tail" FROM t'


def test_text_that_does_not_parse_matches_itself_across_spacing() -> None:
    assert normal_sql("SELECT (  1", "duckdb") == "SELECT ( 1"
    assert len(query_key("SELECT (  1", "duckdb")) == 64
