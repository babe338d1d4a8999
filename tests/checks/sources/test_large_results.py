"""A huge result is read and hashed up to ``fingerprint_max_rows``; its count says "at least"."""

import io
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import duckdb

from checks.automation.model import Automation
from checks.clock import utcnow
from checks.declared.check import run_checks
from checks.report import Evidence, RunReport, Status
from checks.settings.limits import Limits
from checks.sources.base import collect, row_digest
from checks.sources.duckdb_source import DuckDBQuerySource
from checks.store.store import Store
from tests.stored_reports import store_report
from worker.cli import render
from worker.cli.render import SafeConsole


def test_ten_million_rows_are_not_fetched_for_the_fingerprint() -> None:
    conn = duckdb.connect()
    cur = conn.cursor()
    cur.execute("SELECT range AS n FROM range(10000000)")
    fetched = 0

    def fetchmany(size: int) -> Sequence[Sequence[Any]]:
        nonlocal fetched
        batch = cur.fetchmany(size)
        fetched += len(batch)
        return batch

    result = collect(
        fetchmany,
        sql="SELECT range AS n FROM range(10000000)",
        columns=["n"],
        max_rows=50,
        scan_rows=1_000,
        started=time.monotonic(),
        timeout_s=30,
    )
    assert fetched == 1_001  # the scan cap + 1, to know it goes on
    assert (result.row_count, result.scan_capped, result.row_count_exact) == (1_001, True, False)
    assert len(result.rows) == 50 and result.truncated
    whole = collect(
        _batches([(n,) for n in range(1_000)]),
        sql="x",
        columns=["n"],
        max_rows=50,
        scan_rows=1_000,
        started=time.monotonic(),
        timeout_s=30,
    )
    assert (whole.row_count, whole.row_count_exact) == (1_000, True)
    assert result.fingerprint == whole.fingerprint  # the same first 1,000 rows were hashed


def _batches(rows: list[tuple[int]]) -> Any:
    left = list(rows)

    def fetchmany(size: int) -> list[tuple[int]]:
        taken, left[:] = left[:size], left[size:]
        return taken

    return fetchmany


def test_row_digest_is_the_documented_sha256_of_the_canonical_text() -> None:
    import hashlib

    text = "1\x1f'a'\x1f\\N\x1f1.5\x1fTrue"
    expected = int.from_bytes(hashlib.sha256(text.encode()).digest(), "big")
    assert row_digest((1, "a", None, 1.5, True)) == expected


def test_a_lower_bound_is_marked_in_the_evidence_the_store_and_the_terminal(
    tmp_path: Path,
) -> None:
    path = tmp_path / "big.duckdb"
    with duckdb.connect(str(path)) as conn:
        conn.execute("CREATE TABLE events AS SELECT range AS id FROM range(5000)")
    limits = Limits(fingerprint_max_rows=1_000)
    with DuckDBQuerySource("big", path, limits) as source:
        capped = source.query("SELECT id FROM events")
        checks = [{"name": "no events", "sql": "SELECT id FROM events", "expect": "empty"}]
        automation = Automation.model_validate(
            {"name": "a", "source": "big", "goal": "g", "checks": checks, "path": "a", "line": 1}
        )
        _, declared = run_checks(automation, source, limits, deadline=time.monotonic() + 30)
    assert (capped.row_count, capped.row_count_exact) == (1_001, False)
    # a declared check listing rows counts them all in SQL: its count is exact
    assert [(e.row_count, e.row_count_exact) for e in declared] == [(5_000, True)]
    rows, _ = capped.jsonable(max_cell_chars=200, max_result_chars=20_000)
    evidence = [
        Evidence("Q1", capped.sql, capped.columns, rows, capped.row_count, True,
                 capped.fingerprint, "agent", capped.row_count_exact),
        declared[0],
    ]  # fmt: skip
    store = Store(f"sqlite:///{tmp_path / 'store.db'}")
    report = RunReport(
        automation="a", scheduled_for=utcnow(), status=Status.COMPLETED, evidence=evidence
    )
    run_id = store_report(store, report)
    stored = store.get_run(run_id)
    assert stored is not None
    assert [(e.row_count, e.row_count_exact) for e in stored.evidence] == [
        (1_001, False),
        (5_000, True),
    ]
    assert [e["row_count_exact"] for e in stored.to_dict()["evidence"]] == [False, True]
    store.close()
    shown = io.StringIO()
    render.print_report(SafeConsole(file=shown, width=200), stored, full=True)
    assert "[Q1] at least 1,001 rows" in shown.getvalue()
