"""Terminal rendering: Markdown summaries that data cannot hijack, and grids that never cut."""

from __future__ import annotations

import datetime as dt
import io
import re

import pytest
from rich.cells import cell_len

from checks.report import (
    CheckOutcome,
    CheckResult,
    Evidence,
    Finding,
    FindingSource,
    RunReport,
    Status,
)
from worker.cli.layout import Column, Grid
from worker.cli.render import agent_line, print_report, print_runs, totals_line
from worker.cli.safe_text import SafeConsole, print_markdown

SGR = re.compile(r"\x1b\[[0-9;]*m")  # the styles Rich itself writes


def terminal(width: int) -> tuple[SafeConsole, io.StringIO]:
    buffer = io.StringIO()
    console = SafeConsole(
        file=buffer, width=width, force_terminal=True, color_system="truecolor", highlight=False
    )
    return console, buffer


HOSTILE = (
    "**Needs attention** — [bold red]X[/] and [link=http://evil.example]y[/link]\n\n"
    "- cell: \x1b[2J\x1b]52;c;cHduZWQ=\x07 and \x1b]8;;http://evil.example\x1b\\label\x1b]8;;\x1b\\\n"
    "- <script>alert(1)</script> [click here](http://evil.example/steal) "
    "![pixel](http://evil.example/p.png)\n\n"
    "<div>hidden?</div>\n"
)


def test_markdown_from_data_cannot_inject_markup_escapes_or_hidden_links() -> None:
    console, buffer = terminal(100)
    print_markdown(console, HOSTILE)
    raw = buffer.getvalue()
    assert "\x1b" not in SGR.sub("", raw), repr(raw)  # no escape but Rich's own styles
    assert "\x07" not in raw
    shown = SGR.sub("", raw)
    assert "Needs attention" in shown and "**" not in shown  # Markdown rendered
    assert "[bold red]X[/]" in shown and "[link=http://evil.example]y[/link]" in shown
    assert "␛[2J" in shown  # the escape is shown as a visible symbol
    assert "click here" in shown and "(http://evil.example/steal)" in shown  # the address shows
    assert "<script>alert(1)</script>" in shown and "<div>hidden?</div>" in shown  # not dropped


def report(**fields: object) -> RunReport:
    base = RunReport(
        automation="probe",
        scheduled_for=dt.datetime(2026, 3, 8, 7, 0, tzinfo=dt.UTC),
        status=Status.COMPLETED,
        run_id=12,
        finding=Finding.NEEDS_ATTENTION,
        finding_source=FindingSource.CHECKS,
    )
    for key, value in fields.items():
        setattr(base, key, value)
    return base


def test_a_report_says_each_problem_once_and_null_as_null() -> None:
    check = CheckResult("n", "SELECT a, b FROM t", "empty", 2, CheckOutcome.FAILED, None, "C1")
    broken = CheckResult(
        "m", "SELECT NULL", "== 0", None, CheckOutcome.ERROR, "returned NULL", "C2"
    )
    rows = [["x", None], ["y", 2]]
    evidence = [Evidence("C1", "SELECT a, b FROM t", ["a", "b"], rows, 2, False, "f")]
    console, buffer = terminal(80)
    run = report(
        status=Status.ERROR,
        checks=[check, broken],
        evidence=evidence,
        error="check 'm': returned NULL",
        summary="**Error** — 1 of 2 checks in error; 1 failed.\n\n"
        "- FAILED: **n** — 2 rows (expected empty) [C1]\n- ERROR: **m** — returned NULL [C2]",
    )
    print_report(console, run)
    shown = SGR.sub("", buffer.getvalue())
    assert shown.count("returned NULL") == 1
    lines = shown.splitlines()
    assert [line.split() for line in lines if line.startswith("      ")] == [
        ["a", "b"],
        ["x", "NULL"],
        ["y", "2"],
    ]
    assert "None" not in shown


def test_agent_line_never_shows_a_cost_for_no_call() -> None:
    failed = {"model": "m", "steps": 0, "tool_calls": 0, "cost_usd": 0.0}  # the endpoint failed
    assert agent_line(failed) == (
        "agent: m · 0 steps · 0 tool calls · 0 in / 0 out tokens · no model call completed"
    )
    unknown = {"model": "m", "steps": 2, "tool_calls": 2, "input_tokens": 1200, "cost_usd": None}
    assert agent_line(unknown) == (
        "agent: m · 2 steps · 2 tool calls · 1,200 in / 0 out tokens · "
        "cost unknown (no usage.cost sent; see llm.prices_usd_per_mtok)"
    )
    assert agent_line({**unknown, "cost_usd": 0.0012}).endswith(
        "· 1,200 in / 0 out tokens · $0.0012"
    )


def test_eval_shows_the_cost_as_the_terminal_does() -> None:
    from checks.eval.scoring import Expected, RunOutcome, score_case
    from worker.cli.eval import _case_cost

    def case(*outcomes: RunOutcome) -> str:
        return _case_cost(score_case("c", Expected("clear", True), outcomes))

    failed = RunOutcome("c", 1, "error", None, agent=True, steps=0, cost_usd=0.0)
    fine = RunOutcome("c", 2, "completed", "clear", agent=True, steps=2, cost_usd=None)
    priced = RunOutcome("c", 3, "completed", "clear", agent=True, steps=2, cost_usd=0.002)
    assert case(failed) == "no call"  # not $0.0000
    assert case(fine) == "unknown" and case(failed, fine) == "unknown"
    assert case(priced, failed) == "$0.0020"
    assert case(RunOutcome("c", 1, "completed", "clear")) == "—"  # no agent ran


def test_eval_summary_says_no_call_completed_rather_than_a_zero_cost() -> None:
    from types import SimpleNamespace

    from checks.eval.scoring import Expected, RunOutcome, score_runs
    from worker.cli.eval import summary_lines

    failed = RunOutcome("c", 1, "error", None, agent=True, steps=0, cost_usd=0.0)
    result = SimpleNamespace(
        scorecard=score_runs({"c": Expected("clear", True)}, [failed]),
        decision_backend="none",
        elapsed_s=0.034,
    )
    lines = summary_lines(result)  # type: ignore[arg-type]
    [agent] = [line for line in lines if line.startswith("Agent:")]
    assert agent == (
        "Agent: 1 run, 0 steps, 0 tool calls, 0 in / 0 out tokens, no model call completed."
    )
    assert lines[-1] == "Took 34 ms."  # as a run's duration is written; was "Took 0.0 s."


def test_totals_count_each_outcome_once() -> None:
    runs = [
        report(finding=Finding.CLEAR),
        report(),
        report(),
        report(status=Status.SKIPPED, finding=None),
        report(status=Status.ERROR, finding=None),
    ]
    assert totals_line(runs, 4.06) == (
        "5 runs: 1 Clear, 2 Needs attention, 1 in error, 1 skipped · 4.1 s"
    )
    assert totals_line(runs[:1], 0.2) == "1 run: 1 Clear · 200 ms"


def test_the_totals_line_shows_a_fast_invocation_in_milliseconds() -> None:
    clear = report(finding=Finding.CLEAR)
    assert totals_line([clear], 0.012) == "1 run: 1 Clear · 12 ms"  # was "· 0.0 s"
    assert totals_line([clear, clear], 125.3) == "2 runs: 2 Clear · 2 min 05 s"


def timed(run_id: int, automation: str, took_s: float | None, **fields: object) -> RunReport:
    """A stored run that started at its slot and took ``took_s`` seconds (None: never finished)."""
    slot = dt.datetime(2026, 3, 8, 7, 0, tzinfo=dt.UTC)
    finished = None if took_s is None else slot + dt.timedelta(seconds=took_s)
    return report(
        run_id=run_id, automation=automation, started_at=slot, finished_at=finished, **fields
    )


def test_reports_shows_how_long_each_run_took_a_fast_one_in_milliseconds() -> None:
    console, buffer = terminal(80)
    clear = {"finding": Finding.CLEAR}
    print_runs(
        console,
        [
            timed(6, "orders-daily", 0.012, **clear),
            timed(5, "orders-daily", 0.0003, **clear),
            timed(4, "orders-daily", 0.4, **clear),
            timed(3, "refunds-weekly", 3.24),
            timed(2, "refunds-weekly", 125.0),
            timed(1, "refunds-weekly", None, status=Status.RUNNING, finding=None),
        ],
    )
    assert SGR.sub("", buffer.getvalue()).splitlines() == [
        "run  automation      scheduled for (UTC)  result                 took  note",
        "  6  orders-daily    2026-03-08 07:00     Clear                 12 ms",
        "  5  orders-daily    2026-03-08 07:00     Clear                < 1 ms",
        "  4  orders-daily    2026-03-08 07:00     Clear                400 ms",
        "  3  refunds-weekly  2026-03-08 07:00     Needs attention       3.2 s",
        "  2  refunds-weekly  2026-03-08 07:00     Needs attention  2 min 05 s",
        "  1  refunds-weekly  2026-03-08 07:00     Running",
    ]


PERCENT_SUMMARY = (
    "**Needs attention** — 2 failed of 2 checks.\n\n"
    "- FAILED: **arrived flights without arr_delay** — 717 of 328,063 rows missing "
    "(0.22 %) (expected == 0) [C1, S1]\n"
    "- FAILED: **departed flights without dep_delay** — 8,255 of 336,776 rows "
    "missing (< 0.01 %) (expected == 0) [C2]\n"
)


def test_a_percent_is_never_parted_from_its_value_at_80_columns() -> None:
    console, buffer = terminal(80)
    print_report(console, report(summary=PERCENT_SUMMARY), usual_decider="checks")
    assert SGR.sub("", buffer.getvalue()).splitlines() == [
        "probe — Needs attention · run 12 · 2026-03-08 07:00 UTC",
        "Needs attention — 2 failed of 2 checks.",
        "",
        " • FAILED: arrived flights without arr_delay — 717 of 328,063 rows missing",
        "   (0.22 %) (expected == 0) [C1, S1]",  # was "…missing (0.22" then "%) …"
        " • FAILED: departed flights without dep_delay — 8,255 of 336,776 rows missing",
        "   (< 0.01 %) (expected == 0) [C2]",  # was "…missing (<" then "0.01 %) …"
        "",
    ]


def test_a_note_in_the_runs_table_never_parts_a_duration_from_its_unit() -> None:
    console, buffer = terminal(80)
    error = (
        "check 'late deliveries per region': the query ran past its time limit of 30 s "
        "and was stopped"
    )
    print_runs(console, [timed(7, "orders", 30.4, status=Status.ERROR, finding=None, error=error)])
    assert SGR.sub("", buffer.getvalue()).splitlines() == [
        "run  automation  scheduled for (UTC)  result    took  note",
        "  7  orders      2026-03-08 07:00     Error   30.4 s  check 'late deliveries per",
        "                                                      region': the query ran",
        "                                                      past its time limit of",
        "                                                      30 s and was stopped",  # not 30 / s
    ]


def grid() -> Grid:
    g = Grid([Column("id", title=True), Column("name", title=True), Column("note", flex=True)])
    g.add_row("1", "short", "a note long enough to need wrapping when the room is small")
    g.add_row("22", "a-much-longer-name-that-is-kept-whole", "")
    return g


@pytest.mark.parametrize(
    ("width", "form"),
    [(120, "columns"), (70, "columns"), (50, "below"), (30, "stacked")],
)
def test_a_grid_picks_the_first_form_that_fits(width: int, form: str) -> None:
    console, buffer = terminal(width)
    grid().print(console)
    lines = SGR.sub("", buffer.getvalue()).splitlines()
    assert all(cell_len(line) <= width for line in lines if "longer-name" not in line)
    assert any("a-much-longer-name-that-is-kept-whole" in line for line in lines)
    if form == "columns":
        assert lines[0].split() == ["id", "name", "note"]
        assert lines[1].startswith("1   short") and "a note" in lines[1]
    elif form == "below":
        assert lines[0].split() == ["id", "name"]
        assert lines[2].startswith("    a note long enough")
    else:
        assert lines[0] == "1  short"
        assert lines[1].startswith("    note: a note")


def test_grid_cells_are_text_never_markup() -> None:
    console, buffer = terminal(80)
    g = Grid([Column("name")])
    g.add_row("[bold]x[/bold] \x1b[31m")
    g.print(console)
    shown = buffer.getvalue()
    assert "[bold]x[/bold] ␛[31m" in SGR.sub("", shown)
    assert "\x1b[31m" not in shown


def test_the_decider_line_leaves_pinned_plans_out_only_when_none_can_decide() -> None:
    from checks.settings.config import Settings
    from worker.cli.render import decider_line

    no_llm = "No LLM is configured: "
    plain = no_llm + ("the declared checks decide each run, and goal-only automations are skipped.")
    pins = no_llm + (
        "a pinned plan whose evidence holds decides a run, else the declared checks do; "
        "a goal-only automation with no such plan is skipped."
    )
    assert decider_line(Settings()) == pins
    assert decider_line(Settings(), fresh=True) == plain
    assert decider_line(Settings.model_validate({"llm": {"pin_plans": False}})) == plain
    llm = {"base_url": "http://127.0.0.1:8099/v1", "model": "fake"}
    agent = Settings.model_validate({"llm": llm})
    assert decider_line(agent) == (
        "A pinned plan whose evidence holds decides a run, else the agent does (fake at "
        "http://127.0.0.1:8099/v1); a Clear never stands against a failed declared check, "
        "and the checks decide when the agent gives no valid report."
    )
    alone = (
        "The agent decides each run (fake at http://127.0.0.1:8099/v1); a Clear never stands "
        "against a failed declared check, and the checks decide when it gives no valid report."
    )
    assert decider_line(agent, fresh=True) == alone
    assert decider_line(Settings.model_validate({"llm": {**llm, "pin_plans": False}})) == alone


def test_the_headline_wraps_before_its_date_time_at_80_columns() -> None:
    """The new user's header: the time never ends up alone on the next line."""
    console, buffer = terminal(80)
    run = report(
        automation="flights-no-early-departures",
        scheduled_for=dt.datetime(2026, 12, 2, 2, 37, tzinfo=dt.UTC),
        run_id=16,
        finding=Finding.CLEAR,
        summary="**Clear** — all 4 checks passed.",
    )
    print_report(console, run)
    assert SGR.sub("", buffer.getvalue()).splitlines()[:3] == [
        "flights-no-early-departures — Clear (decided by checks) · run 16 ·",
        "2026-12-02 02:37 UTC",
        "Clear — all 4 checks passed.",
    ]
