"""``lookout run --json`` through the real entry point: every typed kind's metrics, on both engines.

One automation with each of the eight kinds, a scope of 0 rows and a raw query
over an empty table, run over the shop (``tests.checks.declared.shop``) on
DuckDB and on PostgreSQL; each check's JSON is compared whole.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.cli_support import run_lookout

CHECKS: list[dict[str, Any]] = [
    {"name": "rows", "row_count": {"table": "orders"}},
    {"name": "emails", "missing": {"table": "customers", "column": "email"}, "expect": "<= 1%"},
    {"name": "pairs unique", "duplicates": {"table": "pairs", "columns": ["a", "b"]}},
    {
        "name": "statuses",
        "accepted_values": {"table": "orders", "column": "status", "values": ["paid", "refunded"]},
    },
    {
        "name": "customers exist",
        "relationships": {"table": "orders", "column": "customer_id", "to": "customers.id"},
    },
    {"name": "loaded", "freshness": {"table": "loads", "column": "loaded_tz", "max_age": "1h"}},
    {"name": "amounts", "range": {"table": "orders", "column": "amount", "min": 0}},
    {"name": "columns", "schema": {"table": "orders", "columns": {"amount": "decimal"}}},
    {
        "name": "diana",
        "missing": {"table": "orders", "column": "status", "filter": "name = 'Diana'"},
    },
    {"name": "refunds", "sql": "SELECT count(*) FROM empty_t", "expect": "== 0"},
]

EXPECTED: list[tuple[str, str, str, Any, dict[str, Any]]] = [
    # name, kind, outcome, value, metrics
    ("rows", "row_count", "passed", 5, {"rows_in_scope": 5, "compared": "rows_in_scope"}),
    (
        "emails",
        "missing",
        "failed",
        25.0,
        {"rows_in_scope": 4, "missing": 1, "missing_percent": 25.0, "compared": "missing"},
    ),
    (
        "pairs unique",
        "duplicates",
        "failed",
        3,
        {
            "rows_in_scope": 9,
            "duplicate_groups": 2,
            "surplus_rows": 3,
            "rows_in_duplicate_groups": 5,
            "rows_with_null_key": 3,
            "compared": "surplus_rows",
        },
    ),
    (
        "statuses",
        "accepted_values",
        "failed",
        2,
        {
            "rows_in_scope": 5,
            "invalid_values": 1,
            "null_values": 1,
            "distinct_invalid_values": 1,
            "violations": 2,
            "compared": "violations",
        },
    ),
    (
        "customers exist",
        "relationships",
        "failed",
        1,
        {
            "rows_in_scope": 5,
            "orphans": 1,
            "orphan_keys": 1,
            "null_keys": 1,
            "compared": "orphans",
        },
    ),
    (
        "loaded",
        "freshness",
        "failed",
        None,  # the age grows with the clock: checked apart
        {
            "rows_in_scope": 3,
            "rows_with_value": 2,
            "compared": "age_s",
            "latest": "2024-01-10T01:30:00+00:00",
        },
    ),
    (
        "amounts",
        "range",
        "failed",
        1,
        {
            "rows_in_scope": 5,
            "below_min": 1,
            "above_max": 0,
            "null_values": 0,
            "violations": 1,
            "compared": "violations",
        },
    ),
    (
        "columns",
        "schema",
        "passed",
        0,
        {
            "rows_in_scope": 5,
            "columns_expected": 1,
            "missing_columns": 0,
            "wrong_types": 0,
            "problems": 0,
            "compared": "problems",
        },
    ),
    (
        "diana",
        "missing",
        "not_evaluated",
        None,
        {"rows_in_scope": 0, "missing": 0, "missing_percent": None, "compared": "missing"},
    ),
    ("refunds", "sql", "not_evaluated", None, {}),
]


@pytest.mark.slow
def test_run_json_gives_each_kinds_metrics_on_duckdb_and_postgresql(
    tmp_path: Path, shop_duckdb_path: Path, shop_pg: str
) -> None:
    config = {
        "store_url": f"sqlite:///{tmp_path}/lookout.db",
        "cache_dir": str(tmp_path / "cache"),
        "sources": {
            "shop": {"type": "duckdb", "database": str(shop_duckdb_path)},
            "shop_pg": {"type": "sqlalchemy", "url": shop_pg},
        },
    }
    (tmp_path / "lookout.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    autos = tmp_path / "automations"
    autos.mkdir()
    for source in ("shop", "shop_pg"):
        doc = {"name": source.replace("_", "-"), "source": source, "goal": "g", "checks": CHECKS}
        (autos / f"{source}.yaml").write_text(yaml.safe_dump(doc), encoding="utf-8")
    folders = ["--config", str(tmp_path / "lookout.yaml"), "--automations", str(autos)]
    proc = run_lookout([*folders, "run", "--all", "--json"], {"PATH": "/usr/bin:/bin"})
    assert proc.returncode == 1, proc.stderr  # Needs attention
    runs = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [r["automation"] for r in runs] == ["shop", "shop-pg"]
    for run in runs:
        assert (run["status"], run["finding"], run["finding_source"]) == (
            "completed",
            "needs_attention",
            "checks",
        )
        assert run["summary"].splitlines()[2:4] == [
            "Not evaluated: **diana** — 0 rows in scope: orders where name = 'Diana'.",
            "Not evaluated: **refunds** — table empty_t has 0 rows.",
        ]
        checks = run["checks"]
        fresh = checks[5]
        age = fresh["metrics"].pop("age_s")
        assert isinstance(age, float) and age > 3600 and fresh["value"] == age
        fresh["value"] = None
        got = [(c["name"], c["kind"], c["outcome"], c["value"], c["metrics"]) for c in checks]
        assert got == EXPECTED
        assert [c["passed"] for c in checks] == [True] + [False] * 6 + [True, None, None]
        assert [c["sample_id"] for c in checks] == [
            None, "S2", "S3", "S4", "S5", None, "S7", None, None, None,
        ]  # fmt: skip
