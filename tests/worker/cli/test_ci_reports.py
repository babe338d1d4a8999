"""``lookout run --junit`` and ``--format github``: the cases, read back by junitparser."""

from __future__ import annotations

import datetime as dt
import shutil
from pathlib import Path
from xml.etree import ElementTree

import pytest
from junitparser import Error, Failure, JUnitXml, Skipped, TestCase, TestSuite

from checks.report import CheckOutcome, CheckResult, Finding, FindingSource, RunReport, Status
from checks.settings.config import Settings
from tests.cli_support import run_lookout
from tests.paths import ROOT
from tests.shipped import shipped_files
from tests.test_examples_data import EXAMPLES
from worker.cli.ci_runs import CiRun
from worker.cli.github import command, escape_data, escape_property, workflow_commands
from worker.cli.junit import junit_xml

START = dt.datetime(2026, 3, 2, 6, 0, tzinfo=dt.UTC)


def _check(name: str, outcome: CheckOutcome, **fields: object) -> CheckResult:
    base: dict[str, object] = {"sql": "SELECT count(*) FROM t", "expect": "== 0", "value": 0}
    return CheckResult(name=name, outcome=outcome, **{**base, **fields})  # type: ignore[arg-type]


def _report(checks: list[CheckResult], **fields: object) -> RunReport:
    base: dict[str, object] = {
        "automation": "orders",
        "scheduled_for": START,
        "status": Status.COMPLETED,
        "run_id": 7,
        "finding": Finding.NEEDS_ATTENTION,
        "finding_source": FindingSource.CHECKS,
        "started_at": START,
        "finished_at": START + dt.timedelta(seconds=1.25),
        "definition": {"source": "shop", "owner": "data-team", "severity": "high"},
    }
    return RunReport(checks=checks, **{**base, **fields})  # type: ignore[arg-type]


EVERY_OUTCOME = [
    _check("rows", CheckOutcome.PASSED, value=5, expect="> 0", kind="row_count"),
    _check(
        "emails",
        CheckOutcome.FAILED,
        value=1,
        kind="missing",
        metrics={"rows_in_scope": 4, "missing": 1, "compared": "missing"},
        evidence_id="C2",
        sample_id="S2",
    ),
    _check("broken", CheckOutcome.ERROR, value=None, error="returned NULL"),
    _check(
        "diana",
        CheckOutcome.NOT_EVALUATED,
        value=None,
        reason="0 rows in scope: orders where name = 'Diana'",
    ),
    _check("late", CheckOutcome.WARNED, value=3, expect="<= 5", warn="<= 1"),
    _check('<script>alert("x")</script> & \x07bell', CheckOutcome.FAILED, value=2),
]
LINES = {c.name: 10 + 5 * i for i, c in enumerate(EVERY_OUTCOME)}


def _parsed(tmp_path: Path, runs: list[CiRun]) -> JUnitXml:
    path = tmp_path / "out.xml"
    path.write_bytes(junit_xml(runs))
    return JUnitXml.fromfile(str(path))


def _cases(suite: TestSuite) -> list[TestCase]:
    return list(suite)


def test_each_outcome_is_its_junit_case(tmp_path: Path) -> None:
    run = CiRun(_report(EVERY_OUTCOME), "automations/orders.yaml", 1, LINES)
    xml = _parsed(tmp_path, [run])
    assert (xml.name, xml.tests, xml.failures, xml.errors, xml.time) == ("lookout", 6, 3, 1, 1.25)
    (suite,) = list(xml)
    assert (suite.name, suite.tests, suite.failures, suite.errors, suite.skipped) == (
        "orders", 6, 3, 1, 0,
    )  # fmt: skip
    assert (suite.time, suite.timestamp) == (1.25, "2026-03-02T06:00:00")
    root = ElementTree.parse(tmp_path / "out.xml").getroot()
    assert [s.get("file") for s in root] == ["automations/orders.yaml"]
    assert {p.name: p.value for p in suite.properties()} == {
        "run_id": "7",
        "status": "completed",
        "finding": "needs_attention",
        "finding_source": "checks",
        "source": "shop",
        "owner": "data-team",
        "severity": "high",
        "file": "automations/orders.yaml",
        "line": "1",
    }
    rows, emails, broken, diana, late, script = _cases(suite)
    assert [c.classname for c in (rows, emails)] == ["orders", "orders"]
    assert (rows.name, rows.is_passed, rows.system_out) == (
        "rows",
        True,
        "automations/orders.yaml:10",
    )
    (failure,) = emails.result
    assert isinstance(failure, Failure)
    assert (failure.type, failure.message) == (
        "failed",
        "failed: 1 of 4 rows missing (25.00 %) (expected == 0)",
    )
    assert failure.text.splitlines() == [
        "kind: missing",
        "expected: == 0",
        "rows_in_scope: 4",
        "missing: 1",
        "compared: missing",
        "evidence: C2",
        "evidence: S2",
        "sql: SELECT count(*) FROM t",
    ]
    (error,) = broken.result
    assert isinstance(error, Error)
    assert (error.type, error.message) == ("error", "error: returned NULL")
    (not_evaluated,) = diana.result
    assert isinstance(not_evaluated, Failure)
    assert (not_evaluated.type, not_evaluated.message) == (
        "not_evaluated",
        "not evaluated: 0 rows in scope: orders where name = 'Diana' (expected == 0)",
    )
    assert late.is_passed and late.result == []
    assert late.system_out.splitlines()[:2] == [
        "automations/orders.yaml:30",
        "warned: 3 (expected <= 5), beyond the warning level <= 1",
    ]
    assert script.name == '<script>alert("x")</script> & \ufffdbell'  # escaped, read back whole
    raw = (tmp_path / "out.xml").read_text(encoding="utf-8")
    assert "<script>" not in raw and "&lt;script&gt;alert(&quot;x&quot;)" in raw


def test_a_run_in_error_without_checks_is_one_error_case_and_a_skipped_goal_is_skipped(
    tmp_path: Path,
) -> None:
    failed = _report(
        [], status=Status.ERROR, finding=None, finding_source=None,
        error="source shop cannot be opened: no such file\nTraceback …",
    )  # fmt: skip
    skipped = _report(
        [], automation="goal-only", status=Status.SKIPPED, finding=None, finding_source=None,
        error="needs an LLM", started_at=None,
    )  # fmt: skip
    xml = _parsed(tmp_path, [CiRun(failed, "a.yaml", 3), CiRun(skipped, "b.yaml", 1)])
    assert (xml.tests, xml.failures, xml.errors) == (2, 0, 1)
    error_suite, skipped_suite = list(xml)
    (run,) = _cases(error_suite)
    (error,) = run.result
    assert isinstance(error, Error)
    assert (run.name, error.message) == ("run", "error: source shop cannot be opened: no such file")
    assert error.text == "source shop cannot be opened: no such file\nTraceback …"
    assert run.system_out == "a.yaml:3"
    (goal,) = _cases(skipped_suite)
    (skip,) = goal.result
    assert isinstance(skip, Skipped)
    assert (goal.name, skip.message, skipped_suite.skipped) == ("goal", "skipped: needs an LLM", 1)
    assert skipped_suite.timestamp is None


def test_the_agents_finding_is_a_case_of_its_own() -> None:
    clear = _report(
        [], finding=Finding.CLEAR, finding_source=FindingSource.AGENT, summary="All good."
    )
    attention = _report(
        [], finding_source=FindingSource.PINNED, summary="\n**Needs attention** — 3 late rows [Q1]."
    )
    from worker.cli.ci_runs import run_cases

    assert [(c.name, c.result, c.message) for c in run_cases(clear)] == [
        ("finding", "passed", "clear (agent): All good.")
    ]
    assert [(c.name, c.result, c.message) for c in run_cases(attention)] == [
        ("finding", "failure", "needs attention (pinned): **Needs attention** — 3 late rows [Q1].")
    ]


def test_github_escapes_as_the_toolkit_does() -> None:
    assert escape_data("50 % done\r\nnext") == "50 %25 done%0D%0Anext"
    assert escape_property("a:b,c%\n") == "a%3Ab%2Cc%25%0A"
    assert command("error", "m", {}) == "::error::m"
    assert (
        command("warning", "\x1b[31mred\x00", {"title": "\x07"})
        == "::warning title=\ufffd::\ufffd[31mred\ufffd"
    )
    nasty = CiRun(
        _report([_check("x,y::error::z\n::warning::w", CheckOutcome.FAILED, value=1)]),
        "automations/o,rders.yaml",
        1,
        {"x,y::error::z\n::warning::w": 9},
    )
    assert workflow_commands([nasty]) == [
        "::error file=automations/o%2Crders.yaml,line=9,"
        "title=orders%3A x%2Cy%3A%3Aerror%3A%3Az%0A%3A%3Awarning%3A%3Aw::failed: 1 (expected == 0)"
    ]


def test_github_annotates_each_case_that_did_not_pass_at_its_line() -> None:
    run = CiRun(_report(EVERY_OUTCOME), "automations/orders.yaml", 1, LINES)
    assert workflow_commands([run]) == [
        "::error file=automations/orders.yaml,line=15,title=orders%3A emails"
        "::failed: 1 of 4 rows missing (25.00 %25) (expected == 0)",
        "::error file=automations/orders.yaml,line=20,title=orders%3A broken::error: returned NULL",
        "::error file=automations/orders.yaml,line=25,title=orders%3A diana"
        "::not evaluated: 0 rows in scope: orders where name = 'Diana' (expected == 0)",
        "::warning file=automations/orders.yaml,line=30,title=orders%3A late"
        "::warned: 3 (expected <= 5), beyond the warning level <= 1",
        '::error file=automations/orders.yaml,line=35,title=orders%3A <script>alert("x")</script>'
        " & \ufffdbell::failed: 2 (expected == 0)",
    ]


@pytest.mark.slow
def test_run_all_on_the_bundled_data_writes_one_suite_per_automation(
    tmp_path: Path, flights_settings: Settings
) -> None:
    folder = tmp_path / "automations"
    folder.mkdir()
    for path in shipped_files():
        shutil.copy(path, folder / path.name)
    env = {
        "PATH": "/usr/bin:/bin",
        "LOOKOUT_STORE_URL": f"sqlite:///{tmp_path}/lookout.db",
        "LOOKOUT_CACHE_DIR": flights_settings.cache_dir,
    }
    config = str(ROOT / "config" / "lookout.yaml")
    args = ["--config", config, "run", "--all", "--junit", "out.xml", "--format", "github"]
    proc = run_lookout(args, env, cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr  # Needs attention
    assert f"junit: {len(EXAMPLES)} test suites written to out.xml" in proc.stderr
    xml = JUnitXml.fromfile(str(tmp_path / "out.xml"))
    got = {s.name: (s.tests, s.failures, s.errors, s.skipped) for s in xml}
    expected = {
        e.automation: (
            len(e.passed) or 1,
            sum(not ok for ok in e.passed.values()),
            0,
            0 if e.finding else 1,
        )
        for e in EXAMPLES
    }
    assert got == expected
    assert (xml.tests, xml.failures, xml.errors) == (39, 11, 0)
    suite = next(s for s in xml if s.name == "flights-arrival-completeness")
    assert [(c.name, c.system_out) for c in suite] == [
        ("arrived flights without arr_delay", "automations/flights-arrival-completeness.yaml:16"),
        (
            "arrived flights without air_time by carrier",
            "automations/flights-arrival-completeness.yaml:21",
        ),
        (
            "departed flights without arr_time per carrier",
            "automations/flights-arrival-completeness.yaml:29",
        ),
    ]
    stop, resume, *errors = [line for line in proc.stdout.splitlines() if line.startswith("::")]
    assert stop == f"::stop-commands::{resume[2:-2]}" and len(resume) == 36
    assert len(errors) == 11 and all(
        line.startswith("::error file=automations/") for line in errors
    )
    assert errors[0] == (
        "::error file=automations/flights-arrival-completeness.yaml,line=16,"
        "title=flights-arrival-completeness%3A arrived flights without arr_delay"
        "::failed: 717 of 328,063 rows missing (0.22 %25) (expected == 0)"
    )


def test_github_annotations_and_json_lines_are_not_mixed(tmp_path: Path) -> None:
    env = {"PATH": "/usr/bin:/bin", "LOOKOUT_STORE_URL": f"sqlite:///{tmp_path}/lookout.db"}
    proc = run_lookout(["run", "--all", "--json", "--format", "github"], env, cwd=tmp_path)
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr == "error: --format github prints the reports as text: leave out --json\n"
    proc = run_lookout(["run", "--all", "--format", "yaml"], env, cwd=tmp_path)
    assert proc.returncode == 2 and "'yaml' is not one of 'text', 'json', 'github'" in proc.stderr


@pytest.mark.slow
def test_a_bad_file_is_an_error_case_at_its_line_and_column(
    tmp_path: Path, flights_settings: Settings
) -> None:
    folder = tmp_path / "automations"
    folder.mkdir()
    shutil.copy(ROOT / "automations" / "flights-carrier-integrity.yaml", folder)
    (folder / "broken.yaml").write_text(
        "name: broken\nsource: flights\nchecks:\n  - name: rows\n    row_count: {table: t}\n"
        "    expect: '== 1'\n    exepct: '== 2'\n",
        encoding="utf-8",
    )
    env = {
        "PATH": "/usr/bin:/bin",
        "LOOKOUT_STORE_URL": f"sqlite:///{tmp_path}/lookout.db",
        "LOOKOUT_CACHE_DIR": flights_settings.cache_dir,
        "LOOKOUT_AUTOMATIONS_DIR": "automations",
    }
    config = str(ROOT / "config" / "lookout.yaml")
    args = ["--config", config, "run", "--all", "--junit", "out.xml", "--format", "github"]
    proc = run_lookout(args, env, cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr  # a bad file, with --all
    xml = JUnitXml.fromfile(str(tmp_path / "out.xml"))
    problems, good = list(xml)
    assert (problems.name, problems.tests, problems.errors) == ("configuration", 1, 1)
    assert (good.name, good.tests, good.failures, good.errors) == (
        "flights-carrier-integrity",
        3,
        0,
        0,
    )
    (case,) = list(problems)
    (error,) = case.result
    assert (case.name, error.type) == ("automations/broken.yaml:7:5", "config_error")
    assert error.message.startswith("automations/broken.yaml:7:5: checks.0.exepct: ")
    _, _, line = [line for line in proc.stdout.splitlines() if line.startswith("::")]
    assert line.startswith(
        "::error file=automations/broken.yaml,line=7,col=5,title=configuration"
        "::automations/broken.yaml:7:5: checks.0.exepct: "
    )
