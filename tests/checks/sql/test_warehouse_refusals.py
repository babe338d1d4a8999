"""Trino's, Amazon Redshift's and SQL Server's own refusals, through the real guard in each dialect.

Each row: a statement, its dialect, and the exact rule and reason the guard gives
(``checks.sql.engines.trino``, ``.redshift``, ``.sqlserver`` and the rules every
dialect gets). The source's schema is ``sales`` (Trino), ``public`` (Redshift) and
``dbo`` (SQL Server); its data sets are ``orders`` and ``customers``.
"""

from __future__ import annotations

import pytest

from checks.errors import QueryRejected
from checks.sql.guard import guard

SCHEMA = {"trino": "sales", "redshift": "public", "tsql": "dbo"}

REFUSED = [
    # Trino
    (
        "trino",
        "SELECT * FROM TABLE(pg.system.query(query => 'SELECT * FROM secrets'))",
        "function",
        "function query() is not allowed: it runs SQL given as text",
    ),
    (
        "trino",
        "SELECT * FROM TABLE(mongo.system.raw_query(database => 'a', collection => 'b',"
        " filter => '{}'))",
        "function",
        "function raw_query() is not allowed: it hands text to the connected database to run"
        " (a connector's pass-through query)",
    ),
    (
        "trino",
        "SELECT * FROM TABLE(system.sequence(start => 1, stop => 3))",
        "system-catalog",
        "system.… refers to a system schema",
    ),
    (
        "trino",
        "SELECT * FROM TABLE(exclude_columns(input => TABLE(orders), columns => DESCRIPTOR(id)))",
        "table-function",
        "table function table() is not allowed; only generate_series, range, unnest",
    ),
    (
        "trino",
        "SELECT * FROM system.runtime.queries",
        "schema",
        "system.runtime.queries: catalog-qualified names are not allowed",
    ),
    (
        "trino",
        "SELECT * FROM runtime.nodes",
        "schema",
        "runtime.nodes: schema runtime is not this source's schema",
    ),
    (
        "trino",
        "CALL system.runtime.kill_query(query_id => '20240101_1', message => 'x')",
        "command",
        "CALL is not allowed in a read-only query",
    ),
    ("trino", "PREPARE q FROM SELECT 1", "command", "PREPARE is not allowed in a read-only query"),
    ("trino", "EXECUTE q", "command", "EXECUTE is not allowed in a read-only query"),
    (
        "trino",
        "EXECUTE IMMEDIATE 'SELECT 1'",
        "command",
        "EXECUTE is not allowed in a read-only query",
    ),
    (
        "trino",
        "SELECT ai_gen('describe the customers')",
        "function",
        "function ai_gen() is not allowed: it sends the text to a language model over the network",
    ),
    (
        "trino",
        "SELECT current_groups()",
        "function",
        "function current_groups() is not allowed: it reads the database's own metadata",
    ),
    (
        "trino",
        'SELECT * FROM "orders$partitions"',
        "unknown-table",
        '"orders$partitions" is not a data set of this source',
    ),
    # Amazon Redshift
    (
        "redshift",
        "UNLOAD ('SELECT * FROM orders') TO 's3://bucket/x' IAM_ROLE 'arn:aws:iam::1:role/r'",
        "command",
        "UNLOAD is not allowed in a read-only query",
    ),
    (
        "redshift",
        "COPY orders FROM 's3://bucket/x' IAM_ROLE 'arn:aws:iam::1:role/r'",
        "write",
        "COPY is not allowed in a read-only query",
    ),
    (
        "redshift",
        "SELECT f_sentiment(status) FROM orders",
        "function",
        "function f_sentiment() is not allowed: it is a user-defined function (Redshift names"
        " them f_…): a Python or Lambda UDF runs code outside SQL",
    ),
    (
        "redshift",
        "SELECT pg_cancel_backend(1)",
        "function",
        "function pg_cancel_backend() is not allowed: it has side effects",
    ),
    (
        "redshift",
        "SELECT current_aws_account()",
        "function",
        "function current_aws_account() is not allowed: it reads the database's own metadata",
    ),
    (
        "redshift",
        "SELECT slice_num() FROM orders",
        "function",
        "function slice_num() is not allowed: it reads the database's own metadata",
    ),
    (
        "redshift",
        "SELECT * FROM stl_query",
        "unknown-table",
        "stl_query is not a data set of this source",
    ),
    (
        "redshift",
        "SELECT * FROM svv_tables",
        "unknown-table",
        "svv_tables is not a data set of this source",
    ),
    (
        "redshift",
        "SELECT * FROM pg_catalog.stv_sessions",
        "system-catalog",
        "pg_catalog.stv_sessions is in a system schema",
    ),
    (
        "redshift",
        "SELECT * FROM spectrum.clicks",
        "schema",
        "spectrum.clicks: schema spectrum is not this source's schema",
    ),
    # SQL Server
    (
        "tsql",
        "SELECT * FROM OPENROWSET('MSOLEDBSQL', 'Server=other;Trusted_Connection=yes;',"
        " 'SELECT 1') AS r",
        "file-read",
        "function openrowset() is not allowed: it reads files, the server's logs or other servers",
    ),
    (
        "tsql",
        "SELECT * FROM OPENROWSET(BULK 'C:/secrets.txt', SINGLE_CLOB) AS r",
        "parse-error",
        "the query does not parse: Expecting ). Line 1, Col: 46.",
    ),
    (
        "tsql",
        "SELECT * FROM OPENDATASOURCE('MSOLEDBSQL', 'Data Source=other').shop.dbo.orders",
        "file-read",
        "function opendatasource() is not allowed: it reads files, the server's logs or other"
        " servers",
    ),
    (
        "tsql",
        "SELECT * FROM OPENQUERY(linked, 'SELECT * FROM secrets')",
        "file-read",
        "function openquery() is not allowed: it reads files, the server's logs or other servers",
    ),
    (
        "tsql",
        "SELECT * FROM OPENXML(1, '/root', 1)",
        "function",
        "function openxml() is not allowed: it reads a document the session prepared",
    ),
    (
        "tsql",
        "SELECT * FROM fn_dblog(NULL, NULL)",
        "file-read",
        "function fn_dblog() is not allowed: it reads files, the server's logs or other servers",
    ),
    ("tsql", "EXEC xp_cmdshell 'dir'", "command", "EXECUTE is not allowed in a read-only query"),
    ("tsql", "EXEC sp_who", "command", "EXECUTE is not allowed in a read-only query"),
    (
        "tsql",
        "WAITFOR DELAY '00:00:05'",
        "parse-error",
        "the query does not parse: Invalid expression / Unexpected token. Line 1, Col: 24.",
    ),
    (
        "tsql",
        "BULK INSERT orders FROM 'C:/x.csv'",
        "parse-error",
        "the query does not parse: Invalid expression / Unexpected token. Line 1, Col: 11.",
    ),
    (
        "tsql",
        "SELECT * FROM linked.shop.dbo.orders",
        "unknown-table",
        "unsupported table reference linked.shop.dbo.orders",
    ),
    (
        "tsql",
        "SELECT * FROM master.dbo.sysdatabases",
        "schema",
        "master.dbo.sysdatabases: catalog-qualified names are not allowed",
    ),
    (
        "tsql",
        "SELECT * FROM msdb.dbo.backupset",
        "schema",
        "msdb.dbo.backupset: catalog-qualified names are not allowed",
    ),
    (
        "tsql",
        "SELECT * FROM sys.sql_logins",
        "system-catalog",
        "sys.sql_logins is in a system schema",
    ),
    (
        "tsql",
        "SELECT master.dbo.f(1)",
        "system-catalog",
        "master.… refers to a system schema",
    ),
    (
        "tsql",
        "SELECT sys.fn_varbintohexstr(0x01)",
        "system-catalog",
        "sys.… refers to a system schema",
    ),
    (
        "tsql",
        "SELECT @@VERSION",
        "function",
        "@@VERSION is not allowed: it is a variable: an @@ one reads the server's own state,"
        " and one query cannot declare an @ one",
    ),
    (
        "tsql",
        "SELECT id FROM orders WHERE id = @id",
        "function",
        "@id is not allowed: it is a variable: an @@ one reads the server's own state, and"
        " one query cannot declare an @ one",
    ),
    (
        "tsql",
        "SELECT SERVERPROPERTY('MachineName')",
        "function",
        "function serverproperty() is not allowed: it reads the database's own metadata",
    ),
    (
        "tsql",
        "SELECT HOST_NAME()",
        "function",
        "function host_name() is not allowed: it reads the database's own metadata",
    ),
    (
        "tsql",
        "SELECT DECRYPTBYKEY(status) FROM orders",
        "function",
        "function decryptbykey() is not allowed: it reads the database's keys",
    ),
    (
        "tsql",
        "SELECT * FROM orders WITH (UPDLOCK, HOLDLOCK)",
        "locking",
        "WITH (UPDLOCK, HOLDLOCK) is not allowed: it is a table hint: Lookout sets how a"
        " read locks (READ COMMITTED, with a lock timeout)",
    ),
    (
        "tsql",
        "SELECT * FROM orders AS o WITH (NOLOCK)",
        "locking",
        "WITH (NOLOCK) is not allowed: it is a table hint: Lookout sets how a read locks"
        " (READ COMMITTED, with a lock timeout)",
    ),
    (
        "tsql",
        "SELECT id FROM orders OPTION (QUERYTRACEON 8649)",
        "locking",
        "QUERYTRACEON 8649 is not allowed: it is a query hint or a FOR XML or FOR JSON option",
    ),
    (
        "tsql",
        "SELECT id FROM orders FOR XML AUTO",
        "locking",
        "AUTO is not allowed: it is a query hint or a FOR XML or FOR JSON option",
    ),
    (
        "tsql",
        "SELECT * INTO copied FROM orders",
        "select-into",
        "SELECT … INTO is not allowed in a read-only query",
    ),
]

ALLOWED = [
    ("trino", "SELECT status, count(*) FROM sales.orders GROUP BY status"),
    ("trino", "SELECT * FROM UNNEST(ARRAY[1, 2])"),
    ("redshift", "SELECT status, LISTAGG(id, ',') FROM orders GROUP BY status"),
    ("tsql", "SELECT TOP 5 * FROM dbo.orders ORDER BY id"),
    ("tsql", "SELECT SYSUTCDATETIME()"),
]


@pytest.mark.parametrize(("dialect", "sql", "rule", "reason"), REFUSED)
def test_each_engine_refuses_its_own_readers_and_side_effects(
    dialect: str, sql: str, rule: str, reason: str
) -> None:
    with pytest.raises(QueryRejected) as raised:
        guard(sql, dialect=dialect, allowed_tables=["orders", "customers"], schema=SCHEMA[dialect])
    assert (raised.value.rule, raised.value.reason) == (rule, reason)


@pytest.mark.parametrize(("dialect", "sql"), ALLOWED)
def test_plain_reads_pass_in_each_dialect(dialect: str, sql: str) -> None:
    checked = guard(sql, dialect=dialect, allowed_tables=["orders"], schema=SCHEMA[dialect])
    assert checked
