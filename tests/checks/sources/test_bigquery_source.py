"""The BigQuery source, through the real client and dialect, on a fake of BigQuery's wire.

BigQuery cannot run here. The fake (``tests.engine_fixtures.bigquery_wire``) answers the
REST calls and records each job's configuration: these tests prove what Lookout sends (a
dry run first, the cap, the labels, the timeout, GoogleSQL, UTC), that a query over the
cap never runs, and the BigQuery SQL the typed kinds compile to.
"""

from __future__ import annotations

import concurrent.futures
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from checks.errors import QueryFailed, QueryRejected, SourceError
from checks.report import CheckOutcome
from checks.settings.limits import Limits
from checks.settings.sources import SQLAlchemySource
from checks.sources import SQLQuerySource
from checks.sources.recipes.bigquery import BigQueryRecipe, in_bytes
from tests.checks.declared.shop import one
from tests.engine_fixtures.bigquery import ORDERS
from tests.engine_fixtures.bigquery_wire import Answer, FakeBigQuery

pytestmark = pytest.mark.slow  # importing google-cloud-bigquery takes ~5 s here

COUNT_ORDERS = "SELECT count(*) AS `count_1` \nFROM `orders`"
"""The catalog's row count of ``orders``, as sqlalchemy-bigquery writes it."""

Fake = tuple[FakeBigQuery, str]


def source(url: str, limits: Limits | None = None, **keys: Any) -> SQLQuerySource:
    config = SQLAlchemySource.model_validate({"type": "sqlalchemy", "url": url, **keys})
    return SQLQuerySource("warehouse", config, limits or Limits())


def without_ids(job: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in job.items() if k != "jobReference"}


def test_a_query_is_a_dry_run_first_then_runs_capped_labelled_and_in_utc(bigquery: Fake) -> None:
    state, url = bigquery
    state.answers[COUNT_ORDERS] = Answer([("count_1", "INTEGER")], [(5,)])
    state.answers["SELECT COUNT(*) AS n FROM orders"] = Answer(
        [("n", "INTEGER")], [(5,)], bytes_processed=1_234
    )
    with source(url, Limits(query_timeout_s=20), max_bytes_billed="2 GB") as warehouse:
        result = warehouse.query("SELECT COUNT(*) AS n FROM orders")
    assert (result.columns, result.rows, result.bytes_processed) == (["n"], [(5,)], 1_234)
    query = {
        "query": "SELECT COUNT(*) AS n FROM orders",
        "maximumBytesBilled": "2000000000",
        "useLegacySql": False,
        "defaultDataset": {"projectId": "shop-project", "datasetId": "shop"},
        "connectionProperties": [{"key": "time_zone", "value": "UTC"}],
    }
    labels = {"tool": "lookout"}
    assert [without_ids(job) for job in state.jobs] == [
        {
            "configuration": {
                "query": {**query, "useQueryCache": False},
                "dryRun": True,
                "labels": labels,
            }
        },
        {
            "configuration": {
                "query": query,
                "dryRun": False,
                "labels": labels,
                "jobTimeoutMs": "20000",
            }
        },
    ]
    assert result.query_id == state.jobs[1]["jobReference"]["jobId"]


def test_a_query_over_the_cap_is_refused_with_the_estimate_and_never_runs(bigquery: Fake) -> None:
    state, url = bigquery
    state.answers[COUNT_ORDERS] = Answer([("count_1", "INTEGER")], [(5,)])
    state.answers["SELECT * FROM orders"] = Answer(
        [("order_id", "INTEGER")], [(1,)], bytes_processed=12_300_000_000
    )
    with source(url, max_bytes_billed="10 GB") as warehouse, pytest.raises(QueryFailed) as refused:
        warehouse.query("SELECT * FROM orders")
    assert str(refused.value) == (
        "the query would scan 12.3 GB, over this source's cap of 10 GB (max_bytes_billed);"
        " it was not run"
    )
    assert [job["configuration"]["dryRun"] for job in state.jobs] == [True]


def test_only_the_sources_dataset_may_be_named(bigquery: Fake) -> None:
    state, url = bigquery
    state.answers[COUNT_ORDERS] = Answer([("count_1", "INTEGER")], [(5,)])
    state.answers["SELECT COUNT(*) FROM shop.orders"] = Answer([("f0_", "INTEGER")], [(5,)])
    with source(url) as warehouse:
        assert warehouse.schema == "shop"
        assert warehouse.query("SELECT COUNT(*) FROM shop.orders").rows == [(5,)]
        with pytest.raises(QueryRejected) as refused:
            warehouse.query("SELECT COUNT(*) FROM public.orders")
    assert refused.value.reason == "public.orders: schema public is not this source's schema"
    assert len(state.jobs) == 2  # the refused query sent nothing


def test_without_a_cap_a_source_is_capped_at_10_gb_and_its_catalog_scans_nothing(
    bigquery: Fake,
) -> None:
    state, url = bigquery
    state.answers["SELECT 1 AS x"] = Answer([("x", "INTEGER")], [(1,)])
    with source(url) as warehouse:
        # Listing the tables never counts them (a full scan, billed): no row count.
        assert [(d.name, d.row_count) for d in warehouse.catalog()] == [("orders", None)]
        assert state.jobs == []
        assert [c.type for c in warehouse.table_columns("orders")] == [
            "INTEGER",
            "NUMERIC",
            "VARCHAR",  # SQLAlchemy's name of STRING
            "TIMESTAMP",
        ]
        warehouse.query("SELECT 1 AS x")
    caps = [job["configuration"]["query"]["maximumBytesBilled"] for job in state.jobs]
    assert caps == ["10000000000", "10000000000"]  # the dry run and the query
    assert [q["labels"] for q in state.queries] == [{"tool": "lookout"}] * len(state.queries)


def test_a_typed_check_runs_through_the_dry_run_on_bigquery_sql(bigquery: Fake) -> None:
    state, url = bigquery
    state.answers[COUNT_ORDERS] = Answer([("count_1", "INTEGER")], [(4,)])
    counts = (
        "SELECT COUNT(*) AS rows_in_scope, COUNT(CASE WHEN `t`.`status` IS NULL THEN 1 END)"
        " AS missing FROM `orders` AS t"
    )
    state.answers[counts] = Answer([("rows_in_scope", "INTEGER"), ("missing", "INTEGER")], [(4, 1)])
    state.answers[
        # BigQuery sorts NULLs first: the sample asks for them last, as on every engine
        "SELECT * FROM `orders` AS t WHERE (`t`.`status` IS NULL) ORDER BY `t`.`order_id`"
        " NULLS LAST, `t`.`amount` NULLS LAST, `t`.`status` NULLS LAST LIMIT 50"
    ] = Answer(ORDERS, [(3, "5.00", None, None)])
    with source(url) as warehouse:
        result = one(warehouse, {"missing": {"table": "orders", "column": "status"}})
    assert (result.outcome, result.value) == (CheckOutcome.FAILED, 1)
    assert result.metrics["missing_percent"] == 25.0
    assert result.warnings == []
    assert [job["configuration"]["dryRun"] for job in state.jobs] == [True, False, True, False]


@pytest.mark.parametrize(
    ("url", "message"),
    [
        (
            "bigquery://p/d?destination=p.d.out&write_disposition=WRITE_TRUNCATE",
            "source warehouse: the url may not set destination, write_disposition: Lookout's"
            " BigQuery jobs write nowhere and set their own configuration (allowed: arraysize,"
            " credentials_base64, credentials_path, list_tables_page_size, location,"
            " maximum_bytes_billed)",
        ),
        (
            "bigquery://p/d?maximum_bytes_billed=0",
            "source warehouse: max_bytes_billed must be a positive number of bytes",
        ),
    ],
    ids=["destination", "zero cap"],
)
def test_a_url_that_would_make_jobs_write_or_uncapped_is_refused(url: str, message: str) -> None:
    with pytest.raises(SourceError) as refused:
        source(url)
    assert str(refused.value) == message


def test_the_cost_cap_is_a_byte_size_on_bigquery_sources_only(tmp_path: Path) -> None:
    config = {"type": "sqlalchemy", "url": "bigquery://p/d"}
    assert (
        SQLAlchemySource.model_validate({**config, "max_bytes_billed": "1 TiB"}).model_dump()[
            "max_bytes_billed"
        ]
        == 2**40
    )
    with pytest.raises(ValidationError, match="could not parse value and unit from byte string"):
        SQLAlchemySource.model_validate({**config, "max_bytes_billed": "ten"})
    with pytest.raises(SourceError) as twice:
        source("bigquery://p/d?maximum_bytes_billed=5", max_bytes_billed="10 GB")
    assert str(twice.value) == (
        "source warehouse: the cost cap is set twice: max_bytes_billed and the url's"
        " maximum_bytes_billed; keep max_bytes_billed"
    )
    (tmp_path / "a.db").write_bytes(b"")
    with pytest.raises(SourceError) as elsewhere:
        source(f"sqlite:///{tmp_path / 'a.db'}", max_bytes_billed="10 GB")
    assert str(elsewhere.value) == (
        "source warehouse: max_bytes_billed is the cost cap of an engine billing by bytes"
        " scanned (BigQuery); SQLite has none"
    )


def test_byte_counts_read_as_bigquery_bills_them() -> None:
    assert [in_bytes(n) for n in (512, 1_500, 10**10, 12_345_678_901, 3 * 10**15)] == [
        "512 B",
        "1.5 KB",
        "10 GB",
        "12.3 GB",
        "3e+03 TB",
    ]


def test_the_clients_wait_and_the_jobs_timeout_are_timeouts() -> None:
    from google.api_core.exceptions import BadRequest

    recipe = BigQueryRecipe()
    job_timeout = BadRequest("Job timed out", errors=[{"reason": "timeout"}])
    invalid = BadRequest("Syntax error", errors=[{"reason": "invalidQuery"}])
    waits = [concurrent.futures.TimeoutError(), job_timeout, invalid]
    assert [recipe.is_timeout(e) for e in waits] == [True, True, False]


def test_a_missing_driver_names_the_extra() -> None:
    code = (
        "import sys; sys.modules['sqlalchemy_bigquery'] = None\n"
        "from checks.settings.limits import Limits\n"
        "from checks.settings.sources import SQLAlchemySource\n"
        "from checks.sources import SQLQuerySource\n"
        "try:\n"
        "    SQLQuerySource('wh', SQLAlchemySource(type='sqlalchemy', url='bigquery://p/d'),"
        " Limits())\n"
        "except Exception as e:\n"
        "    print(e)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.startswith("source wh: cannot use bigquery://p/d")
    assert done.stdout.strip().endswith("pip install 'lookout[bigquery]'")
