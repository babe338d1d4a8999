"""A pinned plan written as declared checks: the agent's exploration as YAML a team can commit.

``plan_as_yaml`` prints the automation as its file would hold it, its own
checks first, then one raw-SQL check per pinned agent query (``Q…``), each
expecting what the query returned when the plan was made:

- one row of one number: ``== value`` (exact; a float compares within one part
  in 10^10, as every check does);
- one row of one boolean: ``is true`` / ``is false``;
- no rows: ``empty``;
- anything else: the query wrapped as ``SELECT count(*) FROM (…)``, expecting
  the row count (``>=`` it when the count was only a lower bound).

Loaded back with ``checks.automation.loader`` and run on the same data, every
such check passes and every declared check keeps its outcome: they pass while
the data is as the plan saw it, and fail when a pinned query's result moves,
the same test the plan applies. They say "unchanged", not "right": for a plan
whose finding was Needs attention the header says to edit each ``expect`` to
what must hold before relying on the checks alone.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation
from typing import Any

import yaml

from checks.automation.model import Automation
from checks.report import Finding, PinnedPlan, PinnedQuery

LEFT_OUT = ("path", "line")
_SAFE_NAME = re.compile(r"[^A-Za-z0-9 _.-]")


def check_name(query: PinnedQuery, plan: PinnedPlan) -> str:
    """The name of the check made from one pinned query: ``pinned Q1 of run 12``."""
    return _SAFE_NAME.sub("-", f"pinned {query.id} of run {plan.run_id}")[:100]


def _number(value: Any) -> str | None:
    """The value as an exact number literal, or None when it is not a number."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, str):  # an exact decimal kept as text (checks.report.json_value)
        try:
            number = Decimal(value)
        except InvalidOperation:
            return None
        return value if number.is_finite() else None
    return None


def pinned_check(query: PinnedQuery, plan: PinnedPlan) -> dict[str, Any]:
    """The raw-SQL check (a mapping as in YAML) expecting what ``query`` returned then."""
    name = check_name(query, plan)
    single = query.row_count_exact and query.row_count == 1 and len(query.columns) == 1
    if single and query.rows:
        value = query.rows[0][0]
        if isinstance(value, bool):
            return {"name": name, "sql": query.sql, "expect": f"is {str(value).lower()}"}
        literal = _number(value)
        if literal is not None:
            return {"name": name, "sql": query.sql, "expect": f"== {literal}"}
    if query.row_count == 0 and query.row_count_exact:
        return {"name": name, "sql": query.sql, "expect": "empty", "allow_empty": True}
    counted = f"SELECT count(*) AS pinned_rows FROM (\n{query.sql.strip()}\n) AS pinned"
    op = "==" if query.row_count_exact else ">="
    return {"name": name, "sql": counted, "expect": f"{op} {query.row_count}"}


class _Dumper(yaml.SafeDumper):
    r"""Multi-line strings (SQL) as ``|`` blocks; everything else as safe_dump writes it.

    Dumped with ``allow_unicode=False``: control and bidirectional characters in
    the agent's SQL come out escaped (``\e``, ``\u202E``), never raw in a review.
    """


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _str)


def plan_as_yaml(plan: PinnedPlan, automation: Automation) -> str:
    """Return ``automation`` as YAML with the plan's queries added as declared checks.

    The automation's fields are the ones that differ from their defaults, at
    every level (no ``filter: null``, no ``timeout_s: 300.0``; durations in
    seconds, each check's ``expect`` as normalised), then ``checks``, so the
    text loads back as the same automation with more checks. A header of
    comments names the run, model and finding the plan came from.
    """
    definition = automation.model_dump(
        mode="json", by_alias=True, exclude=set(LEFT_OUT), exclude_defaults=True
    )
    checks = list(definition.get("checks") or [])
    checks += [pinned_check(q, plan) for q in plan.replayed]
    document = {k: v for k, v in definition.items() if k != "checks"} | {"checks": checks}
    when = plan.made_at.strftime("%Y-%m-%d %H:%M UTC")
    header = [
        f"# {automation.name}: the pinned plan of run {plan.run_id} ({plan.model}, {when})",
        f"# as declared checks. The plan's finding: {plan.finding}.",
        "# Each 'pinned' check expects what its query returned when the plan was made:",
        "# it passes while the data is as the plan saw it and fails when it moves.",
    ]
    if plan.finding is Finding.NEEDS_ATTENTION:
        header += [
            "# The plan found a problem: these checks record that state, they do not say",
            "# it is right. Edit each expect to what must hold before relying on them alone.",
        ]
    body = yaml.dump(document, Dumper=_Dumper, sort_keys=False, allow_unicode=False, width=100)
    return "\n".join(header) + "\n" + body
