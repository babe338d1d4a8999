"""A query's normal form: the same query whatever its spacing, case and comments."""

from __future__ import annotations

import hashlib

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


def test_kept_keys_are_the_ones_computed_afresh_per_dialect() -> None:
    texts = ["select A from T", "SELECT (  1", 'SELECT "Tail" FROM t -- note']
    for dialect in ("duckdb", "postgres", "snowflake", None):
        for sql in texts:
            afresh = hashlib.sha256(normal_sql(sql, dialect).encode()).hexdigest()
            query_key.cache_clear()
            assert query_key(sql, dialect) == afresh
            assert query_key(sql, dialect) == afresh
            assert query_key.cache_info().hits == 1
    # Snowflake folds unquoted names to upper case: another dialect, another key.
    assert normal_sql("select A from T", "snowflake") == "SELECT A FROM T"
    assert query_key("select A from T", "snowflake") != query_key("select A from T", "duckdb")
