"""``compare`` of the shop's tables on every engine of the suite with the same tables in DuckDB.

The same rows written by each engine's own types (DECIMAL or REAL amounts, zoned timestamps
or text, DOUBLE prices, NULLs) reconcile to no difference in every mode; one row filtered
out of the other side is found, by its key.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from checks.declared.check import run_checks
from checks.report import CheckOutcome, CheckResult
from checks.settings.limits import Limits
from checks.sources import DuckDBQuerySource, Source
from tests.checks.declared.shop import automation


@pytest.fixture(scope="module")
def duck(shop_duckdb_path: Path) -> Iterator[Source]:
    with DuckDBQuerySource("duck", shop_duckdb_path, Limits()) as source:
        yield source


def compare(shop: Source, duck: Source, block: dict[str, Any]) -> CheckResult:
    named = {shop.name: shop, duck.name: duck}
    results, _ = run_checks(
        automation({"name": "c", "compare": block}),
        shop,
        Limits(),
        deadline=time.monotonic() + 120,
        sources=named.__getitem__,
        source_names=list(named),
    )
    return results[0]


@pytest.mark.parametrize(
    ("table", "key"),
    [("orders", ["order_id"]), ("loads", ["id"]), ("customers", ["id"]), ("ledger", ["id"])],
)
def test_the_same_rows_reconcile_on_every_engine(
    shop: Source, duck: Source, table: str, key: list[str]
) -> None:
    block = {"table": table, "with": {"source": "duck"}, "key": key}
    rows = compare(shop, duck, block)
    assert rows.error is None
    if table == "ledger" and shop.dialect == "sqlite":
        # SQLite keeps DECIMAL(38,10) as doubles (about 16 digits): the two 20-digit amounts
        # differ at scale 10, as they should
        assert (rows.metrics["different"], rows.metrics["different_keys"]) == (2, "1, 3")
        return
    assert (rows.outcome, rows.metrics["differences"]) == (CheckOutcome.PASSED, 0), rows.metrics
    aggregates = compare(shop, duck, {**block, "mode": "aggregates", "key": []})
    assert (aggregates.outcome, aggregates.metrics.get("differing")) == (CheckOutcome.PASSED, None)
    counts = compare(shop, duck, {**block, "mode": "counts"})
    assert counts.value == 0


def test_a_row_left_out_of_the_other_side_is_extra(shop: Source, duck: Source) -> None:
    block = {
        "table": "orders",
        "with": {"source": "duck", "filter": "order_id <> 3"},
        "key": ["order_id"],
    }
    result = compare(shop, duck, block)
    assert (result.metrics["extra"], result.metrics["extra_keys"]) == (1, "3")
    assert (result.metrics["missing"], result.metrics["different"]) == (0, 0)


def test_a_null_key_is_compared_like_any_key(shop: Source, duck: Source) -> None:
    """customers holds a row whose id is NULL: left out of the other side, it is extra."""
    block = {
        "table": "customers",
        "with": {"source": "duck", "filter": "id IS NOT NULL"},
        "key": ["id"],
    }
    result = compare(shop, duck, block)
    assert (result.metrics["extra"], result.metrics["extra_keys"]) == (1, "NULL")
    assert (result.metrics["missing"], result.metrics["different"]) == (0, 0)
