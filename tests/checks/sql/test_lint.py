"""The lint: SQL that runs but answers another question, warned with its line and column."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from checks.sources.base import Column, DataSet
from checks.sql import lint as lint_module
from checks.sql.lint import LintWarning, lint, lint_condition

CATALOG = [
    DataSet(
        "orders",
        (
            Column("id", "INTEGER", nullable=False),
            Column("customer_id", "INTEGER", nullable=True),
            Column("status", "VARCHAR", nullable=True),
            Column("amount", "NUMERIC(10, 2)", nullable=True),
        ),
        5,
    ),
    DataSet("customers", (Column("id", "INTEGER", nullable=True),), 3),
    DataSet("accounts", (Column("id", "INTEGER", nullable=False),), 3),
]


@dataclass(frozen=True)
class Case:
    name: str
    sql: str
    dialects: tuple[str, ...]
    found: tuple[tuple[str, int | None, int | None], ...]  # rule, line, column
    timezone: str = "UTC"


CASES = [
    Case(
        "not in a nullable subquery",
        "SELECT count(*) FROM orders\nWHERE customer_id NOT IN (SELECT id FROM customers)",
        ("duckdb", "postgres"),
        (("not-in-subquery", 2, 7),),
    ),
    Case(
        "not in a NOT NULL column",
        "SELECT count(*) FROM orders WHERE customer_id NOT IN (SELECT id FROM accounts)",
        ("duckdb", "postgres"),
        (),
    ),
    Case(
        "not in a subquery that filters its NULLs",
        "SELECT count(*) FROM orders WHERE customer_id NOT IN "
        "(SELECT id FROM customers WHERE id IS NOT NULL)",
        ("duckdb", "postgres"),
        (),
    ),
    Case(
        "not exists is the fix",
        "SELECT count(*) FROM orders o WHERE NOT EXISTS "
        "(SELECT 1 FROM customers c WHERE c.id = o.customer_id)",
        ("duckdb", "postgres"),
        (),
    ),
    Case(
        "not in a list skips NULL statuses",
        "SELECT count(*) FROM orders o WHERE o.status NOT IN ('paid', 'refunded')",
        ("duckdb", "postgres"),
        (("not-in-null", 1, 37),),
    ),
    Case(
        "the NULL case said",
        "SELECT count(*) FROM orders WHERE status IS NULL OR status NOT IN ('paid')",
        ("duckdb", "postgres"),
        (),
    ),
    Case(
        "the NULLs excluded on purpose",
        "SELECT count(*) FROM orders WHERE status IS NOT NULL AND status NOT IN ('paid')",
        ("duckdb", "postgres"),
        (),
    ),
    Case(
        "a NOT NULL column in a list",
        "SELECT count(*) FROM orders WHERE id NOT IN (1, 2)",
        ("duckdb", "postgres"),
        (),
    ),
    Case(
        "a NULL in the list",
        "SELECT count(*) FROM orders WHERE id NOT IN (1, NULL)",
        ("duckdb", "postgres"),
        (("not-in-null", 1, 35),),
    ),
    Case(
        "a ratio of counts on PostgreSQL",
        "SELECT 100 * count(*) FILTER (WHERE status IS NULL) / count(*) FROM orders",
        ("postgres",),
        (("integer-division", 1, 37),),
    ),
    Case(
        "the same ratio on DuckDB divides as floats",
        "SELECT 100 * count(*) FILTER (WHERE status IS NULL) / count(*) FROM orders",
        ("duckdb",),
        (),
    ),
    Case(
        "a decimal ratio",
        "SELECT 100.0 * count(*) FILTER (WHERE status IS NULL) / count(*) FROM orders",
        ("postgres",),
        (),
    ),
    Case(
        "integer columns divided",
        "SELECT sum(customer_id) / sum(id) FROM orders",
        ("postgres",),
        (("integer-division", 1, 12),),
    ),
    Case(
        "a unit conversion by a constant",
        "SELECT count(*) FROM orders WHERE id / 100 > 1",
        ("postgres",),
        (),
    ),
    Case(
        "the clock in another zone",
        "SELECT count(*) FROM orders WHERE current_date > DATE '2024-01-01'",
        ("duckdb", "postgres"),
        (("session-time-zone", None, None),),
        "America/New_York",
    ),
    Case(
        "the clock in UTC",
        "SELECT count(*) FROM orders WHERE current_date > DATE '2024-01-01'",
        ("duckdb", "postgres"),
        (),
        "Etc/UTC",
    ),
    Case(
        "not SQL",
        "SELEC nothing",
        ("duckdb", "postgres"),
        (),
    ),
]


@pytest.mark.parametrize(
    ("case", "dialect"),
    [(c, d) for c in CASES for d in c.dialects],
    ids=lambda v: v.name if isinstance(v, Case) else v,
)
def test_lint(case: Case, dialect: str) -> None:
    found = lint(case.sql, dialect=dialect, catalog=CATALOG, timezone=case.timezone)
    assert [(w.rule, w.line, w.column) for w in found] == list(case.found)


def test_messages_say_why_and_what_to_write() -> None:
    sub, in_list = lint(
        "SELECT count(*) FROM orders WHERE customer_id NOT IN (SELECT id FROM customers) "
        "AND status NOT IN ('paid')",
        dialect="postgres",
        catalog=CATALOG,
    )
    assert sub.message == (
        "customer_id NOT IN (SELECT id FROM customers ...): id can be NULL, and while the "
        "subquery returns a NULL, NOT IN is true for no row and nothing is found; use NOT "
        "EXISTS (SELECT 1 FROM customers WHERE id = customer_id)"
    )
    assert in_list.message == (
        "status NOT IN (...) is never true where status is NULL, so those rows are skipped; "
        "say what a NULL means: (status IS NULL OR status NOT IN (...)), or status IS NOT NULL "
        "AND ..."
    )
    (division,) = lint("SELECT count(*) / count(*) FROM orders", dialect="postgres")
    assert division.message.startswith(
        "COUNT(*) / COUNT(*) divides an integer by an integer: PostgreSQL drops the fraction"
    )
    (clock,) = lint("SELECT now()", dialect="postgres", timezone="Europe/Paris")
    assert clock.message == (  # as written: PostgreSQL's now(), never sqlglot's CURRENT_TIMESTAMP
        "now() is read in UTC (sessions run in UTC), not in Europe/Paris, this "
        "automation's time zone; for its local time write (now() AT TIME ZONE 'Europe/Paris'), "
        "and ::date for its local date"
    )


def test_the_clock_is_named_as_the_query_wrote_it() -> None:
    found = lint(
        "SELECT NOW() - created_at, current_date, Today() FROM orders",
        dialect="duckdb",
        timezone="Asia/Tokyo",
    )
    shown = sorted(w.message.split(" is read")[0] for w in found)
    assert shown == ["CURRENT_DATE", "NOW()", "Today()"]
    (cond,) = lint_condition(
        "created_at > now() - INTERVAL '1 day'",
        table="orders",
        dialect="postgres",
        catalog=CATALOG,
        timezone="Asia/Tokyo",
    )
    assert cond.message.startswith("now() is read in UTC")


def test_without_a_catalog_every_column_can_be_null() -> None:
    found = lint("SELECT count(*) FROM orders WHERE id NOT IN (1, 2)", dialect="duckdb")
    assert [w.rule for w in found] == ["not-in-null"]


def test_a_filter_is_linted_with_positions_inside_it() -> None:
    (found,) = lint_condition(
        "amount > 0\n  AND status NOT IN ('x')", table="orders", dialect="duckdb", catalog=CATALOG
    )
    assert (found.rule, found.line, found.column) == ("not-in-null", 2, 7)


def uncached(sql: str, **kw: Any) -> list[LintWarning]:
    """``lint`` computed afresh, nothing kept from before."""
    lint_module._lint.cache_clear()
    return lint(sql, **kw)


def test_kept_warnings_are_the_ones_computed_afresh() -> None:
    for case in CASES:
        for dialect in case.dialects:
            options: dict[str, Any] = {
                "dialect": dialect,
                "catalog": CATALOG,
                "timezone": case.timezone,
            }
            expected = uncached(case.sql, **options)
            assert lint(case.sql, **options) == expected
            again = lint(case.sql, **options)
            assert again == expected
            again.clear()  # each caller gets a list of its own
            assert lint(case.sql, **options) == expected
            info = lint_module._lint.cache_info()
            assert (info.misses, info.hits) == (1, 3)  # computed once, then kept


def test_a_changed_catalog_time_zone_or_dialect_is_linted_again() -> None:
    sql = "SELECT count(*) FROM orders WHERE customer_id NOT IN (SELECT id FROM customers)"
    assert [w.rule for w in lint(sql, dialect="duckdb", catalog=CATALOG)] == ["not-in-subquery"]
    not_null = [
        CATALOG[0],
        DataSet("customers", (Column("id", "INTEGER", nullable=False),), 3),
        CATALOG[2],
    ]
    assert lint(sql, dialect="duckdb", catalog=not_null) == []
    grown = [CATALOG[0], DataSet("customers", CATALOG[1].columns, 3_000), CATALOG[2]]
    assert [w.rule for w in lint(sql, dialect="duckdb", catalog=grown)] == ["not-in-subquery"]
    clock = "SELECT count(*) FROM orders WHERE day = current_date"
    assert lint(clock, dialect="duckdb", catalog=CATALOG, timezone="UTC") == []
    paris = lint(clock, dialect="duckdb", catalog=CATALOG, timezone="Europe/Paris")
    assert [w.rule for w in paris] == ["session-time-zone"]
    division = "SELECT count(*) / count(id) FROM orders"
    assert lint(division, dialect="duckdb", catalog=CATALOG) == []
    assert [w.rule for w in lint(division, dialect="postgres", catalog=CATALOG)] == [
        "integer-division"
    ]
    condition = "status NOT IN ('x')"
    options: dict[str, Any] = {"table": "orders", "dialect": "duckdb"}
    assert [w.rule for w in lint_condition(condition, catalog=CATALOG, **options)] == [
        "not-in-null"
    ]
    status = DataSet("orders", (Column("status", "VARCHAR", nullable=False),), 5)
    assert lint_condition(condition, catalog=[status], **options) == []
