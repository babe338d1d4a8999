"""Whether a run may take its automation's pinned plan, and the report when it does.

``consult`` runs after the declared checks. The plan is taken — the run's
finding is the plan's (``PlanCheck.state``; ``checks.finding.decide`` decides),
``finding_source: pinned``, and no LLM is called — only
when all of these hold, checked in this order (the first that fails is the
reason the agent is asked again):

1. the run was not asked to be fresh (``lookout run --fresh``), and ops have
   not resolved a run as ``false_positive`` or ``expected`` since the last run
   (``checks.store.review_reads.resolutions_for_next_run``: the plan may be what
   they judged wrong);
2. the automation's deciding fields hash as they did (``checks.pinned.plan.definition_hash``);
3. with an LLM configured, the model asked would be the plan's model;
4. the plan is not older than ``repin_after`` (the automation's, else ``llm.repin_after``);
5. every declared check has the outcome it had when the plan was made, and
   the declared-check results the plan cites have the same fingerprints;
6. a Clear plan meets no failed, errored or not-evaluated declared check (never
   Clear against a failed check, whatever the plan says);
7. every pinned agent query (``Q…``), run again through the source's
   read-only layers, succeeds and returns a result with the same fingerprint.

Queries are run again only when 1–6 hold; all of them then run, so the agent
asked again is told everything that changed, not only the first difference.
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from checks.errors import LookoutError
from checks.finding import PlanState, PlanStatus, failing_checks
from checks.pinned.plan import definition_hash
from checks.report import Evidence, Finding, PinnedPlan, PinnedQuery, RunReport

if TYPE_CHECKING:
    from checks.report.ops_resolution import OpsResolution
    from checks.settings.limits import Limits
    from checks.sources import Source

FRESH = "a fresh run was asked for (--fresh)"


@dataclass
class PlanCheck:
    """What consulting the plan found.

    Attributes:
        plan: the plan consulted.
        used: the run takes the plan's finding.
        reason: why it does not (None when used).
        changes: one line per difference found (check outcomes, fingerprints,
            queries that now fail), in the plan's order.
        evidence: the pinned agent queries as they ran now, with the plan's ids
            (only the ones that succeeded).
    """

    plan: PinnedPlan
    used: bool = False
    reason: str | None = None
    changes: list[str] = field(default_factory=list)
    evidence: list[Evidence] = field(default_factory=list)

    def record(self, *, new_plan: bool = False) -> dict[str, Any]:
        """Return ``RunReport.pinning`` for this run (the shape is ``pinning_record``'s)."""
        return pinning_record(self.plan, self.used, self.reason, self.changes, new_plan=new_plan)

    def state(self) -> PlanState:
        """The plan's part in the finding (``checks.finding.decide``): taken, or why not.

        Taken, its summary is the plan's, then a line naming the run it came
        from; the finding's rule adds this run's declared checks.
        """
        if not self.used:
            return PlanState(PlanStatus.NOT_TAKEN, reason=self.reason)
        plan = self.plan
        when = plan.made_at.strftime("%Y-%m-%d %H:%M UTC")
        count = len(plan.queries)
        note = (
            f"*Pinned plan from run {plan.run_id}* ({plan.model}, {when}): its "
            f"{count} cited {'query' if count == 1 else 'queries'} and "
            "the declared checks returned what they did then, so its finding stands; the LLM "
            "was not asked."
        )
        return PlanState(PlanStatus.TAKEN, plan.finding, f"{plan.summary}\n\n{note}")


NO_PLAN = "no pinned plan yet"


def pinning_record(
    plan: PinnedPlan | None,
    used: bool,
    reason: str | None,
    changes: list[str],
    *,
    new_plan: bool,
) -> dict[str, Any]:
    """Return ``RunReport.pinning``, the ``pinning`` object of ``--json``.

    ``{used, from_run, model, made_at, finding, queries, reason, changes,
    new_plan}``: whether the run took the plan of run ``from_run`` (made by
    ``model`` at ``made_at``, finding ``finding``, resting on ``queries``), else
    why not and what changed; ``new_plan`` says this run's accepted report is
    now the plan. Without a plan ``from_run``, ``model``, ``made_at`` and
    ``finding`` are None and ``reason`` is ``no pinned plan yet``.
    """
    return {
        "used": used,
        "from_run": plan.run_id if plan else None,
        "model": plan.model if plan else None,
        "made_at": plan.made_at.isoformat() if plan else None,
        "finding": str(plan.finding) if plan else None,
        "queries": [q.id for q in plan.queries] if plan else [],
        "reason": reason if plan else NO_PLAN,
        "changes": list(changes),
        "new_plan": new_plan,
    }


def _days(seconds: float) -> str:
    days = seconds / 86400
    return f"{days:.1f} days" if days != int(days) else f"{int(days)} day{'s' if days != 1 else ''}"


def _short(fingerprint: str) -> str:
    return fingerprint[:12]


def _rows(n: int, exact: bool) -> str:
    text = f"{n:,} row{'' if n == 1 else 's'}"
    return text if exact else f"at least {text}"


def consult(
    plan: PinnedPlan,
    report: RunReport,
    source: Source,
    limits: Limits,
    *,
    repin_after_s: float,
    model: str | None,
    now: dt.datetime,
    fresh: bool = False,
    resolutions: Sequence[OpsResolution] = (),
    deadline: float | None = None,
) -> PlanCheck:
    """Decide whether ``report`` (its declared checks already run) takes ``plan``.

    Args:
        plan: the automation's pinned plan.
        report: this run, with ``checks``, ``evidence`` (the checks' ``C…``/``S…``)
            and ``definition`` filled in.
        source: the open source the pinned queries run on again.
        limits: the query budgets (rows kept, cells, the query time limit).
        repin_after_s: the oldest a plan may be, in seconds.
        model: the LLM model this run would ask, or None when no LLM is set.
        now: the time the run started (aware).
        fresh: the run was asked to ignore the plan.
        resolutions: ops' resolutions since the last run, newest first.
        deadline: ``time.monotonic()`` after which no query starts.

    Returns:
        the check; a query that fails, is refused or times out is a change
        (its error in ``changes``), never an exception.
    """
    check = PlanCheck(plan)
    if fresh:
        check.reason = FRESH
        return check
    if resolutions:
        latest = resolutions[0]
        check.reason = f"ops resolved run {latest.run_id} as {latest.reason} since the last run"
        return check
    if definition_hash(report.definition) != plan.definition_hash:
        check.reason = "the automation's definition changed since the plan was made"
        return check
    if model is not None and model != plan.model:
        check.reason = f"the plan was made by {plan.model}; this run would ask {model}"
        return check
    age_s = (now - plan.made_at).total_seconds()
    if age_s > repin_after_s:
        check.reason = f"the plan is {_days(age_s)} old; repin_after is {_days(repin_after_s)}"
        return check
    check.changes = _check_changes(plan, report)
    failing = [c.name for c in failing_checks(report.checks)]
    if not check.changes and plan.finding is Finding.CLEAR and failing:
        check.changes.append(f"the plan is Clear but declared check '{failing[0]}' did not pass")
    if check.changes:
        check.reason = "the declared checks differ from when the plan was made"
        return check
    for pinned in plan.replayed:
        ran = _run_again(pinned, source, limits, deadline)
        if isinstance(ran, str):
            check.changes.append(f"{pinned.id} failed now: {ran}")
            continue
        check.evidence.append(ran)
        if ran.fingerprint != pinned.fingerprint:
            check.changes.append(
                f"{pinned.id}'s result changed: {_rows(pinned.row_count, pinned.row_count_exact)}"
                f" when pinned, {_rows(ran.row_count, ran.row_count_exact)} now (fingerprint "
                f"{_short(pinned.fingerprint)} → {_short(ran.fingerprint)})"
            )
    if check.changes:
        check.reason = "a pinned query's result differs from when the plan was made"
        return check
    check.used = True
    return check


def _check_changes(plan: PinnedPlan, report: RunReport) -> list[str]:
    """Declared checks whose outcome moved, and cited check results whose fingerprint did."""
    changes = []
    now = {c.name: str(c.outcome) for c in report.checks}
    then = dict(plan.check_outcomes)
    for name, outcome in plan.check_outcomes:
        current = now.get(name)
        if current is None:
            changes.append(f"declared check '{name}' no longer ran")
        elif current != outcome:
            changes.append(f"declared check '{name}' was {outcome} when pinned, {current} now")
    changes += [f"declared check '{n}' is new" for n in now if n not in then]
    by_id = {e.id: e for e in report.evidence}
    for pinned in plan.queries:
        if pinned.replayed:
            continue
        current_ev = by_id.get(pinned.id)
        if current_ev is None:
            changes.append(f"{pinned.id} did not run now")
        elif current_ev.fingerprint != pinned.fingerprint or current_ev.sql != pinned.sql:
            changes.append(
                f"{pinned.id}'s result changed: {_rows(pinned.row_count, pinned.row_count_exact)}"
                f" when pinned, {_rows(current_ev.row_count, current_ev.row_count_exact)} now"
            )
    return changes


def _run_again(
    pinned: PinnedQuery, source: Source, limits: Limits, deadline: float | None
) -> Evidence | str:
    """Run one pinned query through ``source.query``; its evidence, or the error's text."""
    timeout_s = limits.query_timeout_s
    if deadline is not None:
        left = deadline - time.monotonic()
        if left <= 0:
            return "not run: the automation's time limit ran out"
        timeout_s = min(timeout_s, left)
    try:
        result = source.query(pinned.sql, max_rows=limits.max_rows, timeout_s=timeout_s)
    except LookoutError as exc:
        return str(exc)
    return Evidence.of_result(result, evidence_id=pinned.id, origin="pinned", limits=limits)
