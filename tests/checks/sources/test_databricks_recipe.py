"""Databricks SQL by its SQL only: the session each connection opens with, every statement a
query sends (a DB-API stand-in that records them), the grants read, and the kinds' SQL.

Databricks cannot run here; what is tested is Lookout's own output to it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from sqlalchemy.engine import make_url

from checks.declared.compile import compile_check
from checks.settings.limits import Limits
from checks.sources.base import Column, DataSet
from checks.sources.cells import Oversized
from checks.sources.fingerprint import collect
from checks.sources.recipes import DIALECTS, recipe_for
from checks.sources.recipes.databricks import DatabricksRecipe
from checks.sql.guard import guard
from tests.checks.declared.test_kept_per_process import CHECKS, spec

URL = (
    "databricks://token:dapi-secret@adb-1.azuredatabricks.net"
    "?http_path=/sql/1.0/warehouses/abc&catalog=main&schema=sales"
)


class Cursor:
    """A DB-API cursor that records each statement and answers from a script."""

    def __init__(self, log: list[str], description: list[tuple[str, str]], rows: list[Any]):
        self.log = log
        self.types = description
        self.rows = rows
        self.description: list[tuple[str, str]] | None = None

    def execute(self, sql: str) -> None:
        self.log.append(sql)
        if sql.endswith("LIMIT 0"):
            self.description = self.types
        elif sql.startswith("SELECT"):
            wide = len(self.rows[0]) if self.rows else len(self.types)
            self.description = [(f"c{i}", "string") for i in range(wide)]

    def fetchmany(self, size: int) -> Sequence[Sequence[Any]]:
        batch, self.rows = self.rows[:size], self.rows[size:]
        return batch

    def cancel(self) -> None:
        self.log.append("<cancel>")

    def close(self) -> None:
        self.log.append("<close>")


class Connection:
    def __init__(self, cursor: Cursor) -> None:
        self._cursor = cursor

    def cursor(self) -> Cursor:
        return self._cursor


def run(cursor: Cursor, sql: str, limits: Limits, timeout_s: float = 30.0) -> Any:
    def finish(fetch: Any, columns: list[str]) -> Any:
        return collect(fetch, sql=sql, columns=columns, max_rows=10, scan_rows=100,
                       started=0.0, timeout_s=float("inf"), limits=limits)  # fmt: skip

    return DatabricksRecipe().run(
        Connection(cursor), sql, timeout_s, finish, limits=limits, schema="sales"
    )


def test_the_url_names_the_databricks_recipe_and_dialect() -> None:
    assert make_url(URL).get_backend_name() == "databricks"
    assert DIALECTS["databricks"] == "databricks"
    recipe = recipe_for("databricks")
    assert (recipe.label, recipe.dialect, recipe.extra) == (
        "Databricks SQL",
        "databricks",
        "databricks",
    )


def test_every_connection_opens_with_the_timeout_utc_and_ansi() -> None:
    url, options = DatabricksRecipe().engine_args(
        "lake", make_url(URL), Limits(query_timeout_s=12.5)
    )
    assert url == make_url(URL)
    assert options == {
        "connect_args": {
            "session_configuration": {
                "STATEMENT_TIMEOUT": "13",
                "TIMEZONE": "UTC",
                "ANSI_MODE": "true",
            },
            "_socket_timeout": 16,  # 12.5 s and its grace: a silent server ends the read
            "_retry_stop_after_attempts_count": 3,
        },
        "pool_pre_ping": True,
    }
    # What databricks-sqlalchemy reads from the URL for databricks.sql.connect (the
    # connect_args above are passed beside these).
    import sqlalchemy as sa

    engine = sa.create_engine(url, **options)
    _, kwargs = engine.dialect.create_connect_args(url)
    assert kwargs == {
        "server_hostname": "adb-1.azuredatabricks.net",
        "access_token": "dapi-secret",
        "http_path": "/sql/1.0/warehouses/abc",
        "catalog": "main",
        "schema": "sales",
        "use_inline_params": False,
    }
    engine.dispose()


def test_a_query_sets_its_limit_reads_its_types_then_runs_as_checked() -> None:
    log: list[str] = []
    cursor = Cursor(log, [("n", "bigint"), ("day", "date")], [(3, None), (4, None)])
    result = run(cursor, "SELECT COUNT(*) AS n, day FROM t GROUP BY day", Limits(), timeout_s=4.2)
    assert log == [
        "SET STATEMENT_TIMEOUT = 5",
        "SELECT * FROM (\nSELECT COUNT(*) AS n, day FROM t GROUP BY day\n) AS lookout_q LIMIT 0",
        "SELECT COUNT(*) AS n, day FROM t GROUP BY day",  # fixed-size cells: not wrapped
        "<close>",
    ]
    assert (result.columns, result.rows, result.row_count) == (
        ["n", "day"],
        [(3, None), (4, None)],
        2,
    )


def test_text_cells_are_measured_in_sql_and_a_huge_one_arrives_oversized() -> None:
    log: list[str] = []
    limits = Limits(fetch_cell_chars=100, max_cell_chars=10)
    # The wrapped row: value when small, else NULL + size + md5 + head.
    wide = [("ok", None, None, None), (None, 5000, "9a0364b9", "xxxxxxxxxx")]
    cursor = Cursor(log, [("name", "string")], wide)
    result = run(cursor, "SELECT name FROM t", limits)
    assert log[2] == (
        "SELECT CASE WHEN `w0` <= 100 THEN `c0` END, CASE WHEN `w0` > 100 THEN `w0` END,"
        " CASE WHEN `w0` > 100 THEN md5(CAST(`c0` AS STRING)) END,"
        " CASE WHEN `w0` > 100 THEN left(`c0`, 10) END"
        " FROM (SELECT `c0`, octet_length(`c0`) AS `w0` FROM (\nSELECT name FROM t\n)"
        " AS lookout_q(`c0`)) AS lookout_w"
    )
    assert result.rows == [("ok",), (Oversized("string", 5000, "9a0364b9", "xxxxxxxxxx"),)]


class Grants:
    """A SQLAlchemy connection's ``exec_driver_sql``, recorded and scripted."""

    def __init__(self, answers: dict[str, Any]) -> None:
        self.answers = answers
        self.log: list[tuple[str, Any]] = []

    def exec_driver_sql(self, sql: str, params: Any = None) -> Any:
        self.log.append((sql, params))
        answer = self.answers[sql if params is None else f"{sql} {params['p']}"]
        return Answer(answer)


class Answer:
    def __init__(self, value: Any) -> None:
        self.value = value

    def scalar(self) -> Any:
        return self.value

    def fetchall(self) -> Any:
        return self.value


def test_write_grants_of_the_user_and_its_groups_are_named() -> None:
    conn = Grants(
        {
            "SELECT current_user()": "ana@x.org",
            "SHOW GRANTS ON SCHEMA `main`.`sales`": [
                ("ana@x.org", "SELECT", "SCHEMA", "main.sales"),
                ("ana@x.org", "MODIFY", "SCHEMA", "main.sales"),
                ("engineers", "CREATE TABLE", "SCHEMA", "main.sales"),
                ("admins", "ALL PRIVILEGES", "SCHEMA", "main.sales"),
                ("engineers", "USE SCHEMA", "SCHEMA", "main.sales"),
            ],
            "SELECT is_account_group_member(:p) engineers": True,
            "SELECT is_account_group_member(:p) admins": False,
        }
    )
    warnings = DatabricksRecipe().write_warnings(conn, "main.sales")  # type: ignore[arg-type]
    assert warnings == [
        "ana@x.org holds MODIFY on schema main.sales",
        "ana@x.org holds CREATE TABLE on schema main.sales through group engineers",
    ]
    assert [sql for sql, _ in conn.log] == [
        "SELECT current_user()",
        "SHOW GRANTS ON SCHEMA `main`.`sales`",
        "SELECT is_account_group_member(:p)",
        "SELECT is_account_group_member(:p)",
    ]


CATALOG = [
    DataSet(
        "orders",
        (
            Column("id", "int", nullable=False),
            Column("status", "string", nullable=True),
            Column("customer_id", "int", nullable=True),
            Column("created_at", "timestamp", nullable=True),
        ),
        5,
    ),
    DataSet("customers", (Column("id", "int"), Column("email", "string")), 4),
]


def test_typed_kinds_compile_to_databricks_sql() -> None:
    missing = compile_check(spec(CHECKS[2]), CATALOG, "databricks", sample_rows=10)
    assert missing.counts_sql == (
        "SELECT COUNT(*) AS rows_in_scope, COUNT(CASE WHEN `t`.`status` IS NULL"
        " OR `t`.`status` IN ('lost', '1') THEN 1 END) AS missing FROM `orders` AS t"
    )
    # NULLs last, said where Databricks would put them first (ascending).
    assert missing.sample_sql == (
        "SELECT * FROM `orders` AS t WHERE (`t`.`status` IS NULL OR `t`.`status` IN ('lost', '1'))"
        " ORDER BY `t`.`id` NULLS LAST, `t`.`status` NULLS LAST, `t`.`customer_id` NULLS LAST"
        " LIMIT 10"
    )
    freshness = compile_check(spec(CHECKS[6]), CATALOG, "databricks", sample_rows=10)
    assert freshness.counts_sql == (
        "SELECT COUNT(*) AS rows_in_scope, COUNT(`t`.`created_at`) AS rows_with_value,"
        " MAX(`t`.`created_at`) AS latest FROM `orders` AS t"
    )
    duplicates = compile_check(spec(CHECKS[3]), CATALOG, "databricks", sample_rows=10)
    assert duplicates.sample_sql == (
        "SELECT `t`.`customer_id` AS `customer_id`, `t`.`status` AS `status`, COUNT(*) AS `rows`"
        " FROM `orders` AS t GROUP BY `t`.`customer_id`, `t`.`status` HAVING COUNT(*) > 1"
        " ORDER BY COUNT(*) DESC, `t`.`customer_id` NULLS LAST, `t`.`status` NULLS LAST LIMIT 10"
    )


@pytest.mark.parametrize("check", CHECKS, ids=[next(iter(c)) for c in CHECKS])
def test_every_kind_passes_the_databricks_guard_unchanged(check: dict[str, Any]) -> None:
    compiled = compile_check(spec(check), CATALOG, "databricks", sample_rows=10)
    for sql in filter(None, (compiled.counts_sql, compiled.sample_sql)):
        assert guard(sql, dialect="databricks", allowed_tables=["orders", "customers"],
                     schema="sales") == sql  # fmt: skip
