"""The guard's refusals of Spark's and Databricks' own SQL, with their exact reasons."""

from __future__ import annotations

import pytest

from checks.errors import QueryRejected
from checks.sql.engines import denied_functions, file_formats
from checks.sql.facts import SourceFacts
from checks.sql.guard import guard

DIALECTS = ("spark", "databricks")

REFUSED = [
    (
        "SELECT reflect('java.lang.System', 'getenv', 'HOME')",
        "function",
        "function reflect() is not allowed: it calls Java methods",
    ),
    (
        "SELECT java_method('java.util.UUID', 'randomUUID')",
        "function",
        "function java_method() is not allowed: it calls Java methods",
    ),
    (
        "SELECT try_reflect('java.lang.System', 'getenv', 'HOME')",
        "function",
        "function try_reflect() is not allowed: it calls Java methods",
    ),
    (
        "SELECT input_file_name() FROM orders",
        "function",
        "function input_file_name() is not allowed: it tells where a table's files are stored",
    ),
    (
        "SELECT * FROM read_files('s3://bucket/x', format => 'csv')",
        "file-read",
        "function read_files() is not allowed: it reads files or URLs",
    ),
    (
        "SELECT from_protobuf(b, 'Msg', '/tmp/desc.pb') FROM orders",
        "file-read",
        "function from_protobuf() is not allowed: it reads files or URLs",
    ),
    (
        "SELECT * FROM parquet.`/data/x.parquet`",
        "file-read",
        "parquet.`/data/x.parquet` reads a parquet file directly; only data sets can be read",
    ),
    (
        "SELECT * FROM csv.`s3://bucket/x.csv`",
        "file-read",
        "csv.`s3://bucket/x.csv` reads a csv file directly; only data sets can be read",
    ),
    (
        "SELECT * FROM json.`/x`",
        "file-read",
        "json.`/x` reads a json file directly; only data sets can be read",
    ),
    (
        "SELECT * FROM text.`/etc/passwd`",
        "file-read",
        "text.`/etc/passwd` reads a text file directly; only data sets can be read",
    ),
    (
        "SELECT * FROM binaryFile.`/etc`",
        "file-read",
        "binaryFile.`/etc` reads a binaryFile file directly; only data sets can be read",
    ),
    (
        "SELECT * FROM `/tmp/x.parquet`",
        "file-read",
        "`/tmp/x.parquet` looks like a file or URL; only data sets can be read",
    ),
    (
        "SELECT ai_query('endpoint', name) FROM orders",
        "function",
        "function ai_query() is not allowed: it calls a model or a service outside the data",
    ),
    (
        "SELECT ai_gen('write a poem')",
        "function",
        "function ai_gen() is not allowed: it calls a model or a service outside the data",
    ),
    (
        "SELECT http_request(conn => 'c', method => 'GET', path => '/')",
        "file-read",
        "function http_request() is not allowed: it reads files or URLs",
    ),
    (
        "SELECT secret('scope', 'key')",
        "function",
        "function secret() is not allowed: it reads settings or the environment",
    ),
    (
        "SELECT try_secret('scope', 'key')",
        "function",
        "function try_secret() is not allowed: it reads secrets",
    ),
    (
        "SELECT remote_query('pg', database => 'd', query => 'SELECT 1')",
        "function",
        "function remote_query() is not allowed: it runs SQL or names objects given as text",
    ),
    (
        "SELECT IDENTIFIER('name') FROM orders",
        "function",
        "function identifier() is not allowed: it runs SQL or names objects given as text",
    ),
    (
        "SELECT current_metastore()",
        "function",
        "function current_metastore() is not allowed: it reads the database's own metadata",
    ),
    (
        "SELECT current_user()",
        "function",
        "CURRENT_USER() is not allowed: it reads the database's own metadata",
    ),
    (
        "SELECT * FROM system.access.audit",
        "schema",
        "system.access.audit: catalog-qualified names are not allowed",
    ),
    ("SELECT * FROM system.audit", "system-catalog", "system.audit is in a system schema"),
    (
        "SELECT system.ai.python_exec('import os')",
        "system-catalog",
        "system.… refers to a system schema",
    ),
    (
        "SELECT '${env:AWS_SECRET_ACCESS_KEY}' AS s",
        "function",
        "${…} is not allowed: Spark replaces it with a setting or an environment variable"
        " before it reads the query",
    ),
    ("SET spark.sql.ansi.enabled = false", "command", "SET is not allowed in a read-only query"),
    ("ADD JAR /tmp/evil.jar", "command", "ADD JAR is not allowed in a read-only query"),
    ("CACHE TABLE orders", "ddl", "CACHE is not allowed in a read-only query"),
    ("UNCACHE TABLE orders", "ddl", "UNCACHE is not allowed in a read-only query"),
    ("REFRESH TABLE orders", "ddl", "REFRESH is not allowed in a read-only query"),
    ("EXECUTE IMMEDIATE 'SELECT 1'", "command", "EXECUTE is not allowed in a read-only query"),
    ("DECLARE VARIABLE x INT", "command", "DECLARE is not allowed in a read-only query"),
    ("SET VAR x = 1", "command", "SET is not allowed in a read-only query"),
    (
        "INSERT INTO orders SELECT * FROM orders",
        "write",
        "INSERT is not allowed in a read-only query",
    ),
]


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize(("sql", "rule", "reason"), REFUSED, ids=[r[0][:40] for r in REFUSED])
def test_refused(dialect: str, sql: str, rule: str, reason: str) -> None:
    with pytest.raises(QueryRejected) as refused:
        guard(sql, dialect=dialect, allowed_tables=["orders"], schema="default")
    assert (refused.value.rule, refused.value.reason) == (rule, reason)


@pytest.mark.parametrize("dialect", DIALECTS)
def test_plain_analytics_pass_as_regenerated(dialect: str) -> None:
    sql = (
        "SELECT status, count(*) AS n, avg(amount) FROM default.orders"
        " WHERE created_at >= TIMESTAMP '2024-01-01 00:00:00' GROUP BY status"
        " ORDER BY n DESC NULLS LAST LIMIT 5"
    )
    assert guard(sql, dialect=dialect, allowed_tables=["orders"], schema="default") == (
        "SELECT status, COUNT(*) AS n, AVG(amount) FROM default.orders"
        " WHERE created_at >= CAST('2024-01-01 00:00:00' AS TIMESTAMP) GROUP BY status"
        " ORDER BY n DESC LIMIT 5"  # NULLS LAST is Spark's own order after DESC
    )
    # Another schema is refused as on every engine.
    with pytest.raises(QueryRejected, match="schema other is not this source's schema"):
        guard("SELECT * FROM other.orders", dialect=dialect, allowed_tables=["orders"])


def test_a_function_spark_does_not_list_as_built_in_is_refused() -> None:
    # A catalog UDF (Hive, SQL or Python) is not in SHOW SYSTEM FUNCTIONS: refused.
    facts = SourceFacts(frozenset({"sentences"}), frozenset(), frozenset({"default"}))
    assert guard("SELECT sentences(name) FROM orders", dialect="spark", allowed_tables=["orders"],
                 schema="default", facts=facts) == "SELECT SENTENCES(name) FROM orders"  # fmt: skip
    with pytest.raises(QueryRejected) as refused:
        guard("SELECT my_udf(name) FROM orders", dialect="spark", allowed_tables=["orders"],
              schema="default", facts=facts)  # fmt: skip
    assert refused.value.reason == (
        "function my_udf() is not allowed: it is neither a built-in this database marks as free"
        " of side effects nor a function of schema default"
    )


def test_other_dialects_do_not_take_spark_refusals() -> None:
    assert denied_functions("duckdb") == () and file_formats("postgres") == frozenset()
    assert "parquet" in file_formats("spark") and file_formats("databricks") == file_formats(
        "spark"
    )
