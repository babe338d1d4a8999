"""``schema`` finds a column by its exact name first: case folds only where it is unique."""

from __future__ import annotations

from collections.abc import Iterator

import psycopg
import pytest

from checks.report import CheckOutcome
from checks.settings.limits import Limits
from checks.settings.sources import SQLAlchemySource
from checks.sources import Source, SQLQuerySource
from tests.checks.declared.shop import one


@pytest.fixture
def mixed_case(empty_pg_url: str) -> Iterator[Source]:
    with psycopg.connect(empty_pg_url.replace("+psycopg", ""), autocommit=True) as conn:
        conn.execute('CREATE TABLE "Orders" ("Amount" numeric(10,2), amount text, "Status" text)')
        conn.execute("""INSERT INTO "Orders" VALUES (1.50, 'x', 'paid')""")
    config = SQLAlchemySource(type="sqlalchemy", url=empty_pg_url)
    with SQLQuerySource("shop", config, Limits()) as source:
        yield source


def schema(source: Source, columns: dict[str, str]) -> tuple[CheckOutcome, str | None]:
    result = one(source, {"schema": {"table": "Orders", "columns": columns}})
    return result.outcome, result.error or result.reason


def test_the_exact_name_wins_over_a_column_differing_in_case(mixed_case: Source) -> None:
    # before: columns were keyed by lower case, and "Amount" found the text column
    assert schema(mixed_case, {"Amount": "text"}) == (
        CheckOutcome.FAILED,
        "Amount is NUMERIC(10, 2), not text",
    )
    assert schema(mixed_case, {"Amount": "numeric(10,2)"}) == (CheckOutcome.PASSED, None)
    assert schema(mixed_case, {"amount": "text"}) == (CheckOutcome.PASSED, None)


def test_a_name_two_columns_share_but_for_case_is_an_error_naming_both(mixed_case: Source) -> None:
    assert schema(mixed_case, {"AMOUNT": "decimal"}) == (
        CheckOutcome.ERROR,
        "column 'AMOUNT' is ambiguous in Orders: 'Amount' and 'amount' differ only in case;"
        " write the exact name",
    )


def test_case_still_folds_where_one_column_has_the_name(mixed_case: Source) -> None:
    assert schema(mixed_case, {"status": "text"}) == (CheckOutcome.PASSED, None)
