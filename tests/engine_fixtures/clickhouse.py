"""The shop on ClickHouse: its tables built in a chdb data folder, and its opener fixture.

The shop's tables (``tests.checks.declared.shop.TABLES``) are read by sqlglot and written
in ClickHouse's SQL: every column without NOT NULL ``Nullable(…)`` (so NULLs behave as in
SQL), ``TIMESTAMP`` as ``DateTime64(6)`` and ``TIMESTAMP WITH TIME ZONE`` as
``DateTime64(6, 'UTC')``, each a MergeTree table. The folder is written by a child
process (chdb runs one engine on one folder per process, and the source's own child
opens it afterwards), once per session.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import sqlglot
from sqlglot import exp

from checks.settings.sources import ClickHouseSource
from checks.sources.clickhouse_source import ClickHouseQuerySource

VIEWS = """
CREATE VIEW tiny AS
  SELECT CAST(number AS Int64) AS id, CASE WHEN number < 3 THEN NULL ELSE 1 END AS v
  FROM numbers(1000000);
CREATE VIEW nearly_all AS
  SELECT CAST(number AS Int64) AS id, CASE WHEN number < 999999 THEN NULL ELSE 1 END AS v
  FROM numbers(1000000);
"""
"""The million-row views, as the other engines' ``VIEWS`` (``numbers()`` is ClickHouse's range)."""

_TIMESTAMPS = (
    exp.DType.TIMESTAMP,
    exp.DType.TIMESTAMPNTZ,
    exp.DType.DATETIME,
    exp.DType.TIMESTAMPTZ,
)

_BUILD = """
import sys
import chdb
conn = chdb.connect(sys.argv[1])
for statement in sys.stdin.read().split(";\\n"):
    if statement.strip():
        conn.query(statement)
conn.close()
"""


def _clickhouse_column(column: exp.ColumnDef) -> None:
    """A column as ClickHouse should hold it: Nullable unless NOT NULL; timestamps in µs."""
    kind = column.args["kind"]
    not_null = [
        c for c in column.constraints if isinstance(c.args.get("kind"), exp.NotNullColumnConstraint)
    ]
    zoned = kind.this == exp.DType.TIMESTAMPTZ
    if kind.this in _TIMESTAMPS:
        kind = exp.DataType.build(
            "DateTime64(6, 'UTC')" if zoned else "DateTime64(6)", dialect="clickhouse"
        )
    kind.set("nullable", not not_null)
    for constraint in not_null:
        constraint.pop()
    column.set("kind", kind)


def clickhouse_statements(sql: str) -> list[str]:
    """The shop's DuckDB statements in ClickHouse's SQL, each table a MergeTree."""
    made = []
    for statement in sqlglot.parse(sql, read="duckdb"):
        assert statement is not None
        if isinstance(statement, exp.Create):
            for column in statement.find_all(exp.ColumnDef):
                _clickhouse_column(column)
            text = statement.sql(dialect="clickhouse") + " ENGINE = MergeTree ORDER BY tuple()"
        else:
            text = statement.sql(dialect="clickhouse")
        made.append(text)
    return made


def build_chdb(folder: Path) -> Path:
    """Write the shop's tables and views into a chdb data folder (in a child process)."""
    from tests.checks.declared.shop import TABLES

    run_chdb(folder, [*clickhouse_statements(TABLES), *VIEWS.split(";\n")])
    return folder


def run_chdb(folder: Path, statements: list[str]) -> None:
    """Run ClickHouse statements on a chdb data folder, in a child process of their own.

    Raises RuntimeError with chdb's message when a statement fails. The folder must not be
    open in another process (chdb holds one folder per process).
    """
    done = subprocess.run(
        [sys.executable, "-c", _BUILD, str(folder)],
        input=";\n".join(s.strip() for s in statements if s.strip()),
        text=True,
        check=False,
        capture_output=True,
    )
    if done.returncode:
        last = done.stderr.strip().splitlines()[-1:]
        raise RuntimeError(f"chdb refused {statements}: {' '.join(last)}")


@pytest.fixture(scope="session")
def shop_chdb_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The shop's tables in a chdb data folder of this session."""
    return build_chdb(tmp_path_factory.mktemp("shop-chdb") / "data")


@pytest.fixture(scope="session")
def shop_clickhouse_opener(shop_chdb_path: Path) -> object:
    """Opens the shop on ClickHouse (chdb) (``tests.checks.declared.shop.SHOP_ENGINES``)."""
    config = ClickHouseSource(type="clickhouse", path=str(shop_chdb_path))
    return lambda limits: ClickHouseQuerySource("shop", config, limits)
