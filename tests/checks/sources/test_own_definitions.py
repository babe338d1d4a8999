"""A function, macro or view of the source's own schema is used only when it reads its data sets."""

from __future__ import annotations

from pathlib import Path

import duckdb
import psycopg
import pytest

from checks.errors import QueryRejected
from checks.settings.limits import Limits
from checks.settings.sources import SQLAlchemySource
from checks.sources import DuckDBQuerySource, SQLQuerySource


def test_postgres_functions_and_views_over_a_left_out_table_are_not_used(
    empty_pg_url: str,
) -> None:
    with psycopg.connect(empty_pg_url.replace("+psycopg", ""), autocommit=True) as conn:
        conn.execute(
            """
            CREATE TABLE staff (id int, name text);
            CREATE TABLE payroll (id int, ssn text);
            INSERT INTO staff VALUES (1, 'Ada');
            INSERT INTO payroll VALUES (1, '078-05-1120');
            CREATE FUNCTION employee_ssn(int) RETURNS text LANGUAGE sql STABLE
              AS 'SELECT ssn FROM payroll WHERE id = $1';
            CREATE FUNCTION shout(text) RETURNS text LANGUAGE sql IMMUTABLE
              AS 'SELECT upper($1)';
            CREATE VIEW staff_v AS SELECT s.name, p.ssn FROM staff s JOIN payroll p USING (id);
            CREATE VIEW names AS SELECT name FROM staff;
            """
        )
    config = SQLAlchemySource(
        type="sqlalchemy", url=empty_pg_url, tables=["staff", "staff_v", "names"]
    )
    with SQLQuerySource("hr", config, Limits()) as source:
        assert [d.name for d in source.catalog()] == ["names", "staff"]  # staff_v: taken out
        with pytest.raises(QueryRejected) as caught:
            source.query("SELECT employee_ssn(id) FROM staff")
        assert caught.value.reason == (
            "function employee_ssn() is not allowed: it reads payroll, which the source does"
            " not offer"
        )
        assert source.query("SELECT shout(name) FROM names").rows == [("ADA",)]
        with pytest.raises(QueryRejected):
            source.query("SELECT * FROM staff_v")


def test_duckdb_macros_and_views_over_another_schema_are_not_used(tmp_path: Path) -> None:
    path = tmp_path / "hr.duckdb"
    with duckdb.connect(str(path)) as conn:
        conn.execute(
            """
            CREATE SCHEMA hidden;
            CREATE TABLE hidden.payroll (id INTEGER, ssn VARCHAR);
            CREATE TABLE staff (id INTEGER, name VARCHAR);
            INSERT INTO staff VALUES (1, 'Ada');
            INSERT INTO hidden.payroll VALUES (1, '078-05-1120');
            CREATE MACRO employee_ssn(i) AS (SELECT ssn FROM hidden.payroll WHERE id = i);
            CREATE MACRO twice(x) AS x * 2;
            CREATE VIEW staff_v AS
              SELECT s.name, p.ssn FROM staff s JOIN hidden.payroll p USING (id);
            """
        )
    with DuckDBQuerySource("hr", path, Limits()) as source:
        assert [d.name for d in source.catalog()] == ["staff"]
        with pytest.raises(QueryRejected) as caught:
            source.query("SELECT employee_ssn(id) FROM staff")
        assert caught.value.reason == (
            "function employee_ssn() is not allowed: it reads hidden.payroll, which the source"
            " does not offer"
        )
        assert source.query("SELECT twice(id) AS t FROM staff").rows == [(2,)]
