"""``compare`` on real engines: one DuckDB file, DuckDB against PostgreSQL, PostgreSQL against
MariaDB, SQLite against DuckDB; normal forms (scale, zones, trailing spaces, NULLs), the row
diff's depth and rows fetched, empty sides.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb
import pytest

from checks.automation.loader import load_automations
from checks.automation.model import Automation
from checks.declared.check import run_checks
from checks.declared.validation import validate_checks
from checks.kinds.compare import Compare
from checks.report import CheckOutcome, CheckResult, Evidence
from checks.settings.limits import Limits
from checks.settings.sources import SQLAlchemySource
from checks.sources import DuckDBQuerySource, Source, SQLQuerySource
from tests.checks.declared import compare_data

Opener = Any


@pytest.fixture(scope="module")
def duck(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Source]:
    path = compare_data.build_duckdb(tmp_path_factory.mktemp("compare") / "recon.duckdb")
    with DuckDBQuerySource("duck", path, Limits()) as source:
        yield source


@pytest.fixture(scope="module")
def pg() -> Iterator[Source]:
    from tests.conftest import scratch_pg_database

    with scratch_pg_database() as url:
        compare_data.build_postgres(url)
        with SQLQuerySource("pg", SQLAlchemySource(type="sqlalchemy", url=url), Limits()) as s:
            yield s


@pytest.fixture(scope="module")
def lite(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Source]:
    path = compare_data.build_sqlite(tmp_path_factory.mktemp("compare") / "recon.db")
    url = f"sqlite:///{path}"
    with SQLQuerySource("lite", SQLAlchemySource(type="sqlalchemy", url=url), Limits()) as s:
        yield s


@pytest.fixture(scope="module")
def maria(request: pytest.FixtureRequest) -> Iterator[Source]:
    server = request.getfixturevalue("mariadb_server")
    compare_data.build_mariadb(server.connect())
    url = server.url("reader", "recon")
    with SQLQuerySource("maria", SQLAlchemySource(type="sqlalchemy", url=url), Limits()) as s:
        yield s


def compare(
    left: Source, right: Source, *, limits: Limits | None = None, **block: Any
) -> tuple[CheckResult, dict[str, Evidence]]:
    """Run one ``compare`` of ``left``'s table with ``right``'s; its result and evidence by id."""
    block.setdefault("table", "ledger")
    block.setdefault("with", {"source": right.name, "table": "ledger_copy"})
    block.setdefault("key", ["id"])
    extra = {k: block.pop(k) for k in ("allow_empty", "expect") if k in block}
    automation = Automation.model_validate(
        {
            "name": "recon",
            "source": left.name,
            "goal": "The copy holds.",
            "checks": [{"name": "c", "compare": block, **extra}],
            "path": "inline.yaml",
            "line": 1,
        }
    )
    named = {left.name: left, right.name: right}
    results, evidence = run_checks(
        automation,
        left,
        limits or Limits(),
        deadline=time.monotonic() + 120,
        sources=named.__getitem__,
        source_names=list(named),
    )
    return results[0], {e.id: e for e in evidence}


ROWS = {
    "missing": 1,
    "extra": 1,
    "different": 1,
    "differences": 3,
    "missing_keys": "6",
    "extra_keys": "5",
    "different_keys": "4",
}
AGGREGATES = {
    "rows_in_scope": 5,
    "with_rows": 5,
    "aggregates_compared": 21,
    "differences": 4,
    "differing": (
        "id.sum: 15 vs 16; id.max: 5 vs 6; amount.sum: 21.7500 vs 22.7600;"
        " amount.min: 1.0000 vs 2.0000"
    ),
}


def pair(request: pytest.FixtureRequest, names: str) -> tuple[Source, Source]:
    left, right = names.split("-")
    return request.getfixturevalue(left), request.getfixturevalue(right)


PAIRS = [
    pytest.param("duck-duck", id="duckdb"),
    pytest.param("duck-pg", id="duckdb-postgres"),
    pytest.param("pg-duck", id="postgres-duckdb"),
    pytest.param("pg-maria", id="postgres-mariadb", marks=pytest.mark.mariadb),
    pytest.param("lite-duck", id="sqlite-duckdb"),
    pytest.param("duck-lite", id="duckdb-sqlite"),
]


@pytest.mark.parametrize("names", PAIRS)
def test_rows_finds_the_missing_the_extra_and_the_different(
    request: pytest.FixtureRequest, names: str
) -> None:
    left, right = pair(request, names)
    result, evidence = compare(left, right, columns=["amount", "status", "paid_at"])
    assert result.outcome is CheckOutcome.FAILED, result.error
    assert result.value == 3
    assert {k: result.metrics[k] for k in ROWS} == ROWS
    assert (result.metrics["rows_in_scope"], result.metrics["with_rows"]) == (5, 5)
    assert Compare.words(result) == (
        "1 missing (6), 1 extra (5), 1 different (4); 5 rows in table, 5 rows in with"
    )
    # every query ran through the sources and is evidence, in order
    assert list(evidence) == [f"C1.{n}" if n > 1 else "C1" for n in range(1, len(evidence) + 1)]
    assert result.metrics["queries"] == len(evidence)


@pytest.mark.parametrize("names", PAIRS)
def test_rows_equal_once_normalised(request: pytest.FixtureRequest, names: str) -> None:
    """Scale 2 against 4, +02:00 against UTC, 'new  ' against 'new', NULL against NULL."""
    left, right = pair(request, names)
    result, _ = compare(
        left,
        right,
        filter="id <= 3",
        **{"with": {"source": right.name, "table": "ledger_copy", "filter": "id <= 3"}},
    )
    assert result.outcome is CheckOutcome.PASSED, result.error
    assert {k: result.metrics[k] for k in ("missing", "extra", "different", "rows_in_scope")} == {
        "missing": 0,
        "extra": 0,
        "different": 0,
        "rows_in_scope": 3,
    }
    # a summary and one hashed level a side; a side hashed in Python reads its rows once
    queries = {"table in SQL, with in SQL": 4, "table in Python, with in SQL": 3}
    queries["table in SQL, with in Python"] = 3
    assert result.metrics["queries"] == queries[str(result.metrics["hashed"])]


@pytest.mark.parametrize("names", PAIRS)
def test_aggregates_compare_sums_at_the_larger_scale(
    request: pytest.FixtureRequest, names: str
) -> None:
    left, right = pair(request, names)
    result, evidence = compare(left, right, mode="aggregates", key=[])
    assert result.error is None
    assert {k: result.metrics[k] for k in AGGREGATES} == AGGREGATES
    assert result.outcome is CheckOutcome.FAILED
    assert len(evidence) == 2
    named = ["row_count", "id__count", "id__distinct", "id__sum", "id__min", "id__max"]
    for found in evidence.values():
        assert found.columns[:6] == named
        assert found.columns[6:9] == ["amount__count", "amount__distinct", "amount__sum"]


@pytest.mark.parametrize("names", PAIRS)
def test_counts(request: pytest.FixtureRequest, names: str) -> None:
    left, right = pair(request, names)
    result, evidence = compare(
        left,
        right,
        mode="counts",
        **{"with": {"source": right.name, "table": "ledger_copy", "filter": "id < 6"}},
    )
    assert (result.outcome, result.value) == (CheckOutcome.FAILED, 1)
    assert Compare.words(result) == "5 rows in table, 4 rows in with: 1 apart"
    assert [e.rows for e in evidence.values()] == [[[5]], [[4]]]


def test_both_sides_empty_is_not_evaluated(duck: Source, pg: Source) -> None:
    block = {"table": "empty_a", "with": {"source": "pg", "table": "empty_b"}}
    result, _ = compare(duck, pg, **block)
    assert result.outcome is CheckOutcome.NOT_EVALUATED
    assert result.reason == "0 rows on both sides: empty_a and pg.empty_b"
    allowed, _ = compare(duck, pg, allow_empty=True, **block)
    assert allowed.outcome is CheckOutcome.PASSED
    assert allowed.reason == "0 rows on both sides: empty_a and pg.empty_b (allowed: allow_empty)"


def test_one_side_empty_fails_with_every_row_extra(duck: Source, pg: Source) -> None:
    result, _ = compare(
        duck, pg, columns=["amount"], **{"with": {"source": "pg", "table": "empty_b"}}
    )
    assert result.outcome is CheckOutcome.FAILED
    assert (result.metrics["extra"], result.metrics["extra_keys"]) == (5, "1, 2, 3, 4, 5")
    many, _ = compare(
        duck,
        pg,
        table="series",
        columns=["amount"],
        **{"with": {"source": "pg", "table": "empty_b"}},
    )
    assert (many.metrics["extra"], many.metrics["missing"]) == (20_000, 0)
    assert many.metrics["extra_keys"] == "0, 1, 2, 3, 4, 5, 6, 7, 8, 9 and 19,990 more"
    assert Compare.words(many).startswith(
        "0 missing, 20,000 extra (0, 1, 2, 3, 4, 5, 6, 7, 8, 9 and 19,990 more), 0 different"
    )


def test_within_one_source(duck: Source) -> None:
    """``with.source`` left out: the check's own source."""
    result, _ = compare(duck, duck, columns=["amount"], **{"with": {"table": "ledger_copy"}})
    assert (result.metrics["missing_keys"], result.metrics["different_keys"]) == ("6", "4")


@pytest.mark.parametrize("key", [["id"], ["code", "id"]], ids=["integer-key", "compound-key"])
def test_bisects_only_the_ranges_that_differ(duck: Source, pg: Source, key: list[str]) -> None:
    """20,000 rows, 3 differences: a summary, two grouped levels and the leaves, a side."""
    result, evidence = compare(
        duck,
        pg,
        table="series",
        key=key,
        columns=["amount"],
        **{"with": {"source": "pg", "table": "series_copy"}},
    )
    assert result.error is None
    metrics = result.metrics
    assert (metrics["missing"], metrics["extra"], metrics["different"]) == (0, 1, 2)
    if key == ["id"]:
        assert (metrics["extra_keys"], metrics["different_keys"]) == ("19999", "7, 15000")
    else:
        assert metrics["extra_keys"] == "(k0, 19999)"
        assert metrics["different_keys"] == "(k0, 7), (k6, 15000)"
    # one level cuts the 20,000 rows in 32 ranges of about 625, the 3 that differ are read
    assert metrics["levels"] == 1
    assert metrics["rows_fetched"] == (3749 if key == ["id"] else 3589)
    # a summary, the grouped level and the leaves' rows on each side, then a sample each
    assert metrics["queries"] == len(evidence) == 8


def test_a_sample_of_each_difference_is_evidence(duck: Source, pg: Source) -> None:
    _, evidence = compare(duck, pg, columns=["amount", "status"])
    samples = [e for e in evidence.values() if "IN (" in e.sql]
    assert [e.rows for e in samples] == [
        [[4, "7.25", "lost"], [5, "1.00", "x"]],
        [[4, "7.2600", "lost"], [6, "2.0000", "y"]],
    ]


def test_unknown_columns_are_errors_at_their_field(duck: Source, pg: Source) -> None:
    result, _ = compare(duck, pg, columns=["amount", "statsu"])
    assert result.error == "no column 'statsu' in ledger (did you mean 'status'?)"
    result, _ = compare(duck, pg, key=["id"], **{"with": {"source": "pg", "table": "series"}})
    assert result.error == "no column 'status' in series (with: pg)"


def test_an_unknown_source_is_named_with_the_closest(duck: Source, pg: Source) -> None:
    result, _ = compare(duck, pg, **{"with": {"source": "pgg", "table": "ledger_copy"}})
    assert result.error == (
        "no source 'pgg' is configured (did you mean 'pg'?); configured: duck, pg"
    )


def test_a_side_hashed_in_python_says_so(duck: Source, lite: Source) -> None:
    result, evidence = compare(lite, duck, columns=["amount"])
    assert result.metrics["hashed"] == "table in Python, with in SQL"
    assert evidence["C1"].sql == 'SELECT "t"."id", "t"."amount" FROM "ledger" AS t'


def test_a_python_side_over_its_cap_is_an_error(duck: Source, lite: Source) -> None:
    result, _ = compare(lite, duck, limits=Limits(fingerprint_max_rows=3), columns=["amount"])
    assert result.outcome is CheckOutcome.ERROR
    assert result.error == (
        "table side (lite, sqlite) is hashed in Python and holds more than 3 rows"
        " (limits.fingerprint_max_rows)"
    )


VALIDATED = """\
name: recon
source: duck
goal: The copy holds.
checks:
  - name: typo in the source
    compare: {table: ledger, with: {source: pgg, table: ledger_copy}, key: [id]}
  - name: a column the other side lacks
    compare: {table: ledger, with: {source: pg, table: series}, key: [id], columns: [status]}
  - name: a key this side lacks
    compare: {table: ledger, with: {source: pg, table: ledger_copy}, key: [idd]}
  - name: a table the other side lacks
    compare: {table: ledger, with: {source: pg, table: ledger_cpy}, key: [id]}
  - name: fine
    compare: {table: ledger, with: {source: pg, table: ledger_copy}, key: [id]}
"""


def test_validate_places_each_side_s_mistake(tmp_path: Path, duck: Source, pg: Source) -> None:
    path = tmp_path / "recon.yaml"
    path.write_text(VALIDATED)
    loaded = load_automations(path, known_sources=["duck", "pg"])
    named = {"duck": duck, "pg": pg}
    found = validate_checks(
        loaded.automations[0],
        loaded,
        source=duck,
        dialect="duckdb",
        sources=named.__getitem__,
        source_names=list(named),
    )
    assert [(e.line, e.column, e.field, e.message) for e in found.errors] == [
        (
            6,
            45,
            "checks.0.compare.with.source",
            "no source 'pgg' is configured (did you mean 'pg'?); configured: duck, pg",
        ),
        (8, 86, "checks.1.compare.columns.0", "no column 'status' in series (with: pg)"),
        (10, 76, "checks.2.compare.key.0", "no column 'idd' in ledger (did you mean 'id'?)"),
        (
            12,
            56,
            "checks.3.compare.with.table",
            "no table 'ledger_cpy' in source pg (did you mean 'ledger_copy'?)",
        ),
    ]
    unopened = validate_checks(
        loaded.automations[0], loaded, source=None, dialect="duckdb", source_names=["duck", "pg"]
    )
    assert [e.field for e in unopened.errors] == ["checks.0.compare.with.source"]


def test_aggregates_evidence_names_a_quoted_column_safely(tmp_path: Path) -> None:
    path = tmp_path / "odd_names.duckdb"
    with duckdb.connect(str(path)) as db:
        for table, total in (("a", 3), ("b", 4)):
            db.execute(f'CREATE TABLE {table} (id INTEGER, "x"" OR 1=1" INTEGER)')
            db.execute(f"INSERT INTO {table} VALUES (1, 1), (2, {total - 1})")
    with DuckDBQuerySource("odd", path, Limits()) as odd:
        block = {"table": "a", "with": {"table": "b"}, "mode": "aggregates"}
        result, evidence = compare(odd, odd, **block)
    assert result.metrics["differing"] == 'x" OR 1=1.sum: 3 vs 4; x" OR 1=1.max: 2 vs 3'
    assert evidence["C1"].columns == [
        "row_count",
        'x" OR 1=1__count',
        'x" OR 1=1__distinct',
        'x" OR 1=1__sum',
        'x" OR 1=1__min',
        'x" OR 1=1__max',
    ]
