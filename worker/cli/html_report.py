"""One stored run as a self-contained HTML file (``lookout show RUN --html FILE``).

For a ticket or an email: the report (finding, summary, facts), its declared
checks, each check's history chart and the evidence (each query and its rows,
at most ``ROWS_SHOWN`` a query, then "and N more rows"), in one file that
makes no request of its own: the review page's stylesheet is inlined, the
charts are inline SVG (``worker.web.chart``), and a Content-Security-Policy
meta tag (``default-src 'none'``, inline styles only) stops a browser from
loading anything even if something slipped through.

Every value is untrusted: the template autoescapes; the summary is the
review page's sanitised Markdown (``worker.web.markdown.render_summary``) in
its offline form, so an outside address is shown as text and never linked;
the only links are the citations to evidence inside the file. Each check's
result is one line of the same Markdown (a value in a code span is ``<code>``).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from importlib.resources import files
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape
from markupsafe import Markup

from checks.declared.wording import describe_value
from checks.report import CheckResult, Evidence, RunReport
from worker.review.history import CheckHistory
from worker.web.chart import history_chart
from worker.web.markdown import render_inline, render_summary

ROWS_SHOWN = 20
"""Rows of one query's evidence shown in the file; the rest is counted."""

LABELS = {
    "clear": "Clear",
    "needs_attention": "Needs attention",
    "error": "Error",
    "skipped": "Skipped",
    "completed": "Completed",
    "checks": "the declared checks",
    "agent": "the agent",
    "override": "the checks, overriding the agent",
    "pinned": "the pinned plan",
}

_ENV = Environment(
    loader=PackageLoader("worker.cli", "templates"),
    autoescape=select_autoescape(default=True, default_for_string=True),
    undefined=StrictUndefined,
    keep_trailing_newline=True,
)


def cell(value: Any) -> str:
    """One evidence cell as text: ``NULL`` for None, ``true``/``false``, else ``str``."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def more_rows(evidence: Evidence, shown: int) -> str:
    """``and 701 more rows`` (``at least`` when the count stopped), or ``""`` when all are shown."""
    left = evidence.row_count - shown
    if left <= 0:
        return ""
    bound = "" if evidence.row_count_exact else "at least "
    return f"and {bound}{left:,} more row{'' if left == 1 else 's'}"


def when(value: dt.datetime | None) -> str:
    """A time as ``2026-03-02 06:00 UTC``; ``—`` for None."""
    return value.astimezone(dt.UTC).strftime("%Y-%m-%d %H:%M UTC") if value else "—"


def opinion_words(opinion: dict[str, Any] | None) -> str:
    """The second opinion in one line: urgency, flags, the chance the goal is met, or its error.

    ``urgency act soon · flags: double check disagrees · goal met 12 %``; ``none — why``
    when it was not given; ``""`` when the run has none.
    """
    if not opinion:
        return ""
    if opinion.get("error") and opinion.get("goal_met") is None:
        return f"none — {str(opinion['error']).removeprefix('no second opinion: ')}"
    parts = []
    if opinion.get("urgency"):
        parts.append(f"urgency {str(opinion['urgency']).replace('_', ' ')}")
    flags = [str(f).replace("_", " ") for f in opinion.get("flags") or []]
    if flags:
        parts.append(f"flags: {', '.join(flags)}")
    goal_met = opinion.get("goal_met")
    if isinstance(goal_met, int | float):
        parts.append(f"goal met {goal_met:.0%}".replace("%", " %"))
    return " · ".join(parts)


def _check_row(check: CheckResult) -> dict[str, Any]:
    return {
        "check": check,
        "outcome": str(check.outcome),
        "result": Markup(render_inline(describe_value(check), links=False)),
        "metrics": [f"{k} {v}" for k, v in check.metrics.items()],
    }


def _evidence(evidence: Evidence) -> dict[str, Any]:
    rows = evidence.rows[:ROWS_SHOWN]
    return {
        "e": evidence,
        "rows": [[cell(v) for v in row] for row in rows],
        "more": more_rows(evidence, len(rows)),
    }


def html_report(
    report: RunReport, histories: Sequence[CheckHistory] = (), *, made_at: dt.datetime
) -> str:
    """The whole HTML document of one stored run (see the module).

    Args:
        report: the run, its secrets already redacted (``RunReport.clean_text``).
        histories: each check's history (``worker.review.history.histories_of_run``).
        made_at: when the file is made, said in its footer.
    """
    definition = report.definition
    charts = [
        (h, history_chart(h, f"chart-{i}") if h.points else None)
        for i, h in enumerate(histories, start=1)
    ]
    css = (files("worker.web") / "static" / "lookout.css").read_text(encoding="utf-8")
    template = _ENV.get_template("static_report.html")
    return template.render(
        r=report,
        d=definition,
        tags=[str(t) for t in definition.get("tags") or []],
        verdict=LABELS.get(str(report.finding or report.status), str(report.status)),
        verdict_class=f"finding-{report.finding}" if report.finding else f"status-{report.status}",
        opinion=opinion_words(report.second_opinion),
        decided_by=LABELS.get(str(report.finding_source or ""), ""),
        summary=Markup(render_summary(report.summary, links=False)),
        checks=[_check_row(c) for c in report.checks],
        charts=charts,
        evidence=[_evidence(e) for e in report.evidence],
        css=Markup(css.replace("</", "<\\/")),
        when=when,
        made_at=when(made_at),
    )
