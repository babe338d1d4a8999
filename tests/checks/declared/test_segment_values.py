"""Segment values of awkward types: binary, NaN and infinities; an empty scope allowed; validity.

Binary values are named in hex and kept apart in the store; NaN sorts after every
number and reaches the failing segments' sample as a typed literal (never a bare
``nan``, a column reference); ``allow_empty`` over no segment judges the check as
it would be without ``by:``. Real DuckDB and PostgreSQL, a real SQLite store.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import duckdb
import psycopg
import pytest

from checks.automation.model import Automation
from checks.declared.segment_sql import value_literal
from checks.declared.segments import value_name
from checks.declared.wording import describe_value
from checks.report import CheckOutcome, CheckResult
from checks.run import SourcePool
from checks.run_lifecycle import run_and_store
from checks.settings.config import Settings
from checks.settings.limits import Limits
from checks.settings.sources import DuckDBSource
from checks.sources import Source
from checks.store.store import Store
from tests.checks.declared.shop import duckdb_opener, one, run, sqlalchemy_opener

F, P, N = CheckOutcome.FAILED, CheckOutcome.PASSED, CheckOutcome.NOT_EVALUATED


def segments(result: CheckResult) -> list[tuple[str, CheckOutcome, Any, int]]:
    """Each segment as (name, outcome, value, rows in scope)."""
    assert result.segments is not None
    return [(s.name, s.outcome, s.value, s.rows_in_scope) for s in result.segments.items]


def duckdb_source(tmp_path: Path, *statements: str) -> Source:
    """A DuckDB file holding what ``statements`` build, opened as a source."""
    path = tmp_path / "data.duckdb"
    with duckdb.connect(str(path)) as conn:
        for statement in statements:
            conn.execute(statement)
    return duckdb_opener(path)(Limits())


def test_binary_values_of_one_length_are_two_segments_and_the_run_is_stored(
    tmp_path: Path,
) -> None:
    with duckdb.connect(str(tmp_path / "g.duckdb")) as conn:
        conn.execute(
            "CREATE TABLE g(b BLOB); INSERT INTO g VALUES ('\\x00\\xff'::BLOB), ('ab'::BLOB)"
        )
    auto = Automation.model_validate(
        {
            "name": "blobs",
            "source": "g",
            "goal": "Every binary value has rows.",
            "checks": [
                {"name": "by blob", "row_count": {"table": "g", "by": "b"}, "expect": "> 0"}
            ],
            "path": "inline.yaml",
            "line": 1,
        }
    )
    settings = Settings(
        store_url="sqlite://",
        cache_dir=str(tmp_path / "cache"),
        sources={"g": DuckDBSource(type="duckdb", database=str(tmp_path / "g.duckdb"))},
    )
    store = Store(f"sqlite:///{tmp_path}/lookout.db")
    when = dt.datetime(2026, 11, 2, 6, 0, tzinfo=dt.UTC)
    with SourcePool(settings) as pool:
        report = run_and_store(auto, settings, pool, store, scheduled_for=when)
    check = report.checks[0]
    assert (check.outcome, check.value) == (P, 0)
    assert segments(check) == [("0x00ff", P, 1, 1), ("0x6162", P, 1, 1)]
    stored = store.get_run(report.run_id or 0)
    assert stored is not None and stored.checks[0].segments is not None
    kept = stored.checks[0].segments.items
    assert [(s.name, s.values) for s in kept] == [
        ("0x00ff", {"b": {"bytes": "00ff"}}),
        ("0x6162", {"b": {"bytes": "6162"}}),
    ]
    assert kept[0].series_metric != kept[1].series_metric
    assert check.segments is not None
    for segment in check.segments.items:
        points = store.series(auto.name, "by blob", segment.series_metric)
        assert [p.value for p in points] == [1.0]
    store.close()


def test_a_long_binary_value_is_named_by_its_head_length_and_digest() -> None:
    assert value_name(b"") == "0x"
    assert value_name(bytes(range(8))) == "0x0001020304050607"
    long = bytes(range(40))
    assert value_name(long) == "0x0001020304050607… (40 bytes, sha256 5faa4eec)"
    assert value_name(long) != value_name(long[:39] + b"\x00")


def test_allow_empty_with_by_judges_the_empty_scope_as_one_check(tmp_path: Path) -> None:
    source = duckdb_source(tmp_path, "CREATE TABLE many AS SELECT range AS k FROM range(3)")
    block = {"table": "many", "filter": "k < 0"}
    plain = one(source, {"row_count": block, "expect": "> 0", "allow_empty": True})
    segmented = one(
        source, {"row_count": {**block, "by": "k"}, "expect": "> 0", "allow_empty": True}
    )
    for result in (plain, segmented):
        assert (result.outcome, result.value) == (F, 0)
        assert result.reason == "0 rows in scope: many where k < 0 (allowed: allow_empty)"
    assert segmented.segments is not None and segmented.segments.by == ["k"]
    assert segmented.segments.items == []
    assert segmented.metrics["segments"] == 0
    missing = one(
        source,
        {
            "missing": {**block, "column": "k", "by": "k"},
            "expect": "> 5",
            "allow_empty": True,
        },
    )
    assert (missing.outcome, missing.value) == (F, 0)
    not_allowed = one(source, {"row_count": {**block, "by": "k"}, "expect": "> 0"})
    assert (not_allowed.outcome, not_allowed.value) == (N, None)


NAN_ROWS = (
    "INSERT INTO f VALUES ('nan'::DOUBLE, NULL), ('inf'::DOUBLE, NULL), ('-inf'::DOUBLE, 1),"
    " (1.0, NULL), (1.0, 2)"
)


def test_nan_and_infinities_sort_and_sample_as_typed_literals(tmp_path: Path) -> None:
    source = duckdb_source(tmp_path, "CREATE TABLE f(d DOUBLE, v INT)", NAN_ROWS)
    results, evidence = run(
        source, {"name": "c", "missing": {"table": "f", "column": "v", "by": "d"}}
    )
    result = results[0]
    assert (result.outcome, result.value) == (F, 3)
    assert segments(result) == [
        ("-inf", P, 0, 1),
        ("1.0", F, 1, 2),
        ("inf", F, 1, 1),
        ("nan", F, 1, 1),
    ]
    assert result.warnings == []
    sample = evidence[result.sample_id or ""]
    assert "CAST('NaN' AS DOUBLE)" in sample.sql and "CAST('Infinity' AS DOUBLE)" in sample.sql
    assert sample.rows == [[1.0, None], ["Infinity", None], ["NaN", None]]


def test_a_column_named_nan_is_never_read_for_a_nan_segment(tmp_path: Path) -> None:
    source = duckdb_source(
        tmp_path,
        "CREATE TABLE f(d DOUBLE, nan DOUBLE, v INT)",
        "INSERT INTO f VALUES ('nan'::DOUBLE, 3, NULL), ('nan'::DOUBLE, 4, NULL),"
        " (2.0, 2.0, NULL), (2.0, 5.0, 1)",
    )
    check = {"name": "c", "missing": {"table": "f", "column": "v", "by": "d"}, "expect": "<= 1"}
    results, evidence = run(source, check)
    result = results[0]
    assert segments(result) == [("2.0", P, 1, 2), ("nan", F, 2, 2)]
    sample = evidence[result.sample_id or ""]
    assert sample.rows == [["NaN", 3.0, None], ["NaN", 4.0, None]]  # never the 2.0 = nan row


def test_nan_has_no_literal_where_the_engine_has_no_nan() -> None:
    assert value_literal(float("nan"), "duckdb").sql("duckdb") == "CAST('NaN' AS DOUBLE)"
    assert value_literal(float("-inf"), "postgres").sql("postgres") == (
        "CAST('-Infinity' AS DOUBLE PRECISION)"
    )
    with pytest.raises(ValueError, match=r"^nan cannot be written as a literal in sqlite SQL$"):
        value_literal(float("nan"), "sqlite")


def test_numeric_nan_on_postgres_sorts_and_samples(empty_pg_url: str) -> None:
    with psycopg.connect(empty_pg_url.replace("+psycopg", "")) as conn:
        conn.execute("CREATE TABLE n(d numeric, x float8, v int)")
        conn.execute(
            "INSERT INTO n VALUES ('NaN', 'NaN', NULL), ('Infinity', 'Infinity', NULL),"
            " (1.5, 1.5, 1), ('-Infinity', '-Infinity', 1), (NULL, NULL, NULL)"
        )
    source = sqlalchemy_opener(empty_pg_url)(Limits())
    with source:
        results, evidence = run(
            source,
            {"name": "numeric", "missing": {"table": "n", "column": "v", "by": "d"}},
            {"name": "double", "missing": {"table": "n", "column": "v", "by": "x"}},
        )
    numeric, double = results
    assert (numeric.outcome, numeric.value) == (F, 3)
    assert segments(numeric) == [
        ("-Infinity", P, 0, 1),
        ("1.5", P, 0, 1),
        ("Infinity", F, 1, 1),
        ("NaN", F, 1, 1),
        ("NULL", F, 1, 1),
    ]
    assert segments(double) == [
        ("-inf", P, 0, 1),
        ("1.5", P, 0, 1),
        ("inf", F, 1, 1),
        ("nan", F, 1, 1),
        ("NULL", F, 1, 1),
    ]
    for result in (numeric, double):
        assert result.warnings == []
        rows = evidence[result.sample_id or ""].rows
        assert sorted(rows, key=str) == sorted(
            [["Infinity", "Infinity", None], ["NaN", "NaN", None], [None, None, None]], key=str
        )


def test_validity_per_segment(tmp_path: Path) -> None:
    source = duckdb_source(
        tmp_path,
        "CREATE TABLE people(region VARCHAR, email VARCHAR)",
        "INSERT INTO people VALUES ('EU', 'a@b.io'), ('EU', 'bad'), ('EU', NULL),"
        " ('US', 'c@d.com'), ('US', 'e@f.org')",
    )
    result = one(
        source,
        {"validity": {"table": "people", "column": "email", "format": "email", "by": "region"}},
    )
    assert (result.outcome, result.value) == (F, 1)
    assert segments(result) == [("EU", F, 1, 3), ("US", P, 0, 2)]
    assert result.segments is not None
    eu, us = ({k: s.metrics[k] for k in ("invalid", "null_values", "violations")}
              for s in result.segments.items)  # fmt: skip
    assert (eu, us) == (
        {"invalid": 1, "null_values": 1, "violations": 1},
        {"invalid": 0, "null_values": 0, "violations": 0},
    )
    assert describe_value(result) == (
        "1 of 2 segments by region failed: `EU`: 1 invalid and 1 NULL in 3 rows"
    )
