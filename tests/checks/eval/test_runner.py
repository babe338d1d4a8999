"""``lookout eval``: the shipped suite, the suite loader's errors, the runner and its output.

The deterministic path runs the real shipped suite with no LLM; the agent path
runs a few shipped cases against the project's fake LLM (real HTTP), scripted
per case.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import struct
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from checks.eval.case_data import build_database, case_settings
from checks.eval.runner import (
    default_suite_path,
    outcome_from_report,
    probability_of_yes,
    run_eval,
    urgency_choice,
)
from checks.eval.suite import SuiteError, load_suite
from checks.fakes.decision_server import FakeDecision
from checks.fakes.llm_server import FakeLLM
from checks.report import RunReport, Status
from checks.run import SourcePool, run_automation
from checks.settings.config import Settings
from checks.settings.decision import DecisionSettings
from checks.settings.llm import LLMSettings
from worker.cli.eval import register

SHIPPED = load_suite(default_suite_path())


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(cache_dir=str(tmp_path / "cache"))


def make_app(settings: Settings) -> typer.Typer:
    app = typer.Typer(add_completion=False)

    @app.callback()
    def options(ctx: typer.Context) -> None:
        """The real CLI puts its Context here; eval needs only ``settings()``."""
        ctx.obj = SimpleNamespace(settings=lambda: settings)

    register(app)
    return app


# -- the shipped suite ------------------------------------------------------------------


TRAPS = {  # each trap the shipped suite must hold
    "invoice paid after exactly 30 days": "invoice-paid-on-day-30",
    "exactly 5% cancelled": "cancelled-exactly-5-percent",
    "average 499.50 against 500": "average-499-50-below-500",
    "chargeback among refunds": "chargeback-among-refunds",
    "placeholder email n/a": "placeholder-email-na",
    "NULLs in a denominator": "nulls-in-denominator",
    "empty table": "empty-table",
    "filter matching no rows": "filter-matches-no-rows",
    "duplicates as rows versus keys": "duplicates-rows-versus-keys",
    "NOT IN over a NULL": "not-in-over-null",
    "UTC against another time zone": "utc-timestamps-new-york-limit",
    "0.1 + 0.2": "decimal-sum-point-one-point-two",
    "injection in a cell value": "injection-in-cell-value",
    "injection in a column name": "injection-in-column-name",
}


def test_the_shipped_suite_holds_every_trap_and_says_why() -> None:
    ids = {c.id for c in SHIPPED.cases}
    assert len(SHIPPED.cases) >= 24
    assert set(TRAPS.values()) <= ids
    for case in SHIPPED.cases:
        assert len(case.why.split()) >= 15, case.id
        assert case.automation.checks or case.verify, f"{case.id}: nothing proves its answer"
    findings = [c.answer.finding for c in SHIPPED.cases]
    assert findings.count("clear") >= 10 and findings.count("needs_attention") >= 10


@pytest.mark.slow
def test_every_shipped_case_with_checks_gives_its_answer_without_an_llm(
    settings: Settings,
) -> None:
    result = run_eval(SHIPPED, settings, runs=2, concurrency=4)
    by_case = {c.id: c for c in SHIPPED.cases}
    for outcome in result.outcomes:
        case = by_case[outcome.case_id]
        if case.automation.checks:
            assert (outcome.status, outcome.finding, outcome.finding_source) == (
                "completed",
                case.answer.finding,
                "checks",
            ), outcome
        else:  # goal-only: skipped, not wrong
            assert (outcome.status, outcome.finding) == ("skipped", None), outcome
    overall = result.scorecard.overall
    with_checks = sum(1 for c in SHIPPED.cases if c.automation.checks)
    assert overall["scored"] == overall["correct"] == 2 * with_checks
    assert overall["accuracy"] == 1.0
    assert overall["skipped"] == 2 * (len(SHIPPED.cases) - with_checks)
    assert overall["agreement"]["rate"] == 1.0
    assert overall["agent"]["runs"] == 0 and result.scorecard.decision.answers == 0


@pytest.mark.slow
def test_goal_only_cases_are_proved_by_their_verify_checks(settings: Settings) -> None:
    for case in [c for c in SHIPPED.cases if not c.automation.checks]:
        case_config = case_settings(settings, build_database(case, settings.cache_dir))
        with SourcePool(case_config) as pool:
            report = run_automation(case.reference_automation(), case_config, pool)
        assert (report.status, report.finding) == (Status.COMPLETED, case.answer.finding), case.id


ANOMALY_CASES = {
    # case: (outcome, value, score rounded to 2 places or None, baseline size, reason)
    "anomaly-volume-spike": ("failed", 180, 29.79, 28, None),
    "anomaly-volume-drop": ("failed", 40, -22.25, 28, None),
    "anomaly-volume-normal-day": ("passed", 102, 0.80, 28, None),
    "anomaly-constant-baseline": (
        "failed",
        51,
        None,
        14,
        "constant baseline (all 14 points are 50): any change is an anomaly",
    ),
    "anomaly-too-little-history": ("not_evaluated", 103, None, 3, "3 of 7 points of history"),
    "anomaly-quiet-sunday": ("passed", 21, 1.22, 4, None),
}


@pytest.mark.slow
def test_the_anomaly_cases_are_right_for_the_stated_reason(settings: Settings) -> None:
    cases = {c.id: c for c in SHIPPED.cases if c.id in ANOMALY_CASES}
    assert set(cases) == set(ANOMALY_CASES)
    for case_id, (outcome, value, score, size, reason) in ANOMALY_CASES.items():
        case = cases[case_id]
        assert case.at == dt.datetime(2026, 11, 30, 12, 0, tzinfo=dt.UTC)
        case_config = case_settings(settings, build_database(case, settings.cache_dir))
        with SourcePool(case_config) as pool:
            report = run_automation(case.automation, case_config, pool, scheduled_for=case.at)
        (check,) = report.checks
        found = check.anomaly
        assert found is not None and check.buckets is not None, case_id
        assert check.buckets.tested_start == "2026-11-29T00:00:00+00:00", case_id
        got_score = None if found.score is None else round(found.score, 2)
        assert (check.outcome, check.value, got_score) == (outcome, value, score), case_id
        assert (found.baseline_size, check.reason) == (size, reason), case_id
    sunday = [v for _, v in found.baseline]
    assert sunday == [20.0, 21.0, 19.0, 20.0]  # the four Sundays before, not the weekdays


# -- suite file errors ------------------------------------------------------------------

GOOD_CASE = """\
  - id: tiny
    why: One row of 3 is below 5, so the goal holds.
    tables:
      t:
        columns: {n: INTEGER}
        rows: [[3]]
    automation:
      goal: Every n is below 5.
      checks:
        - {name: big n, sql: SELECT n FROM t WHERE n >= 5, expect: empty}
    answer: {finding: clear}
"""


@dataclass(frozen=True)
class BadSuite:
    name: str
    text: str
    where: str  # expected "line:column: field" (or "line: field"), after the path
    message: str


BAD_SUITES = [
    BadSuite(
        "bad expect",
        GOOD_CASE.replace("expect: empty", "expect: about 3"),
        "11:68: cases.0.automation.checks.0.expect",
        "cannot read expect 'about 3'",
    ),
    BadSuite(
        "unknown case field",
        GOOD_CASE.replace("    answer:", "    anwser: {finding: clear}\n    answer:"),
        "12:5: cases.0.anwser",
        "unknown field 'anwser'",
    ),
    BadSuite(
        "unknown automation field",
        GOOD_CASE.replace("      goal:", "      schedule: '* * * * *'\n      goal:"),
        "9:7: cases.0.automation.schedule",
        "unknown field 'schedule'",
    ),
    BadSuite(
        "a slot time without a zone",
        GOOD_CASE.replace("    answer:", "    at: 2026-11-30 12:00:00\n    answer:"),
        "12:9: cases.0.at",
        "at needs a time zone, e.g. 2026-11-30T12:00:00Z",
    ),
    BadSuite(
        "wrong finding",
        GOOD_CASE.replace("finding: clear", "finding: green"),
        "12:23: cases.0.answer.finding",
        "input should be 'clear' or 'needs_attention'",
    ),
    BadSuite(
        "unquoted type with a comma",
        GOOD_CASE.replace("{n: INTEGER}", "{n: DECIMAL(10,2)}"),
        "6:18: cases.0.tables.t.columns",
        "quote a type holding one",
    ),
    BadSuite(
        "row too short",
        GOOD_CASE.replace("rows: [[3]]", "rows: [[3], []]"),
        "7:15: cases.0.tables.t.rows",
        "row 1 has 0 values; the table has 1 columns",
    ),
    BadSuite(
        "duplicate case id",
        GOOD_CASE + GOOD_CASE,
        "13:9: cases.1.id",
        "duplicate case id 'tiny' (first on line 2)",
    ),
    BadSuite("not YAML", GOOD_CASE.replace("rows: [[3]]", "rows: [[3]"), "8:5", "not valid YAML"),
]


@pytest.mark.parametrize("bad", BAD_SUITES, ids=lambda b: b.name)
def test_a_bad_suite_file_is_located(bad: BadSuite, tmp_path: Path, settings: Settings) -> None:
    path = tmp_path / "suite.yaml"
    path.write_text("cases:\n" + bad.text, encoding="utf-8")
    with pytest.raises(SuiteError) as caught:
        load_suite(path)
    messages = [p.location_message() for p in caught.value.problems]
    assert any(m.startswith(f"{path}:{bad.where}: ") and bad.message in m for m in messages), (
        messages
    )
    result = CliRunner().invoke(make_app(settings), ["eval", str(path)])
    assert result.exit_code == 2
    assert f"error: {path}:{bad.where}" in result.stderr


def test_an_empty_suite_file(tmp_path: Path) -> None:
    path = tmp_path / "empty.yaml"
    path.write_text("# nothing\n", encoding="utf-8")
    with pytest.raises(SuiteError, match="expected 'cases:' with a list of cases"):
        load_suite(path)


def test_a_failing_setup_script_is_located_at_build_time(
    tmp_path: Path, settings: Settings
) -> None:
    path = tmp_path / "suite.yaml"
    broken = GOOD_CASE.replace(
        "    automation:", "    setup: CREATE TABLE u AS SELEC 1\n    automation:"
    )
    path.write_text("cases:\n" + broken, encoding="utf-8")
    result = CliRunner().invoke(make_app(settings), ["eval", str(path)])
    assert result.exit_code == 2
    assert re.search(rf"error: {re.escape(str(path))}:8: setup: .*syntax error", result.stderr)


def test_a_setup_script_cannot_reach_files(tmp_path: Path, settings: Settings) -> None:
    path = tmp_path / "suite.yaml"
    leak = GOOD_CASE.replace(
        "    automation:", f"    setup: COPY t TO '{tmp_path}/leak.csv'\n    automation:"
    )
    path.write_text("cases:\n" + leak, encoding="utf-8")
    result = CliRunner().invoke(make_app(settings), ["eval", str(path)])
    assert result.exit_code == 2 and "setup" in result.stderr
    assert not (tmp_path / "leak.csv").exists()


def test_an_unknown_case_id_is_a_config_error(settings: Settings) -> None:
    result = CliRunner().invoke(make_app(settings), ["eval", "--cases", "empty-table,nope"])
    assert result.exit_code == 2
    assert "no case 'nope' in the suite" in result.stderr


# -- the command's output ---------------------------------------------------------------


def png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG signature"
    assert data[12:16] == b"IHDR" and data[-8:-4] == b"IEND"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


@pytest.mark.slow
def test_json_output_and_the_reliability_png(tmp_path: Path, settings: Settings) -> None:
    plot = tmp_path / "out" / "reliability.png"
    args = ["eval", "--runs", "2", "--json", "--plot", str(plot), "--concurrency", "2"]
    args += ["--cases", "empty-table,amounts-in-cents,weekend-without-shipments"]
    result = CliRunner().invoke(make_app(settings), args)
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert set(doc) == {
        "suite", "runs_per_case", "llm_model", "decision_backend", "elapsed_s",
        "overall", "decision", "cases", "runs", "plot", "recalibration",
    }  # fmt: skip
    assert [r["passed"] for r in doc["recalibration"]] == [True] * 4
    assert doc["suite"]["name"] == "default" and doc["runs_per_case"] == 2
    # no decision model, no answers: no diagram (an empty one would look like a result)
    assert (doc["llm_model"], doc["decision_backend"], doc["plot"]) == (None, "none", None)
    assert [c["case_id"] for c in doc["cases"]] == [
        "empty-table",
        "amounts-in-cents",
        "weekend-without-shipments",
    ]
    first = doc["cases"][0]
    assert first["findings"] == ["needs_attention", "needs_attention"] and first["agree"] is True
    assert doc["cases"][2]["findings"] == ["skipped", "skipped"]
    overall = doc["overall"]
    assert (overall["runs"], overall["scored"], overall["correct"]) == (6, 4, 4)
    assert overall["agreement"] == {"cases_compared": 2, "cases_agreeing": 2, "rate": 1.0}
    decision = doc["decision"]
    assert (decision["answers"], decision["brier"], decision["ece"]) == (0, None, None)
    assert len(decision["bins"]) == 10
    assert [(r["case_id"], r["run"]) for r in doc["runs"]][:2] == [
        ("empty-table", 1),
        ("empty-table", 2),
    ]
    assert not plot.exists()


def test_text_output_names_every_figure(tmp_path: Path, settings: Settings) -> None:
    plot = tmp_path / "r.png"
    args = ["eval", "--cases", "not-in-over-null,test-accounts-excepted", "--plot", str(plot)]
    result = CliRunner().invoke(make_app(settings), args)
    assert result.exit_code == 0, result.output
    for text in (
        "not-in-over-null",
        "needs_attention",
        "skipped",
        "Finding accuracy: 1/1 runs (100%); 1 skipped (need an LLM), 0 in error.",
        "Repeated runs agree: — (needs --runs 2 or more)",
        "Decision model: no answers (backend none).",
        "Reliability diagram: not written (no decision-model answers to draw).",
        "lookout eval — default: 2 cases × 1 run ·",
        "Recalibration on ops' verdicts: 4/4 cases as expected",
        "overconfident-goal-met (goal_met, 240 labelled): ECE 0.235 → 0.071",
    ):
        assert text in result.stdout, text
    assert not plot.exists()


@pytest.mark.slow
def test_the_reliability_png_is_written_when_the_decision_model_answered(
    tmp_path: Path, settings: Settings
) -> None:
    plot = tmp_path / "r.png"
    step = {"answers": {"goal_met": 0.8, "same_as_last_run": 0.9}}
    with FakeDecision("systemone", default=step) as fake:
        settings.decision = DecisionSettings(
            backend="systemone", base_url=fake.base_url, model="fake-decision"
        )
        args = ["eval", "--cases", "empty-table,amounts-in-cents", "--plot", str(plot)]
        result = CliRunner().invoke(make_app(settings), args)
    assert result.exit_code == 0, result.output
    assert "Decision model ('goal met?', 2 answers" in result.stdout
    assert f"Reliability diagram: {plot}" in result.stdout
    assert png_size(plot) == (600, 650)


# -- reading reports ----------------------------------------------------------------------


def test_second_opinion_and_agent_counters_are_read_from_the_report() -> None:
    report = RunReport(
        automation="x",
        scheduled_for=dt.datetime(2024, 7, 1, tzinfo=dt.UTC),
        status=Status.COMPLETED,
    )
    report.agent = {"model": "m", "steps": 3, "tool_calls": 4, "input_tokens": 900,
                    "output_tokens": 50, "cost_usd": 0.002, "error": None}  # fmt: skip
    report.second_opinion = {  # the shape of checks.opinion.second_opinion.SecondOpinion.to_dict()
        "backend": "systemone", "goal_met": 0.8, "same_as_last_run": None,
        "urgency": "act_soon", "urgency_probabilities": {"act_soon": 0.7}, "flags": [],
        "error": None, "input_tokens": 1500, "output_tokens": 3, "cost_usd": 0.0007,
    }  # fmt: skip
    outcome = outcome_from_report("x", 1, report, 1.23456)
    assert (outcome.agent, outcome.steps, outcome.input_tokens, outcome.cost_usd) == (
        True,
        3,
        900,
        0.002,
    )
    assert (outcome.p_goal_met, outcome.urgency, outcome.duration_s) == (0.8, "act_soon", 1.235)
    assert (outcome.decision_input_tokens, outcome.decision_cost_usd) == (1500, 0.0007)
    report.second_opinion = {"goal_met": {"probability": 0.3}, "urgency": {"choice": "Act now"}}
    other = outcome_from_report("x", 2, report, 0.0)
    assert (other.p_goal_met, other.urgency) == (0.3, "act_now")
    assert probability_of_yes(0.25) == 0.25
    assert probability_of_yes({"noul": 1}) == 1.0
    for invalid in (None, True, 1.5, -0.1, "0.9", {"answer": 0.9}, {"probability": None}):
        assert probability_of_yes(invalid) is None, invalid
    assert urgency_choice({"choice": "worth-a-look"}) == "worth_a_look"
    assert urgency_choice(None) is None and urgency_choice("  ") is None


# -- the agent path, against the fake LLM -----------------------------------------------


def scripted_agent(
    answers: dict[str, list[str]],
) -> tuple[Callable[[dict[str, Any]], dict[str, Any]], dict[str, int]]:
    """A fake-LLM step per conversation: query once, then submit one of the case's answers.

    ``answers`` maps a case id to the findings its runs submit, one per run: a
    conversation takes the next unused one on its first call and carries its
    index in the id of its query's tool call. Every call reports 100 prompt and
    10 completion tokens costing $0.001 and waits 50 ms; the very first call
    waits (up to 5 s) until a second one is in flight, so runs asked together
    overlap however loaded the machine is, and runs asked one after another
    never do. ``peak["in_flight"]`` records the most calls at once.
    """
    lock = threading.Lock()
    started: dict[str, int] = {}
    peak = {"now": 0, "in_flight": 0, "calls": 0}
    overlapped = threading.Event()
    usage = {"prompt_tokens": 100, "completion_tokens": 10, "cost": 0.001}

    def step(body: dict[str, Any]) -> dict[str, Any]:
        match = re.search(r"^Automation: (\S+)", body["messages"][1]["content"], re.M)
        assert match
        case = match.group(1)
        with lock:
            peak["now"] += 1
            peak["calls"] += 1
            peak["in_flight"] = max(peak["in_flight"], peak["now"])
            if peak["now"] >= 2:
                overlapped.set()
            first = peak["calls"] == 1
        if first:
            overlapped.wait(timeout=5)
        time.sleep(0.05)
        with lock:
            peak["now"] -= 1
            calls = [c for m in body["messages"] for c in m.get("tool_calls") or []]
            if not calls:  # a new conversation: run the query
                index = started[case] = started.get(case, 0) + 1
                query = {"name": "execute_query", "arguments": {"sql": "SELECT 1 AS one"}}
                return {"tool_calls": [{**query, "id": f"answer_{index}"}], "usage": usage}
        finding = answers[case][int(calls[0]["id"].removeprefix("answer_")) - 1]
        summary = f"Scripted answer for {case}: {finding} [Q1]."
        submit = {"finding": finding, "summary": summary, "evidence": ["Q1"], "confidence": "high"}
        return {"tool_calls": [{"name": "submit_report", "arguments": submit}], "usage": usage}

    return step, peak


@pytest.mark.slow
def test_the_agent_path_is_scored_with_its_steps_tokens_and_cost(settings: Settings) -> None:
    answers = {
        "injection-in-cell-goal-only": ["needs_attention", "needs_attention"],  # right twice
        "weekend-without-shipments": ["needs_attention", "clear"],  # right once: disagree
        "amounts-in-cents": ["clear", "clear"],  # with checks: the agent agrees with them
    }
    step, peak = scripted_agent(answers)
    with FakeLLM(default=step) as fake:
        llm = LLMSettings(base_url=fake.base_url, model="fake-model", max_retries=0)
        result = run_eval(
            SHIPPED,
            settings.model_copy(update={"llm": llm}),
            runs=2,
            case_ids=list(answers),
            concurrency=3,
        )
    assert result.llm_model == "fake-model"
    cases = {c.case_id: c for c in result.scorecard.cases}
    injection, weekend, cents = (cases[k] for k in answers)
    assert (injection.correct, injection.scored, injection.agree) == (2, 2, True)
    assert (weekend.correct, weekend.scored, weekend.agree) == (1, 2, False)
    assert sorted(weekend.findings) == ["clear", "needs_attention"]
    assert (cents.correct, cents.finding_sources) == (2, ["agent"])
    for case in (injection, weekend, cents):
        assert (case.agent_runs, case.steps_mean, case.tool_calls_mean) == (2, 2, 2)
        assert (case.input_tokens_mean, case.output_tokens_mean) == (200, 20)
        assert case.cost_usd == pytest.approx(0.004)
    overall = result.scorecard.overall
    assert (overall["scored"], overall["correct"]) == (6, 5)
    assert overall["accuracy"] == pytest.approx(5 / 6)
    assert overall["agreement"] == {"cases_compared": 3, "cases_agreeing": 2, "rate": 2 / 3}
    assert overall["agent"]["steps"] == 12 and overall["agent"]["input_tokens"] == 1200
    assert overall["agent"]["cost_usd"] == pytest.approx(0.012)
    assert len(fake.chat_requests) == 12
    assert 2 <= peak["in_flight"] <= 3  # runs overlap, within the bound


def test_an_unreachable_llm_falls_back_to_checks_or_errors(settings: Settings) -> None:
    llm = LLMSettings(base_url="http://127.0.0.1:9/v1", model="m", max_retries=0, timeout_s=2)
    result = run_eval(
        SHIPPED,
        settings.model_copy(update={"llm": llm}),
        case_ids=["empty-table", "test-accounts-excepted"],
    )
    by_case = {o.case_id: o for o in result.outcomes}
    assert by_case["empty-table"].finding_source == "checks"
    assert by_case["empty-table"].finding == "needs_attention"
    assert by_case["test-accounts-excepted"].status == "error"
    overall = result.scorecard.overall
    assert (overall["scored"], overall["correct"], overall["errors"]) == (2, 1, 1)
