"""Which results PostgreSQL may fetch whole (a plain statement) rather than by cursor."""

from __future__ import annotations

import pytest

from checks.sources.small_result import is_small


@pytest.mark.parametrize(
    ("sql", "small"),
    [
        ("SELECT count(*) FROM orders", True),
        ("SELECT count(*) AS a, max(x) AS b FROM orders WHERE y > 0", True),
        ("SELECT * FROM orders LIMIT 50", True),
        ("SELECT * FROM orders LIMIT 10000", True),
        ("SELECT * FROM orders LIMIT 10001", False),
        ("SELECT * FROM orders", False),
        ("SELECT count(*) FROM orders GROUP BY status", False),
        ("SELECT count(*) OVER () FROM orders", False),
        ("SELECT (SELECT count(*) FROM customers) AS n, id FROM orders", False),
        ("SELECT count(*) FROM orders UNION ALL SELECT 1", False),
        ("not sql at all (", False),
    ],
)
def test_one_aggregate_row_or_a_limit_is_small(sql: str, small: bool) -> None:
    assert is_small(sql, "postgres") is small
