"""``lookout dbt import`` on the test project's manifest: each dbt test's check, exactly.

``shop_manifest.json`` is the manifest dbt-core 1.11.16 (dbt-duckdb 1.11.1) wrote
for ``project/`` (``dbt parse``), its macros and docs emptied to keep it small;
``test_dbt_project.py`` runs dbt itself and checks the verdicts.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from checks.automation.loader import load_automations
from checks.dbt import import_manifest
from checks.dbt.conditions import Untranslatable, levels, negated
from checks.dbt.manifest import DataTest, Freshness, Relation, read_manifest
from checks.dbt.translate import (
    Translated,
    Untranslated,
    check_name,
    translate_freshness,
    translate_test,
)
from checks.dbt.writer import AutomationFile, render
from checks.errors import ConfigError
from tests.cli_support import run_lookout

HERE = Path(__file__).parent
MANIFEST = HERE / "shop_manifest.json"


def checks_of(path: Path) -> dict[str, dict[str, Any]]:
    document = yaml.safe_load(path.read_text())
    return {c.pop("name"): c for c in document["checks"]}


@pytest.mark.slow  # over 2 s: make test runs it, make test-fast leaves it out
def test_every_test_becomes_the_check_that_counts_what_dbt_counts(tmp_path: Path) -> None:
    result = import_manifest(MANIFEST, "shop", tmp_path)
    assert [p.name for p in result.written] == [
        "dbt-customers.yaml",
        "dbt-events.yaml",
        "dbt-orders.yaml",
        "dbt-orders-statuses.yaml",
        "dbt-raw-raw_customers.yaml",
        "dbt-raw-raw_orders.yaml",
    ]
    assert checks_of(tmp_path / "dbt-customers.yaml") == {
        "accepted_values_customers_country__NL__DE__FR": {
            "accepted_values": {
                "table": "customers",
                "column": "country",
                "values": ["NL", "DE", "FR"],
                "null": "allowed",
                "count": "distinct_invalid_values",
            },
            "expect": "== 0",
        },
        "dbt_utils_not_null_proportion_customers_0_9__email": {
            "missing": {"table": "customers", "column": "email"},
            "expect": "<= 10%",
        },
        "not_null_customers_email": {  # severity: warn
            "missing": {"table": "customers", "column": "email"},
            "expect": ">= 0",
            "warn": "== 0",
        },
        "not_null_customers_id": {
            "missing": {"table": "customers", "column": "id"},
            "expect": "== 0",
        },
        "unique_customers_id": {
            "duplicates": {
                "table": "customers",
                "columns": ["id"],
                "nulls": "distinct",
                "count": "duplicate_groups",
            },
            "expect": "== 0",
        },
    }
    orders = checks_of(tmp_path / "dbt-orders.yaml")
    assert orders["dbt_utils_expression_is_true_orders_quantity___1"] == {
        "row_count": {"table": "orders", "filter": "NOT (quantity >= 1)"},
        "expect": "== 0",
        "allow_empty": True,
    }
    assert orders["dbt_utils_unique_combination_of_columns_orders_customer_id__order_date"] == {
        "duplicates": {
            "table": "orders",
            "columns": ["customer_id", "order_date"],
            "nulls": "equal",
            "count": "duplicate_groups",
        },
        "expect": "== 0",
    }
    assert orders["dbt_utils_recency_orders_day__order_date__1"] == {
        "freshness": {"table": "orders", "column": "order_date"},
        "expect": "<= 1d",
    }
    assert orders["dbt_utils_not_null_proportion_orders_0_5__quantity"]["expect"] == "<= 50%"
    assert orders["relationships_orders_customer_id__id__ref_customers_"] == {
        "relationships": {"table": "orders", "column": "customer_id", "to": "customers.id"},
        "expect": "== 0",
    }
    # error_if: ">5", warn_if: ">0"
    assert orders["not_null_orders_amount"] == {
        "missing": {"table": "orders", "column": "amount"},
        "expect": "<= 5",
        "warn": "<= 0",
    }
    # where: config -> filter:, and the test's own tag its own automation
    assert checks_of(tmp_path / "dbt-orders-statuses.yaml") == {
        "accepted_values_orders_status__placed__shipped__returned": {
            "accepted_values": {
                "table": "orders",
                "filter": "order_id < 100",
                "column": "status",
                "values": ["placed", "shipped", "returned"],
                "null": "allowed",
                "count": "distinct_invalid_values",
            },
            "expect": "== 0",
        }
    }
    assert checks_of(tmp_path / "dbt-raw-raw_orders.yaml") == {
        "freshness raw.raw_orders": {
            "freshness": {"table": "raw_orders", "column": "loaded_at"},
            "expect": "<= 30d",
            "warn": "<= 12h",
        }
    }
    # the alias, not the model's name, is the table
    assert checks_of(tmp_path / "dbt-events.yaml")["dbt_utils_recency_events_hour__loaded_at__2"][
        "freshness"
    ] == {"table": "app_events", "column": "loaded_at"}


def test_owner_and_tags_carry_over_and_every_file_loads(tmp_path: Path) -> None:
    import_manifest(MANIFEST, "shop", tmp_path)
    loaded = load_automations(tmp_path, known_sources=["shop"])
    assert loaded.errors == []
    found = {a.name: (a.owner, a.tags, a.source, len(a.checks)) for a in loaded.automations}
    assert found == {
        "dbt-customers": ("crm-team", ["dbt", "crm"], "shop", 5),
        "dbt-events": (None, ["dbt"], "shop", 1),
        "dbt-orders": ("sales-team", ["dbt"], "shop", 9),
        "dbt-orders-statuses": ("sales-team", ["dbt", "statuses"], "shop", 1),
        "dbt-raw-raw_customers": ("ingest-team", ["dbt"], "shop", 1),
        "dbt-raw-raw_orders": ("ingest-team", ["dbt"], "shop", 1),
    }


def test_what_is_not_translated_is_listed_in_the_output_and_the_file(tmp_path: Path) -> None:
    config = tmp_path / "lookout.yaml"
    config.write_text(yaml.safe_dump({"sources": {"shop": {"type": "duckdb", "database": "x"}}}))
    out = tmp_path / "out"
    done = run_lookout(
        [
            "--config",
            str(config),
            "dbt",
            "import",
            str(MANIFEST),
            "--source",
            "shop",
            "--out",
            str(out),
        ],
        env={"COLUMNS": "300", "PATH": "/usr/bin"},
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == (
        f"wrote 6 automations (18 checks) to {out} from {MANIFEST} (dbt 1.11.16, schema main)"
    )
    assert lines[-3:] == [
        "not translated: 2 (run them with dbt)",
        "  test.shop.assert_no_big_orders (a singular test): its SQL is its own: run it with dbt",
        "  test.shop.dbt_utils_recency_events_month__loaded_at__1.8f207c7988 (dbt_utils.recency):"
        " datepart 'month' is not a fixed length (second to week)",
    ]
    orders = (out / "dbt-orders.yaml").read_text().splitlines()
    assert "# Not translated (run them with dbt):" in orders
    assert (
        "#   test.shop.assert_no_big_orders (a singular test): its SQL is its own: run it with dbt"
        in orders
    )
    assert orders[2] == "# dbt model orders: relation shop.main.orders"


def test_an_unknown_source_is_named_with_the_closest(tmp_path: Path) -> None:
    config = tmp_path / "lookout.yaml"
    config.write_text(yaml.safe_dump({"sources": {"shop": {"type": "duckdb", "database": "x"}}}))
    done = run_lookout(
        [
            "--config",
            str(config),
            "dbt",
            "import",
            str(MANIFEST),
            "--source",
            "shpo",
            "--out",
            str(tmp_path / "out"),
        ],
        env={"COLUMNS": "300", "PATH": "/usr/bin"},
    )
    assert done.returncode == 2
    assert done.stderr.strip() == (
        "error: --source: unknown source 'shpo' (did you mean 'shop'?); known: shop"
    )
    assert not (tmp_path / "out").exists()


def test_relations_in_another_schema_are_listed_with_the_way_to_import_them(
    tmp_path: Path,
) -> None:
    result = import_manifest(MANIFEST, "shop", tmp_path, schema="analytics")
    assert result.written == [] and len(result.untranslated) == 20
    reasons = {u.unique_id: u.reason for u in result.untranslated}
    assert reasons["test.shop.unique_orders_order_id.fed79b3a6e"] == (
        "shop.main.orders is in schema main, the source reads analytics:"
        " import again with --schema main and that schema's source"
    )


def test_a_manifest_that_cannot_be_read_says_why_and_where(tmp_path: Path) -> None:
    missing = tmp_path / "none.json"
    with pytest.raises(ConfigError, match=r"none.json: cannot read the manifest: No such file"):
        read_manifest(missing)
    bad = tmp_path / "bad.json"
    bad.write_text("{nope")
    with pytest.raises(ConfigError, match=r"bad.json: not JSON: Expecting property name"):
        read_manifest(bad)
    old = tmp_path / "old.json"
    old.write_text(
        json.dumps(
            {"metadata": {"dbt_schema_version": "https://schemas.getdbt.com/dbt/manifest/v9.json"}}
        )
    )
    with pytest.raises(ConfigError) as caught:
        read_manifest(old)
    assert str(caught.value) == (
        f"{old}: manifest schema https://schemas.getdbt.com/dbt/manifest/v9.json is not read;"
        " Lookout reads https://schemas.getdbt.com/dbt/manifest/v12.json (dbt 1.8 to 1.11):"
        " run dbt parse with one of them"
    )
    broken = json.loads(MANIFEST.read_text())
    del broken["nodes"]["model.shop.orders"]["alias"]
    wrong = tmp_path / "wrong.json"
    wrong.write_text(json.dumps(broken))
    with pytest.raises(
        ConfigError,
        match=r"wrong.json: nodes\.model\.shop\.orders\.alias: not a valid v12 manifest: "
        "Field required",
    ):
        read_manifest(wrong)


def test_severity_error_if_and_warn_if_as_expect_and_warn() -> None:
    assert [negated(c, "error_if") for c in ("!=0", "> 5", ">=10", "<3", "<= 2", "=0", "<> 0")] == [
        "== 0",
        "<= 5",
        "< 10",
        ">= 3",
        "> 2",
        "!= 0",
        "== 0",
    ]
    assert levels("error", "!= 0", "!= 0") == levels("error", "!=0", "<>0")
    assert (levels("error", "!= 0", "!= 0").expect, levels("error", "!= 0", "!= 0").warn) == (
        "== 0",
        None,
    )
    found = levels("warn", "!= 0", "> 3")
    assert (found.expect, found.warn) == (">= 0", "between 0 and 3")
    found = levels("warn", "!= 0", ">= 3")
    assert (found.expect, found.warn) == (">= 0", "between 0 and 2")
    with pytest.raises(Untranslatable, match=r"error_if: 'failures > 1' is not a comparison"):
        levels("error", "failures > 1", "!= 0")
    with pytest.raises(
        Untranslatable, match=r"warn_if '>10' beside error_if '!=0': warn: '<= 10' is looser"
    ):
        levels("error", "!=0", ">10")


def test_a_long_or_odd_test_name_is_a_valid_check_name() -> None:
    long = "dbt_utils_unique_combination_of_columns_" + "_".join(f"col{i}" for i in range(30))
    name = check_name(long, "test.p.x.0123456789")
    assert (len(name), name[-11:]) == (100, "_0123456789")
    assert check_name("_naïve test (2)", "test.p.y.abc") == "na_ve test _2_"


def test_a_name_cannot_end_the_comment_it_is_written_in() -> None:
    relation = Relation("model.p.m", "model", "m", "db", "main", "m", None, ())
    evil = Untranslated("test.p.x\nname: evil", "x", "why\r\nsource: other", "model.p.m")
    automation = AutomationFile("dbt-m", relation, None, (), [], [evil])
    manifest = read_manifest(MANIFEST)
    text = render(automation, manifest, "shop")
    assert "#   test.p.x\\nname: evil (x): why\\r\\nsource: other" in text.splitlines()
    assert yaml.safe_load(text)["name"] == "dbt-m"


def a_test(**fields: Any) -> DataTest:
    base: dict[str, Any] = {
        "unique_id": "test.shop.t.0123456789",
        "name": "t",
        "test_name": "accepted_values",
        "namespace": None,
        "kwargs": {"column_name": "quantity", "values": [1, 2]},
        "column": "quantity",
        "relation_id": "model.shop.orders",
        "depends_on": ("model.shop.orders",),
        "severity": "error",
        "warn_if": "!= 0",
        "error_if": "!= 0",
        "where": None,
        "fail_calc": "count(*)",
        "limit": None,
        "owner": None,
        "tags": (),
    }
    return DataTest(**{**base, **fields})


@pytest.mark.parametrize(
    ("fields", "reason"),
    [
        ({"test_name": "at_least_one", "namespace": "dbt_utils"}, "not a test Lookout translates"),
        ({"test_name": "positive", "namespace": "shop"}, "not a test Lookout translates"),
        ({"fail_calc": "sum(n_records)"}, "fail_calc 'sum(n_records)' counts otherwise than rows"),
        ({"limit": 10}, "limit 10 caps the failures dbt counts"),
        ({"where": "day = '{{ var(\"d\") }}'"}, "where holds Jinja, which only dbt renders"),
        ({"error_if": "in (1, 2)"}, "error_if: 'in (1, 2)' is not a comparison with a number"),
        ({"relation_id": "model.shop.nope"}, "not attached to one model, seed, snapshot or source"),
        (
            {"kwargs": {"column_name": "status", "values": ["a", "b"], "quote": False}},
            "quote: false with values that are SQL, not numbers",
        ),
        (
            {
                "test_name": "recency",
                "namespace": "dbt_utils",
                "kwargs": {"datepart": "day", "field": "loaded_at", "interval": 1},
                "error_if": "> 5",
            },
            "error_if or warn_if on a test whose failure is one row",
        ),
        (
            {
                "test_name": "recency",
                "namespace": "dbt_utils",
                "kwargs": {
                    "datepart": "day",
                    "field": "d",
                    "interval": 1,
                    "group_by_columns": ["a"],
                },
            },
            "group_by_columns judges each group apart",
        ),
    ],
)
def test_what_cannot_be_judged_as_dbt_does_says_why(fields: dict[str, Any], reason: str) -> None:
    found = translate_test(read_manifest(MANIFEST), a_test(**fields), "main")
    assert isinstance(found, Untranslated)
    assert found.reason.startswith(reason), found.reason


def test_unquoted_numbers_stay_numbers_and_a_where_joins_the_expression() -> None:
    manifest = read_manifest(MANIFEST)
    numbers = translate_test(
        manifest,
        a_test(kwargs={"column_name": "quantity", "values": [1, 3], "quote": False}),
        "main",
    )
    assert isinstance(numbers, Translated)
    assert numbers.check["accepted_values"]["values"] == [1, 3]
    quoted = translate_test(manifest, a_test(), "main")
    assert isinstance(quoted, Translated)
    # dbt quotes them ('1'), which the warehouse casts to the column's type, as the kind does
    assert quoted.check["accepted_values"]["values"] == [1, 2]
    expression = translate_test(
        manifest,
        a_test(
            test_name="expression_is_true",
            namespace="dbt_utils",
            kwargs={"expression": "amount > 0 OR status = 'x'"},
            column=None,
            where="order_id < 100",
        ),
        "main",
    )
    assert isinstance(expression, Translated)
    assert expression.check["row_count"]["filter"] == (
        "order_id < 100 AND NOT (amount > 0 OR status = 'x')"
    )


def test_a_source_freshness_with_only_a_warning_never_fails() -> None:
    manifest = read_manifest(MANIFEST)
    rule = Freshness("source.shop.raw.raw_orders", "loaded_at", (6, "hour"), None, "id > 0", None)
    found = translate_freshness(manifest, rule, "main")
    assert isinstance(found, Translated)
    assert found.check == {
        "name": "freshness raw.raw_orders",
        "freshness": {"table": "raw_orders", "column": "loaded_at", "filter": "id > 0"},
        "expect": ">= 0s",
        "warn": "<= 6h",
    }
    query = Freshness("source.shop.raw.raw_orders", None, (6, "hour"), None, None, "select 1")
    left = translate_freshness(manifest, query, "main")
    assert isinstance(left, Untranslated) and left.reason == "loaded_at_query is SQL of its own"
    none = Freshness("source.shop.raw.raw_orders", "loaded_at", None, None, None, None)
    assert translate_freshness(manifest, none, "main") is None
