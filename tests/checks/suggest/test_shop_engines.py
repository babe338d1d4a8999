"""The shop's orders profiled on every engine of the shared suite, whole and sampled as each can.

Each engine reads the same rows, so the counts are the same everywhere; a
sample (forced on 5 rows) runs through the guard and the engine itself, with
the clause (or the first rows) ``checks.suggest.sampling`` gives its dialect.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from decimal import Decimal

import pytest

from checks.sources import Source
from checks.suggest.profile import profile_table
from tests.checks.declared.shop import SHOP_ENGINES, open_shop

NOW = dt.datetime(2026, 12, 7, tzinfo=dt.UTC)
SAMPLED = {
    "duckdb": "a 40 % BERNOULLI sample",
    "postgres": "a 40 % BERNOULLI sample",
    "snowflake": "a 40 % BERNOULLI sample",
    "spark": "a 40 % sample",
    "sqlite": "the first 2 rows the engine returned",
    "clickhouse": "the first 2 rows the engine returned",
    "mysql": "the first 2 rows the engine returned",
}


@pytest.fixture(params=SHOP_ENGINES)
def shop(request: pytest.FixtureRequest) -> Iterator[Source]:
    """The shop tables on each engine in turn."""
    with open_shop(request.param, request) as source:
        yield source


def _plain(value: object) -> object:
    if isinstance(value, Decimal | float):
        return float(value)
    if isinstance(value, dt.datetime):
        return value.replace(tzinfo=None)
    return value


def test_orders_profiled_alike_on_every_engine(shop: Source) -> None:
    (orders,) = [d for d in shop.catalog() if d.name == "orders"]
    found = profile_table(shop, orders, budget_s=60, now=NOW)
    assert (found.rows, found.read, found.skipped) == (5, 5, [])
    assert [
        (c.name, c.non_null, c.distinct, _plain(c.low), _plain(c.high)) for c in found.columns
    ] == [
        ("order_id", 5, 5, 1, 5),
        ("amount", 5, 5, -1.0, 99.99),
        ("status", 4, 3, None, None),
        ("customer_id", 4, 4, 1, 9),
        ("name", 5, 4, None, None),
        ("created_at", 4, 4, dt.datetime(2024, 1, 1, 10), dt.datetime(2024, 1, 4, 10)),
        ("price", 5, 2, 0.1, 0.2),
    ]
    assert [c.name for c in found.keys] == ["order_id"]
    assert found.daily == {
        "created_at": {"2024-01-01": 1, "2024-01-02": 1, "2024-01-03": 1, "2024-01-04": 1}
    }


def test_a_sample_runs_on_every_engine_as_its_dialect_samples(shop: Source) -> None:
    (orders,) = [d for d in shop.catalog() if d.name == "orders"]
    found = profile_table(shop, orders, budget_s=60, now=NOW, sample_above=2)
    assert found.rows == 5
    assert found.sample.how == SAMPLED[shop.dialect]
    assert 0 <= found.read <= 5
    if "first" in found.sample.how:
        assert found.read == 2
