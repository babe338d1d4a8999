"""OpenLineage: a real run's events, sent by openlineage-python to the strict fake Marquez."""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from checks.report import CheckResult, RunReport, Status
from checks.settings.config import Settings, default_config_data
from tests.cli_support import run_lookout
from worker.lineage.events import dataset_namespace, run_events
from worker.lineage.fake_marquez import FakeMarquez, rebuild

KEY = "lineage-key-0123456789"


@pytest.fixture
def marquez() -> Iterator[FakeMarquez]:
    with FakeMarquez(api_key=KEY) as fake:
        yield fake


def _env(tmp_path: Path, settings: Settings, url: str, key: str = KEY) -> dict[str, str]:
    return {
        "PATH": "/usr/bin:/bin",
        "LOOKOUT_STORE_URL": f"sqlite:///{tmp_path}/lookout.db",
        "LOOKOUT_CACHE_DIR": settings.cache_dir,
        "LOOKOUT_LINEAGE_URL": url,
        "LOOKOUT_LINEAGE_API_KEY": key,
    }


def test_a_run_sends_start_and_complete_with_its_assertions_and_metrics(
    tmp_path: Path, flights_settings: Settings, marquez: FakeMarquez
) -> None:
    proc = run_lookout(
        ["run", "flights-value-ranges"], _env(tmp_path, flights_settings, marquez.url)
    )
    assert proc.returncode == 0, proc.stderr
    assert f"lineage: 2 events sent to {marquez.url}" in proc.stderr
    assert marquez.refused == []
    start, end = marquez.events
    assert (start["eventType"], end["eventType"]) == ("START", "COMPLETE")
    assert start["run"]["runId"] == end["run"]["runId"]
    uuid.UUID(end["run"]["runId"])
    assert end["job"]["namespace"] == "lookout"
    assert end["job"]["name"] == "flights-value-ranges"
    assert end["job"]["facets"]["jobType"]["jobType"] == "DATA_QUALITY"
    (flights,) = end["inputs"]
    assert (flights["namespace"], flights["name"]) == ("duckdb://flights", "main.flights")
    facets = flights["inputFacets"]
    assertions = {a["name"]: a for a in facets["dataQualityAssertions"]["assertions"]}
    months = assertions["months out of range"]
    assert (months["assertion"], months["success"], months["column"]) == ("range", True, "month")
    assert (months["expected"], months["actual"]) == ("== 0", "0")
    assert assertions["months loaded"]["assertion"] == "custom_sql"
    assert assertions["months loaded"]["actual"] == "12"
    assert facets["dataQualityMetrics"]["rowCount"] == 336776
    # the START event names the inputs without their facets
    assert start["inputs"] == [
        {"namespace": "duckdb://flights", "name": "main.flights", "facets": {}, "inputFacets": {}}
    ]


def test_a_refused_key_is_one_line_and_never_the_runs_status(
    tmp_path: Path, flights_settings: Settings, marquez: FakeMarquez
) -> None:
    proc = run_lookout(
        ["run", "flights-value-ranges"],
        _env(tmp_path, flights_settings, marquez.url, key="wrong-key-9876543210"),
    )
    assert proc.returncode == 0
    assert f"lineage: not sent to {marquez.url}: 401 Client Error" in proc.stderr
    assert "wrong-key-9876543210" not in proc.stderr
    assert marquez.events == []
    assert marquez.refused == [(401, "missing or wrong bearer token")]


def _report(status: Status, error: str | None = None) -> RunReport:
    started = dt.datetime(2026, 12, 6, 7, 0, tzinfo=dt.UTC)
    return RunReport(
        automation="orders",
        scheduled_for=started,
        status=status,
        run_id=7,
        error=error,
        started_at=started,
        finished_at=started + dt.timedelta(seconds=3),
        definition={
            "source": "shop",
            "checks": [{"name": "n", "missing": {"table": "orders", "column": "email"}}],
        },
        checks=[
            CheckResult(
                name="n",
                sql="SELECT 1",
                expect="== 0",
                value=3,
                outcome="failed",
                kind="missing",
                metrics={"rows_in_scope": 10, "missing": 3},
            )
        ],
    )


def _settings(url: str) -> Settings:
    return Settings.model_validate(
        {
            **default_config_data(),
            "lineage": {"url": url},
            "sources": {
                "shop": {
                    "type": "sqlalchemy",
                    "url": "postgresql://reader:s3cret@db.example:6543/shop",
                }
            },
        }
    )


def test_an_error_run_ends_in_fail_with_its_message_and_the_models_accept_it() -> None:
    events = run_events(_settings("http://x"), _report(Status.ERROR, "the source is down"), "shop")
    assert [e.eventType.value for e in events] == ["START", "FAIL"]
    assert events[1].run.facets["errorMessage"].message == "the source is down"
    (orders,) = events[1].inputs
    assert (orders.namespace, orders.name) == ("postgres://db.example:6543", "shop.public.orders")
    metrics = orders.inputFacets["dataQualityMetrics"]
    assert (metrics.rowCount, metrics.columnMetrics["email"].nullCount) == (10, 3)
    assert orders.inputFacets["dataQualityAssertions"].assertions[0].success is False


def test_a_dataset_namespace_never_holds_the_urls_user_or_password() -> None:
    namespace, prefix = dataset_namespace(_settings("http://x"), "shop")
    assert (namespace, prefix) == ("postgres://db.example:6543", "shop.public.")


def test_the_fake_refuses_what_the_models_refuse() -> None:
    event = {
        "eventType": "COMPLETE",
        "eventTime": "2026-12-06T07:00:00+00:00",
        "run": {"runId": str(uuid.uuid4())},
        "job": {"namespace": "n", "name": "j"},
        "producer": "https://x",
        "inputs": [
            {
                "namespace": "n",
                "name": "t",
                "inputFacets": {
                    "dataQualityAssertions": {
                        "assertions": [{"assertion": "a", "success": True, "colour": "red"}]
                    }
                },
            }
        ],
    }
    with pytest.raises(TypeError, match="colour"):
        rebuild(event)
    with pytest.raises(ValueError, match="badly formed"):
        rebuild({**event, "run": {"runId": "run-7"}})
    with pytest.raises(ValueError, match="'DONE' is not a valid"):
        rebuild({**event, "eventType": "DONE", "inputs": []})
