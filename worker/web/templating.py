"""The Jinja2 environment of the pages: autoescape on everywhere, strict undefined, filters.

Everything a template prints is escaped unless it is the output of
``worker.web.markdown.render_summary`` (already sanitised), which the report
template marks safe explicitly, or a chart of ``worker.web.chart`` (the
``chart`` filter: SVG whose every text is escaped where it is built); no
other value is ever marked safe.
"""

from __future__ import annotations

import datetime as dt
import json
from typing import Any
from urllib.parse import urlencode

from jinja2 import Environment, PackageLoader, StrictUndefined
from starlette.templating import Jinja2Templates

from checks.agent.result import cost_text
from checks.fields.expectation import parse_expectation
from checks.kinds.in_words import duration
from worker.review import RESOLVE_LABELS, QuickFilter, ResolveReason
from worker.web.chart import history_chart
from worker.web.roles import can

LABELS: dict[str, str] = {
    "needs_attention": "Needs attention",
    "clear": "Clear",
    "completed": "Completed",
    "error": "Error",
    "skipped": "Skipped",
    "queued": "Queued",
    "running": "Running",
    "nothing_to_do": "Nothing to do",
    "worth_a_look": "Worth a look",
    "act_soon": "Act soon",
    "act_now": "Act now",
    "double_check_disagrees": "Double-check disagrees",
    "changed_since_last_run": "Changed since last run",
    "checks": "the declared checks",
    "agent": "the agent",
    "override": "the checks, overriding the agent",
    "pinned": "the pinned plan (the LLM was not asked)",
    "attention": "Needs attention",
    **{str(reason): label for reason, label in RESOLVE_LABELS.items()},
}

QUICK_LABELS: dict[QuickFilter, str] = {
    QuickFilter.NEEDS_ME: "Needs me",
    QuickFilter.DISAGREEMENTS: "Disagreements",
    QuickFilter.CHANGED: "Changed since last run",
    QuickFilter.UNREVIEWED: "Unreviewed",
    QuickFilter.DELIVERY_FAILED: "Delivery failed",
}


def label(value: Any) -> str:
    """Return the words for a status, finding, urgency, flag or reason (else the value)."""
    if value is None:
        return "—"
    return LABELS.get(str(value), str(value).replace("_", " "))


def when(value: dt.datetime | None) -> str:
    """Return a UTC time as ``2026-12-02 09:00 UTC`` (``—`` when None)."""
    if value is None:
        return "—"
    return value.astimezone(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")


def ago(value: dt.datetime | None, now: dt.datetime) -> str:
    """Return how long before ``now`` a time is, in words (``5 min ago``)."""
    if value is None:
        return "never"
    seconds = int((now - value).total_seconds())
    if seconds < 0:
        return "in the future"
    for size, unit in ((86_400, "d"), (3_600, "h"), (60, "min")):
        if seconds >= size:
            return f"{seconds // size} {unit} ago"
    return "just now"


def pct(value: float | None) -> str:
    """Return a probability as a percentage, ``92 %`` (``—`` when None)."""
    return "—" if value is None else f"{value * 100:.0f} %"


def cell(value: Any) -> str:
    """Return one evidence cell as text: ``NULL`` for None, JSON for lists and mappings."""
    if value is None:
        return "NULL"
    if isinstance(value, dict | list):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


def check_value(value: Any, expect: str) -> str:
    """Return a check's value as the terminal's report writes it.

    A duration (a ``freshness`` age, or an interval a query returns, compared
    with a duration such as ``< 3h``) reads ``3d 5h``
    (``checks.kinds.in_words.duration``); anything else as an evidence cell.
    """
    if (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and _unit(expect) == "duration"
    ):
        return duration(float(value))
    return cell(value)


def metric(value: Any, name: str) -> str:
    """Return one of a check's metrics: ``age_s`` as a duration, anything else as a cell."""
    if name == "age_s" and isinstance(value, int | float) and not isinstance(value, bool):
        return duration(float(value))
    return cell(value)


def _unit(expect: str) -> str | None:
    try:
        return parse_expectation(expect).unit
    except ValueError:
        return None


def pretty(value: Any) -> str:
    """Return a JSON value indented for reading."""
    return json.dumps(value, ensure_ascii=False, indent=2, default=str)


def query(params: dict[str, Any], **changes: Any) -> str:
    """Return ``?…`` for the list's URL with ``changes`` applied (None drops a key); "" if empty."""
    merged = {**params, **changes}
    pairs: list[tuple[str, str]] = []
    for key, value in merged.items():
        if value is None or value == "" or value == []:
            continue
        for item in value if isinstance(value, list | tuple) else [value]:
            pairs.append((key, str(item)))
    return "?" + urlencode(pairs) if pairs else ""


def agent_cost(agent: dict[str, Any]) -> str:
    """An agent's cost as the terminal shows it (``checks.agent.result.cost_text``)."""
    cost = agent.get("cost_usd")
    return cost_text(int(agent.get("steps") or 0), cost if isinstance(cost, int | float) else None)


def make_templates() -> Jinja2Templates:
    """Return the templates of ``worker/web/templates`` with the filters above."""
    env = Environment(
        loader=PackageLoader("worker.web", "templates"),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(
        label=label,
        when=when,
        pct=pct,
        cell=cell,
        check_value=check_value,
        metric=metric,
        pretty=pretty,
        agent_cost=agent_cost,
        chart=history_chart,
    )
    env.globals.update(
        ago=ago,
        can=can,
        query=query,
        QUICK_LABELS=QUICK_LABELS,
        REASONS=[(r.value, RESOLVE_LABELS[r]) for r in ResolveReason],
    )
    return Jinja2Templates(env=env)
