"""What the guard refuses in MySQL's and MariaDB's SQL (``checks.sql.engines.mysql``).

Each reason is asserted word for word.
"""

from __future__ import annotations

import pytest

from checks.errors import QueryRejected
from checks.sql.guard import guard

PARSE = "the query does not parse: Invalid expression / Unexpected token. Line 1, Col: "
REFUSED = [
    ("SELECT LOAD_FILE('/etc/passwd')", "file-read",
     "function load_file() is not allowed: it reads files or URLs"),
    ("SELECT SLEEP(1)", "function", "function sleep() is not allowed: it has side effects"),
    ("SELECT BENCHMARK(1000000, md5('a'))", "function",
     "function benchmark() is not allowed: it has side effects"),
    ("SELECT GET_LOCK('a', 1)", "function",
     "function get_lock() is not allowed: it has side effects"),
    ("SELECT RELEASE_LOCK('a')", "function",
     "function release_lock() is not allowed: it has side effects"),
    ("SELECT IS_FREE_LOCK('a')", "function",
     "function is_free_lock() is not allowed: it has side effects"),
    ("SELECT IS_USED_LOCK('a')", "function",
     "function is_used_lock() is not allowed: it has side effects"),
    ("SELECT sys_exec('id')", "function",
     "function sys_exec() is not allowed: it has side effects"),
    ("SELECT sys_eval('id')", "function",
     "function sys_eval() is not allowed: it has side effects"),
    ("SELECT lib_mysqludf_sys_info()", "function",
     "function lib_mysqludf_sys_info() is not allowed: it runs a user-defined function installed"
     " on the server"),
    ("SELECT MASTER_POS_WAIT('log.000001', 4)", "function",
     "function master_pos_wait() is not allowed: it has side effects"),
    ("SELECT SOURCE_POS_WAIT('log.000001', 4)", "function",
     "function source_pos_wait() is not allowed: it waits on replication (the session blocks"
     " until a replica catches up)"),
    ("SELECT MASTER_GTID_WAIT('0-1-100')", "function",
     "function master_gtid_wait() is not allowed: it waits on replication (the session blocks"
     " until a replica catches up)"),
    ("SELECT WAIT_FOR_EXECUTED_GTID_SET('x')", "function",
     "function wait_for_executed_gtid_set() is not allowed: it waits on replication (the session"
     " blocks until a replica catches up)"),
    ("SELECT WSREP_SYNC_WAIT_UPTO_GTID('0-1-1')", "function",
     "function wsrep_sync_wait_upto_gtid() is not allowed: it waits on replication (the session"
     " blocks until a replica catches up)"),
    ("SELECT LAST_INSERT_ID(5)", "function",
     "function last_insert_id() is not allowed: it reads or sets the session's state"),
    ("SELECT FOUND_ROWS()", "function",
     "function found_rows() is not allowed: it reads or sets the session's state"),
    ("SELECT UUID_SHORT()", "function",
     "function uuid_short() is not allowed: it reads the database's own metadata"),
    ("SELECT UUID()", "function",
     "function uuid() is not allowed: it reads the database's own metadata"),
    ("SELECT CONNECTION_ID()", "function",
     "function connection_id() is not allowed: it reads the database's own metadata"),
    ("SELECT DES_ENCRYPT('a')", "function",
     "function des_encrypt() is not allowed: it uses the server's key file"),
    ("SELECT VERSION()", "function",
     "VERSION() is not allowed: it reads the database's own metadata"),
    ("SELECT @n := count(*) FROM orders", "function",
     "@n is not allowed: it reads or sets a user variable (session state that outlives the query;"
     " := assigns one)"),
    ("SELECT order_id FROM orders WHERE order_id > @last", "function",
     "@last is not allowed: it reads or sets a user variable (session state that outlives the"
     " query; := assigns one)"),
    ("SELECT @@secure_file_priv", "function", "session variable @@secure_file_priv is not allowed"),
    ("SELECT * FROM orders INTO OUTFILE '/tmp/x'", "parse-error", PARSE + "25."),
    ("SELECT * FROM orders INTO DUMPFILE '/tmp/x'", "parse-error", PARSE + "25."),
    ("SELECT * INTO OUTFILE '/tmp/x' FROM orders", "parse-error", PARSE + "30."),
    ("SELECT order_id INTO @x FROM orders", "select-into",
     "SELECT … INTO is not allowed in a read-only query"),
    ("SELECT * FROM orders LOCK IN SHARE MODE", "locking",
     "FOR SHARE is not allowed in a read-only query"),
    ("SELECT * FROM mysql.user", "system-catalog", "mysql.user is in a system schema"),
    ("SELECT * FROM performance_schema.threads", "system-catalog",
     "performance_schema.threads is in a system schema"),
    ("SELECT * FROM sys.processlist", "system-catalog", "sys.processlist is in a system schema"),
    ("SELECT sys.format_bytes(1)", "system-catalog", "sys.… refers to a system schema"),
]  # fmt: skip


@pytest.mark.parametrize(("sql", "rule", "reason"), REFUSED, ids=[c[0] for c in REFUSED])
def test_mysql_refuses(sql: str, rule: str, reason: str) -> None:
    with pytest.raises(QueryRejected) as rejected:
        guard(sql, dialect="mysql", allowed_tables=["orders"], schema="shop")
    assert (rejected.value.rule, rejected.value.reason) == (rule, reason)


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT `status`, COUNT(*) FROM orders GROUP BY `status`",
        "SELECT TIMEDIFF(MAX(created_at), MIN(created_at)) FROM orders",
        "SELECT CHARSET(name), COLLATION(name) FROM orders",
        "SELECT NOW(), UTC_TIMESTAMP(), RAND() FROM orders",
    ],
)
def test_mysql_allows_plain_reads(sql: str) -> None:
    assert guard(sql, dialect="mysql", allowed_tables=["orders"], schema="shop") == sql


def test_user_variables_are_refused_only_in_mysql() -> None:
    # DuckDB reads ``$1``-style parameters elsewhere; the refusal is MySQL's own.
    assert denied_nodes_of("duckdb") == ()
    assert denied_nodes_of("mysql")[0][1] == "function"


def denied_nodes_of(dialect: str) -> tuple[object, ...]:
    from checks.sql.engines import denied_nodes

    return tuple(denied_nodes(dialect))
