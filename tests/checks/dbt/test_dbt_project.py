"""Real dbt on the test project, then its tests imported and run by Lookout: the same verdicts.

Run by ``make test-dbt``, which installs dbt-core and dbt-duckdb into ``.venv-dbt``
and sets ``LOOKOUT_TEST_DBT`` to its ``dbt``; without that variable every test
here is skipped. ``project/`` is a dbt project over two seeds with injected
problems (NULLs, a duplicate id, unknown countries, orphan orders, a negative
amount, stale loads); dbt-utils' tests are vendored in it
(``project/vendor/dbt_utils/README.md``). dbt runs ``seed``, ``run``, ``test``
and ``source freshness``; ``lookout dbt import`` turns the manifest into
automations; ``lookout run --all --json`` runs them on the same DuckDB file.
Every test dbt failed fails in Lookout, every warning warns, every pass
passes, with the same failure counts where dbt's count is a count of rows.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.checks.dbt.test_import import MANIFEST
from tests.cli_support import run_lookout

DBT = os.environ.get("LOOKOUT_TEST_DBT")
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not DBT, reason="make test-dbt sets LOOKOUT_TEST_DBT (dbt in .venv-dbt)"),
]
PROJECT = Path(__file__).parent / "project"
OUTCOME = {"pass": "passed", "fail": "failed", "error": "failed", "warn": "warned"}
ONE_ROW = ("not_null_proportion", "recency")  # dbt's failure is one row, Lookout's value a measure


def _dbt(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    assert DBT is not None
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin"),
        "HOME": str(project),
        "SHOP_DUCKDB": str(project / "shop.duckdb"),
        "DBT_PROFILES_DIR": str(project),
        "DBT_SEND_ANONYMOUS_USAGE_STATS": "false",
    }
    return subprocess.run(
        [DBT, *args], cwd=project, env=env, capture_output=True, text=True, timeout=300
    )


@pytest.fixture(scope="module")
def verdicts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """dbt's results and Lookout's, after dbt built and tested the project."""
    base = tmp_path_factory.mktemp("dbt")
    project = base / "shop"
    shutil.copytree(PROJECT, project)
    for step in (("deps",), ("seed",), ("run",)):
        done = _dbt(project, *step)
        assert done.returncode == 0, done.stdout[-3000:]
    tested = _dbt(project, "test")
    assert tested.returncode == 1, tested.stdout[-3000:]  # tests failed, as injected
    dbt_tests = json.loads((project / "target/run_results.json").read_text())["results"]
    fresh = _dbt(project, "source", "freshness")
    assert fresh.returncode == 1, fresh.stdout[-3000:]
    dbt_fresh = json.loads((project / "target/sources.json").read_text())["results"]

    config = base / "lookout.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "store_url": f"sqlite:///{base}/lookout.db",
                "cache_dir": str(base / "cache"),
                "sources": {"shop": {"type": "duckdb", "database": str(project / "shop.duckdb")}},
            }
        )
    )
    out = base / "automations"
    env = {"PATH": os.environ.get("PATH", "/usr/bin"), "COLUMNS": "300"}
    manifest = project / "target/manifest.json"
    imported = run_lookout(
        [
            "--config",
            str(config),
            "dbt",
            "import",
            str(manifest),
            "--source",
            "shop",
            "--out",
            str(out),
        ],
        env=env,
    )
    assert imported.returncode == 0, imported.stdout + imported.stderr
    ran = run_lookout(
        ["--config", str(config), "--automations", str(out), "run", "--all", "--json"], env=env
    )
    assert ran.returncode == 1, ran.stderr  # Needs attention
    reports = [json.loads(line) for line in ran.stdout.splitlines()]
    return {"tests": dbt_tests, "fresh": dbt_fresh, "reports": reports, "out": out, "base": base}


def lookout_checks(verdicts: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["name"]: c for r in verdicts["reports"] for c in r["checks"]}


def test_every_translated_test_has_dbts_verdict_and_count(verdicts: dict[str, Any]) -> None:
    checks = lookout_checks(verdicts)
    compared = []
    for result in verdicts["tests"]:
        name = result["unique_id"].split(".")[2]
        if name not in checks:
            continue
        check = checks[name]
        assert (name, check["outcome"]) == (name, OUTCOME[result["status"]])
        if not any(word in name for word in ONE_ROW):
            assert (name, check["value"]) == (name, result["failures"])
        compared.append((name, result["status"]))
    assert sorted(compared) == sorted(
        [
            ("accepted_values_customers_country__NL__DE__FR", "fail"),  # XX, YY
            ("accepted_values_orders_status__placed__shipped__returned", "pass"),  # where: < 100
            ("dbt_utils_expression_is_true_orders_amount_0", "fail"),
            ("dbt_utils_expression_is_true_orders_quantity___1", "pass"),
            ("dbt_utils_not_null_proportion_customers_0_9__email", "fail"),
            ("dbt_utils_not_null_proportion_orders_0_5__quantity", "pass"),
            ("dbt_utils_recency_events_hour__loaded_at__2", "pass"),
            ("dbt_utils_recency_orders_day__order_date__1", "fail"),
            ("dbt_utils_unique_combination_of_columns_orders_customer_id__order_date", "fail"),
            ("not_null_customers_email", "warn"),
            ("not_null_customers_id", "fail"),
            ("not_null_orders_amount", "warn"),
            ("not_null_orders_order_id", "pass"),
            ("relationships_orders_customer_id__id__ref_customers_", "fail"),
            ("source_not_null_raw_raw_customers_id", "fail"),
            ("unique_customers_id", "fail"),  # NULL id not a duplicate
            ("unique_orders_order_id", "pass"),
        ]
    )
    # NULL keys group together in dbt-utils' GROUP BY: (1, Jan 1) and (NULL, Jan 5)
    pairs = checks["dbt_utils_unique_combination_of_columns_orders_customer_id__order_date"]
    assert pairs["value"] == 2
    # orphans are rows (customer 99 twice), NULL customers skipped
    assert (
        checks["relationships_orders_customer_id__id__ref_customers_"]["metrics"]["null_keys"] == 2
    )


def test_source_freshness_has_dbts_verdict(verdicts: dict[str, Any]) -> None:
    (fresh,) = verdicts["fresh"]
    assert (fresh["unique_id"], fresh["status"]) == ("source.shop.raw.raw_orders", "error")
    check = lookout_checks(verdicts)["freshness raw.raw_orders"]
    assert check["outcome"] == "failed"
    # both measured from the same newest load
    assert check["metrics"]["latest"] == "2026-01-07T09:00:00+00:00"
    assert fresh["max_loaded_at"].startswith("2026-01-07T09:00:00")


def test_the_manifest_dbt_wrote_imports_as_the_kept_one_does(
    verdicts: dict[str, Any], tmp_path: Path
) -> None:
    kept = tmp_path / "kept"
    from checks.dbt import import_manifest

    import_manifest(MANIFEST, "shop", kept)
    fresh = sorted(p.name for p in verdicts["out"].iterdir())
    assert fresh == sorted(p.name for p in kept.iterdir())
    for name in fresh:
        now = (verdicts["out"] / name).read_text().splitlines()[1:]
        assert now == (kept / name).read_text().splitlines()[1:], name
