"""One run of one automation, in-process: source → declared checks → agent → finding → report.

This is the single path every trigger takes (``lookout run``, the Celery task,
``lookout eval``), inside their one lifecycle (``checks.run_lifecycle``). It
never raises for a problem of the run itself: a source that cannot open, a
check in error or a goal nobody can decide ends in a report with status
``error`` or ``skipped`` — never Clear.

With an LLM configured, the agent (``checks.agent.loop``) runs after the declared
checks; what it said, once verified, the checks' outcomes and the pinned plan's
state go to one rule, ``checks.finding.decide``, which decides the finding: the
agent's report, or the declared checks when it gives no valid one.
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from checks.agent.trace import MemoryTrace, TraceSink
from checks.automation.model import Automation
from checks.clock import utcnow
from checks.declared.anomaly import HISTORY_READ, History, Point
from checks.declared.check import run_checks
from checks.declared.scan_budget import (
    Budgeted,
    declared_statements,
    estimate_checks,
    refusal,
    scanned_entry,
)
from checks.declared.schema_changes import RecordedSchemas
from checks.errors import SourceError
from checks.finding import (
    NO_PLAN,
    AgentAnswer,
    Decision,
    PlanState,
    PlanStatus,
    RunFacts,
    decide,
)
from checks.opinion.backends import make_decision_model
from checks.opinion.evidence_diff import evidence_key
from checks.opinion.second_opinion import second_opinion
from checks.pinned.consult import PlanCheck, consult, pinning_record
from checks.report import CheckOutcome, PinnedPlan, RunReport, Status
from checks.report.ops_resolution import OpsResolution
from checks.settings.config import Settings, redact
from checks.sources.base import Source
from checks.sources.pool import SourcePool as SourcePool
from checks.store.opinion_reads import OpinionInputs, opinion_inputs
from checks.store.plans import current_plan
from checks.store.review_reads import resolutions_for_next_run
from checks.store.store import Store

Progress = Callable[[str], None]


def llm_configured(settings: Settings) -> bool:
    """Whether an LLM endpoint is set (base URL and model)."""
    return bool(settings.llm.base_url and settings.llm.model)


def run_automation(
    automation: Automation,
    settings: Settings,
    sources: SourcePool,
    *,
    scheduled_for: dt.datetime | None = None,
    trigger: str = "manual",
    progress: Progress | None = None,
    trace: TraceSink | None = None,
    store: Store | None = None,
    fresh: bool = False,
    run_id: int | None = None,
) -> RunReport:
    """Run one automation and return its report (not stored; see ``checks.run_lifecycle``).

    Args:
        automation: the automation to run.
        settings: sources, limits and the LLM.
        sources: the open sources of this process.
        scheduled_for: the slot this run is for (zone-aware); defaults to now.
        trigger: ``manual`` or ``schedule``.
        progress: called with a short line as each step starts.
        trace: where the agent's requests, responses and tool calls are written
            as they happen (default: kept in memory and dropped).
        store: where the previous completed run is looked up for the second
            opinion, and the automation's pinned plan (``checks.pinned``); without
            it every run counts as a first run and no plan is kept.
        fresh: ask the agent even when the pinned plan's evidence is unchanged.
        run_id: the stored run this is (``checks.run_lifecycle``): never read back
            as its own previous run by the second opinion.

    Every text of the report (summary, errors, the agent's and the second
    opinion's) comes back with the settings' secrets redacted.
    """
    report = _decide(
        automation, settings, sources, scheduled_for, trigger, progress, trace, store, fresh
    )
    if report.status != Status.SKIPPED:
        (progress or (lambda _line: None))(f"{automation.name}: asking for a second opinion")
        # each query's rows are compared with its own newest completed run
        keys = [evidence_key(e) for e in report.evidence if e.row_set is not None]
        with make_decision_model(settings.decision) as model:
            found = (
                opinion_inputs(
                    store,
                    automation.name,
                    keys,
                    backend=str(model.backend),
                    model=model.model,
                    before_run=run_id,
                )
                if store
                else OpinionInputs()
            )
            opinion = second_opinion(
                report,
                found.previous,
                automation.task_goal,
                automation.instructions,
                model,
                settings.decision.threshold,
                recalibrations=found.recalibrations,
                previous_rows=found.rows,
            )
        report.second_opinion = opinion.to_dict()
    secrets = settings.secrets()
    report.clean_text(lambda text: redact(text, secrets))  # once, before it is shown or stored
    return report


def _decide(
    automation: Automation,
    settings: Settings,
    sources: SourcePool,
    scheduled_for: dt.datetime | None,
    trigger: str,
    progress: Progress | None,
    trace: TraceSink | None,
    store: Store | None,
    fresh: bool = False,
) -> RunReport:
    """Checks, then the pinned plan or the agent: the report before the second opinion.

    With a store, the automation's pinned plan is consulted after the checks
    (``checks.pinned.consult``) and taken when its evidence is unchanged; else
    the agent is told ops' resolutions of earlier runs
    (``checks.store.review_reads.resolutions_for_next_run``) and the plan it did
    not take, and its accepted report becomes the new plan. What was found
    goes to ``checks.finding.decide`` once, and the report ends with its
    decision (``_end``).
    """
    started = utcnow()
    report = RunReport(
        automation=automation.name,
        scheduled_for=scheduled_for or started,
        status=Status.RUNNING,
        trigger=trigger,
        started_at=started,
        definition=automation.definition(),
    )
    say = progress or (lambda _line: None)
    pinning = settings.llm.pin_plans and store is not None
    plan = current_plan(store, automation.name) if pinning and store is not None else None
    facts = RunFacts(
        declared=bool(automation.checks),
        llm=llm_configured(settings),
        plan=NO_PLAN if plan is None else PlanState(PlanStatus.NOT_TAKEN),
    )
    if not automation.checks and not facts.llm and plan is None:
        return _end(report, decide(facts))
    deadline = time.monotonic() + automation.timeout_s
    try:
        say(f"{automation.name}: opening source {automation.source}")
        source = sources.get(automation.source)
        source.catalog()  # read now: a catalog that cannot be read ends the run here
    except SourceError as exc:
        return _end(report, decide(replace(facts, source_error=str(exc))))
    cap = getattr(settings.sources.get(automation.source), "max_bytes", None)
    statements = declared_statements(automation, source, settings.limits, report.scheduled_for)
    total = estimate_checks(source, statements, timeout_s=settings.limits.query_timeout_s)
    report.scanned = scanned_entry(total, cap) if statements else None
    refused = refusal(total, cap)
    if refused is not None and report.scanned is not None:  # over max_bytes: no check runs
        report.scanned["refused"] = True
        return _end(report, decide(replace(facts, source_error=refused)))
    say(f"{automation.name}: running {len(automation.checks or [])} checks")
    report.checks, report.evidence = run_checks(
        automation,
        source,
        settings.limits,
        deadline=deadline,
        history=_history(store, automation.name, report.scheduled_for) if store else None,
        schemas=_schemas(store, automation.name, report.scheduled_for) if store else None,
        slot=report.scheduled_for,
        on_statement=(lambda told: trace.note("checks_statement", told)) if trace else None,
        sources=sources.get,
        source_names=list(settings.sources),
    )
    if trace is not None and (plan is not None or facts.llm):
        trace.flush()  # the shared statements, before the waits of the plan or the agent
    # else they are written with the run's result (``Store.finish_run``'s transaction)
    facts = replace(facts, checks=tuple(report.checks))

    def counted() -> None:
        report.scanned = scanned_entry(total, cap)

    # the pinned plan's and the agent's queries: each estimated against what is left
    source = Budgeted(source, cap, total, counted)
    for check in report.checks:
        if check.outcome is CheckOutcome.NOT_EVALUATED:
            say(f"{automation.name}: check '{check.name}' not evaluated: {check.reason}")
    # ops' resolutions go to the pinned plan's consultation and to the agent: read only for them
    told = plan is not None or facts.llm
    resolutions = tuple(resolutions_for_next_run(store, automation.name)) if store and told else ()
    looked = _consult_plan(
        automation, settings, report, source, plan, fresh, resolutions, deadline, say
    )
    if looked is not None:
        report.pinning = looked.record()
        facts = replace(facts, plan=looked.state())
        if looked.used:  # the pinned queries as they ran now, with the plan's ids
            report.evidence = [*report.evidence, *looked.evidence]
    if not facts.llm or (looked is not None and looked.used):
        return _end(report, decide(facts))
    return _ask_agent(
        automation,
        settings,
        report,
        source,
        facts,
        looked,
        resolutions,
        deadline,
        trace,
        say,
        pinning=pinning,
    )


def _ask_agent(
    automation: Automation,
    settings: Settings,
    report: RunReport,
    source: Source,
    facts: RunFacts,
    looked: PlanCheck | None,
    resolutions: tuple[OpsResolution, ...],
    deadline: float,
    trace: TraceSink | None,
    say: Progress,
    *,
    pinning: bool,
) -> RunReport:
    """The agent explores; the finding is decided from what it said; its report may be pinned.

    With ``pinning`` (plans kept, a store given) the accepted report becomes
    the automation's new plan (``checks.pinned.plan.make_plan``).
    """
    # the agent, its LLM client and the ranking: loaded only when an LLM is set
    from checks.agent.loop import run_agent
    from checks.agent.prompt import AgentTask
    from checks.pinned.plan import make_plan

    model = automation.model or settings.llm.model
    say(f"{automation.name}: the agent is exploring ({model})")
    task = AgentTask(
        automation.name,
        automation.task_goal,
        automation.instructions or "",
        source.name,
        source.dialect,
        resolutions=resolutions,
        timezone=automation.timezone,
        previous=looked,
    )
    sink = trace or MemoryTrace(secrets=settings.secrets())
    result = run_agent(
        task,
        source,
        settings,
        checks=report.checks,
        check_evidence=report.evidence,
        trace=sink,
        model=automation.model,
        deadline=deadline,
    )
    report.evidence = [*report.evidence, *result.evidence]
    report.agent = result.stats.to_dict()
    decision = decide(replace(facts, agent=AgentAnswer(result.report, result.why)))
    result.trace_end(sink, decision.accepted)
    _end(report, decision)
    if pinning:
        if decision.accepted is not None:
            report.new_plan = make_plan(report, decision.accepted, model=result.stats.model)
        report.pinning = _pinning(looked, new_plan=report.new_plan is not None)
    return report


def _consult_plan(
    automation: Automation,
    settings: Settings,
    report: RunReport,
    source: Source,
    plan: PinnedPlan | None,
    fresh: bool,
    resolutions: tuple[OpsResolution, ...],
    deadline: float,
    say: Progress,
) -> PlanCheck | None:
    """Consult the automation's pinned plan (None: it has none); see ``checks.pinned.consult``."""
    if plan is None:
        return None
    say(f"{automation.name}: re-running the pinned plan of run {plan.run_id}")
    model = (automation.model or settings.llm.model) if llm_configured(settings) else None
    return consult(
        plan,
        report,
        source,
        settings.limits,
        repin_after_s=automation.repin_after_s or settings.llm.repin_after_s,
        model=model,
        now=report.started_at or utcnow(),
        fresh=fresh,
        resolutions=resolutions,
        deadline=deadline,
    )


def _pinning(looked: PlanCheck | None, *, new_plan: bool) -> dict[str, object]:
    if looked is None:
        return pinning_record(None, False, None, [], new_plan=new_plan)
    return looked.record(new_plan=new_plan)


def _history(store: Store, automation: str, slot: dt.datetime) -> History:
    """An automation's past values from the store: completed runs strictly before ``slot``."""

    def read(check: str, metric: str) -> list[Point]:
        found = store.series(automation, check, metric, before=slot, limit=HISTORY_READ)
        return [Point(p.scheduled_for, p.value) for p in found if p.value is not None]

    return read


def _schemas(store: Store, automation: str, slot: dt.datetime) -> RecordedSchemas:
    """The schemas an automation's checks recorded, from the store: the newest before ``slot``."""

    def read(check: str) -> dict[str, Any] | None:
        return store.recorded_schema(automation, check, before=slot)

    return read


def _end(report: RunReport, decision: Decision) -> RunReport:
    """Finish ``report`` with ``decision``: the one place its status, finding, summary are set."""
    report.status = decision.status
    report.finding = decision.finding
    report.finding_source = decision.finding_source
    report.error = decision.error
    report.summary = decision.summary
    report.finished_at = utcnow()
    return report
