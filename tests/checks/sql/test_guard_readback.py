"""What runs reads back as what was checked, at the cost of one extra parse, once per statement."""

import pytest

from checks.errors import QueryRejected
from checks.sql import guard as guard_module
from checks.sql.guard import guard, same_tree

TABLES = ["orders", "Orders"]


def parse(sql: str, dialect: str = "duckdb") -> object:
    tree, warnings = guard_module._parse_one(sql, dialect)
    assert warnings == []
    return tree


def test_same_tree_compares_types_and_every_argument_exactly() -> None:
    upper, lower = parse('SELECT 1 FROM "Orders"'), parse('SELECT 1 FROM "orders"')
    assert not same_tree(upper, lower)  # type: ignore[arg-type]
    assert same_tree(parse("SELECT a FROM t /* note */"), parse("SELECT a FROM t"))  # type: ignore[arg-type]
    assert not same_tree(parse("SELECT a FROM t"), parse("SELECT a FROM t LIMIT 1"))  # type: ignore[arg-type]
    assert not same_tree(parse("SELECT 1"), parse("SELECT '1'"))  # type: ignore[arg-type]


def test_a_statement_sqlglot_normalises_is_checked_again_and_accepted() -> None:
    sql = "SELECT IF(a > 0, 1, 2) AS sign FROM orders"
    checked = guard(sql, dialect="duckdb", allowed_tables=TABLES)
    assert checked == "SELECT CASE WHEN a > 0 THEN 1 ELSE 2 END AS sign FROM orders"
    tree = parse(sql)
    assert not same_tree(tree, parse(checked))  # type: ignore[arg-type]
    assert guard(checked, dialect="duckdb", allowed_tables=TABLES) == checked


def test_results_and_rejections_are_kept_per_process() -> None:
    guard_module._guard_once.cache_clear()
    sql = "SELECT count(*) AS n FROM orders -- comment"
    first = guard(sql, dialect="duckdb", allowed_tables=TABLES)
    assert guard(sql, dialect="duckdb", allowed_tables=reversed(TABLES)) == first
    info = guard_module._guard_once.cache_info()
    assert (info.hits, info.misses) == (1, 1)
    for _ in range(2):
        with pytest.raises(QueryRejected) as caught:
            guard("DELETE FROM orders", dialect="duckdb", allowed_tables=TABLES)
        assert (caught.value.rule, str(caught.value)) == (
            "write",
            "rejected (write): DELETE is not allowed in a read-only query",
        )
    # the table list is part of the key: another source's tables decide afresh
    with pytest.raises(QueryRejected, match="unknown-table"):
        guard(sql, dialect="duckdb", allowed_tables=["payments"])
