"""What is wrong in one line: the first problem check, the run's error, the agent's words."""

from __future__ import annotations

from checks.report import CheckOutcome, CheckResult
from worker.review.what_is_wrong import MAX_CHARS, first_paragraph, what_is_wrong


def check(name: str, outcome: CheckOutcome, **fields: object) -> CheckResult:
    base: dict[str, object] = {"value": None, "error": None}
    if outcome is CheckOutcome.PASSED:
        base.update(value=0)
    sql = str(fields.pop("sql", "SELECT 1"))
    expect = str(fields.pop("expect", "empty"))
    return CheckResult(name, sql, expect, **{**base, **fields}, outcome=outcome)  # type: ignore[arg-type]


def test_the_first_failed_or_unseen_check_by_position_with_its_value_and_expectation() -> None:
    checks = [
        check("ok", CheckOutcome.PASSED),
        check("orphans", CheckOutcome.FAILED, value=721, expect="empty"),
        check("share", CheckOutcome.FAILED, value=0.0245, expect="< 0.01"),
    ]
    assert what_is_wrong("completed", "needs_attention", None, "", checks) == (
        "orphans: 721 rows (expected empty) (+1 more)"
    )
    missing = check(
        "emails",
        CheckOutcome.NOT_EVALUATED,
        kind="missing",
        reason="0 rows in scope: customers where year = 1999",
        metrics={"missing": 0, "rows_in_scope": 0},
        expect="<= 1 %",
    )
    assert what_is_wrong("completed", "needs_attention", None, "", [missing]) == (
        "emails: not evaluated: 0 rows in scope: customers where year = 1999"
    )
    typed = check(
        "emails",
        CheckOutcome.FAILED,
        kind="missing",
        value=2.5,
        metrics={"missing": 25, "rows_in_scope": 1000},
        expect="<= 1 %",
    )
    assert what_is_wrong("completed", "needs_attention", None, "", [typed]) == (
        "emails: 25 of 1,000 rows missing (2.50 %) (expected <= 1 %)"
    )


def test_a_run_in_error_says_its_checks_error_else_its_own() -> None:
    checks = [
        check("share", CheckOutcome.FAILED, value=0.0245, expect="< 0.01"),
        check("nope", CheckOutcome.ERROR, error="Binder Error: column nope not found"),
    ]
    assert what_is_wrong("error", None, "check 'nope': …", "", checks) == (
        "nope: error: Binder Error: column nope not found (+1 more)"
    )
    timeout = "hard time limit of 360 s reached"
    assert what_is_wrong("error", None, timeout, "**Error** — x", []) == f"error: {timeout}"
    assert what_is_wrong("skipped", None, "the source was down", "", []) == (
        "skipped: the source was down"
    )


def test_the_agents_finding_reads_as_its_summarys_first_paragraph_without_markdown() -> None:
    summary = "**2 readings** are above 100 °F [Q1].\n\n<script>x</script>\n\nMore."
    assert what_is_wrong("completed", "needs_attention", None, summary, []) == (
        "2 readings are above 100 °F [Q1]."
    )
    assert first_paragraph("# Late `loads`\nsee [the runbook](https://x.example)") == ("Late loads")
    assert first_paragraph("<b>raw</b> html stays text") == "<b>raw</b> html stays text"
    assert what_is_wrong("completed", "needs_attention", None, "", []) == "needs attention"


def test_clear_has_nothing_wrong_and_a_long_line_is_cut_to_one_line() -> None:
    assert what_is_wrong("completed", "clear", None, "**Clear**", []) is None
    huge = check("big", CheckOutcome.FAILED, value="x\n" * 400, sql="SELECT v", expect="> 0")
    line = what_is_wrong("completed", "needs_attention", None, "", [huge, huge])
    assert line is not None and MAX_CHARS - 2 <= len(line) <= MAX_CHARS and "\n" not in line
    assert line.endswith("… (+1 more)") and line.startswith("big: x x x")
