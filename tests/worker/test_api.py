"""``worker.api``: Lookout from Python; the orchestrator examples run without their orchestrator."""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
from pathlib import Path
from types import ModuleType

import duckdb
import pytest
import yaml

from checks.errors import ConfigError
from checks.report import RunReport, Status
from checks.settings.config import Settings
from checks.store.store import Store
from tests.paths import ROOT
from tests.shipped import shipped_files
from worker import api
from worker.api import ExitCode, Lookout, exit_code

CONFIG = str(ROOT / "config" / "lookout.yaml")


@pytest.fixture
def demo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, flights_settings: Settings) -> Path:
    """The bundled demo (its config and example automations), a store of its own; the store."""
    folder = tmp_path / "automations"
    folder.mkdir()
    for path in shipped_files():
        shutil.copy(path, folder / path.name)
    for name in [n for n in os.environ if n.startswith("LOOKOUT_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("LOOKOUT_STORE_URL", f"sqlite:///{tmp_path}/lookout.db")
    monkeypatch.setenv("LOOKOUT_CACHE_DIR", flights_settings.cache_dir)
    monkeypatch.setenv("LOOKOUT_AUTOMATIONS_DIR", str(folder))
    return tmp_path


def _load(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # as an import would: its dataclasses look it up
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules[spec.name]
    return module


def test_the_exit_codes_are_the_command_lines() -> None:
    from worker.cli import app

    assert [int(c) for c in ExitCode] == [0, 1, 2, 3, 4]
    assert (app.EXIT_OK, app.EXIT_ATTENTION, app.EXIT_RUN_ERROR) == (0, 1, 3)
    import datetime as dt

    def report(status: Status, finding: str | None) -> RunReport:
        slot = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
        return RunReport("a", slot, status, finding=finding)  # type: ignore[arg-type]

    clear, attention = (
        report(Status.COMPLETED, "clear"),
        report(Status.COMPLETED, "needs_attention"),
    )
    error, skipped = report(Status.ERROR, None), report(Status.SKIPPED, None)
    assert exit_code([]) is ExitCode.CLEAR
    assert exit_code([clear, skipped]) is ExitCode.CLEAR
    assert exit_code([clear, attention]) is ExitCode.NEEDS_ATTENTION
    assert exit_code([attention], config_errors=1) is ExitCode.CONFIG_ERROR
    assert exit_code([attention, error], config_errors=1) is ExitCode.RUN_ERROR


@pytest.mark.slow
def test_a_run_from_python_is_stored_as_lookout_run_stores_it(demo: Path) -> None:
    with Lookout(CONFIG) as lookout:
        clear = lookout.run("flights-carrier-integrity")
        attention = lookout.run("planes-build-year")
        assert lookout.exit_code([clear]) is ExitCode.CLEAR
        assert lookout.exit_code([clear, attention]) is ExitCode.NEEDS_ATTENTION
        with pytest.raises(ConfigError, match=r"^no valid automation named 'nope' in "):
            lookout.run("nope")
    assert (clear.status, clear.finding, clear.finding_source) == ("completed", "clear", "checks")
    assert [c.name for c in clear.checks] == [
        "orphan carriers",
        "flights without a carrier code",
        "airlines reference loaded",
    ]
    assert [(c.name, str(c.outcome)) for c in attention.checks] == [
        ("planes without a build year", "failed"),
        ("build years in range", "passed"),
        ("planes without a build year by manufacturer", "failed"),
    ]
    store = Store(f"sqlite:///{demo}/lookout.db")
    stored = store.get_run(attention.run_id or 0)
    store.close()
    assert stored is not None
    assert (stored.run_id, stored.finding, stored.attempt) == (
        attention.run_id,
        "needs_attention",
        1,
    )
    assert [c.value for c in stored.checks] == [c.value for c in attention.checks] == [70, 0, 14]


@pytest.mark.slow
def test_a_run_in_error_is_exit_code_3(demo: Path) -> None:
    folder = demo / "broken"
    folder.mkdir()
    doc = {
        "name": "null-value",
        "source": "flights",
        "checks": [{"name": "nothing", "sql": "SELECT NULL", "expect": "== 0"}],
    }
    (folder / "null-value.yaml").write_text(yaml.safe_dump(doc), encoding="utf-8")
    report = api.run("null-value", config=CONFIG, automations=folder)
    assert report.status == Status.ERROR
    assert [str(c.outcome) for c in report.checks] == ["error"]
    assert Lookout.exit_code([report]) is ExitCode.RUN_ERROR


@pytest.mark.slow
def test_the_airflow_example_runs_its_task_without_airflow(demo: Path) -> None:
    assert importlib.util.find_spec("airflow") is None  # the example's own fallback is what runs
    example = _load(ROOT / "docs" / "examples" / "airflow_dag.py")
    assert example.DAG is None
    document = example.run_automation(config=CONFIG)
    assert (document["automation"], document["finding"]) == ("flights-carrier-integrity", "clear")
    with pytest.raises(example.NotClear) as caught:
        example.run_automation("planes-build-year", config=CONFIG)
    assert caught.value.code is ExitCode.NEEDS_ATTENTION
    assert str(caught.value).startswith("planes-build-year: needs attention (exit 1): ")


@pytest.mark.slow
def test_the_dagster_example_checks_its_asset_without_dagster(demo: Path) -> None:
    assert importlib.util.find_spec("dagster") is None
    example = _load(ROOT / "docs" / "examples" / "dagster_checks.py")
    assert example.dg is None
    passed = example.check_asset(config=CONFIG)
    failed = example.check_asset("planes-build-year", config=CONFIG)
    assert passed.passed is True and failed.passed is False
    assert passed.metadata == {
        "lookout_run_id": 1,
        "finding": "clear",
        "exit_code": 0,
        "check: orphan carriers": "passed",
        "check: flights without a carrier code": "passed",
        "check: airlines reference loaded": "passed",
    }
    assert failed.metadata["exit_code"] == 1 and failed.metadata["lookout_run_id"] == 2
    assert "worker.api" in sys.modules


@pytest.mark.slow
def test_every_automation_from_python_counts_the_files_it_could_not_run(
    demo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = demo / "some"
    folder.mkdir()
    shutil.copy(ROOT / "automations" / "flights-carrier-integrity.yaml", folder)
    (folder / "broken.yaml").write_text(
        "name: broken\nsource: nowhere\ngoal: g\n", encoding="utf-8"
    )
    with Lookout(CONFIG, automations=folder) as lookout:
        reports = lookout.run_many()
    assert [(r.automation, r.finding) for r in reports] == [("flights-carrier-integrity", "clear")]
    assert [p.location_message() for p in lookout.problems] == [
        f"{folder}/broken.yaml:2:9: source: unknown source 'nowhere'; known: flights"
    ]
    assert lookout.exit_code(reports) is ExitCode.CLEAR
    assert lookout.exit_code(reports, lookout.problems) is ExitCode.CONFIG_ERROR


@pytest.mark.slow
def test_a_run_from_python_sends_its_lineage(demo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from worker.lineage.fake_marquez import FakeMarquez

    with FakeMarquez(api_key="k" * 20) as marquez:
        monkeypatch.setenv("LOOKOUT_LINEAGE_URL", marquez.url)
        monkeypatch.setenv("LOOKOUT_LINEAGE_API_KEY", "k" * 20)
        report = api.run("flights-carrier-integrity", config=CONFIG)
    assert marquez.refused == []
    start, end = marquez.events
    assert (start["eventType"], end["eventType"]) == ("START", "COMPLETE")
    assert end["job"]["name"] == "flights-carrier-integrity" and report.run_id == 1


@pytest.fixture
def monitored(tmp_path: Path) -> Path:
    """A config whose source monitors its ``orders``, and one automation file; the config."""
    path = tmp_path / "shop.duckdb"
    with duckdb.connect(str(path)) as conn:
        conn.execute("CREATE TABLE orders AS SELECT 1 AS id")
    folder = tmp_path / "automations"
    folder.mkdir()
    (folder / "rows.yaml").write_text(
        "name: rows\nsource: shop\nchecks:\n  - name: some\n"
        "    sql: SELECT count(*) FROM orders\n    expect: '> 0'\n"
    )
    config = tmp_path / "lookout.yaml"
    config.write_text(
        f"store_url: sqlite:///{tmp_path}/lookout.db\ncache_dir: {tmp_path}/cache\n"
        f"automations_dir: {folder}\nsources:\n  shop:\n    type: duckdb\n"
        f"    database: {path}\n    monitor: {{tables: all, volume: false}}\n"
    )
    return config


def test_a_monitor_runs_from_python_by_its_name_and_with_every_one(monitored: Path) -> None:
    with Lookout(config=monitored) as lookout:
        report = lookout.run("monitor:shop.orders")
        assert (report.automation, [(c.name, c.reason) for c in report.checks]) == (
            "monitor:shop.orders",
            [("schema", "first run: schema recorded")],
        )
        reports = lookout.run_many()
        assert [(r.automation, r.finding) for r in reports] == [
            ("rows", "clear"),
            ("monitor:shop.orders", "clear"),  # its schema compared with the first run's
        ]
        assert lookout.problems == []
        with pytest.raises(ConfigError) as info:
            lookout.automation("monitor:shop.order")
    assert str(info.value) == (
        "'monitor:shop.order' is not a monitor of the config's sources"
        " (did you mean 'monitor:shop.orders'?)"
    )
