"""One run of one automation, in-process: source → declared checks → finding → report.

This is the single path every trigger takes (``lookout run``, the Celery task,
``lookout eval``). It never raises for a problem of the run itself: a source
that cannot open, a check in error or a goal nobody can decide ends in a
report with status ``error`` or ``skipped`` — never Clear.
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable

from checks.automation import Automation
from checks.check import run_checks
from checks.config import Settings
from checks.errors import SourceError
from checks.finding import decide_from_checks
from checks.report import FindingSource, RunReport, Status
from checks.sources import Source, open_source
from checks.store import utcnow

NEEDS_LLM = (
    "needs an LLM: set LOOKOUT_LLM_BASE_URL and LOOKOUT_LLM_MODEL (or llm: in the config) "
    "to run goal-only automations"
)

Progress = Callable[[str], None]


class SourcePool:
    """Opens each configured source once, on first use, and closes them all at the end."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._open: dict[str, Source] = {}

    def get(self, name: str) -> Source:
        """Return the open source ``name``.

        Raises:
            SourceError: the name is not configured or the source cannot be opened.
        """
        if name not in self._open:
            config = self.settings.sources.get(name)
            if config is None:
                known = ", ".join(sorted(self.settings.sources)) or "none"
                raise SourceError(f"source '{name}' is not configured (configured: {known})")
            self._open[name] = open_source(name, config, self.settings)
        return self._open[name]

    def close(self) -> None:
        """Close every source opened so far."""
        for source in self._open.values():
            source.close()
        self._open.clear()

    def __enter__(self) -> SourcePool:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


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
) -> RunReport:
    """Run one automation and return its report (not stored; see ``Store.save_report``).

    Args:
        scheduled_for: the slot this run is for (zone-aware); defaults to now.
        trigger: ``manual`` or ``schedule``.
        progress: called with a short line as each step starts.
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
    if not automation.checks and not llm_configured(settings):
        return _end(report, Status.SKIPPED, error=NEEDS_LLM, summary=f"**Skipped** — {NEEDS_LLM}.")
    deadline = time.monotonic() + automation.timeout_s
    try:
        say(f"{automation.name}: opening source {automation.source}")
        source = sources.get(automation.source)
    except SourceError as exc:
        return _end(report, Status.ERROR, error=str(exc), summary=f"**Error** — {exc}")
    say(f"{automation.name}: running {len(automation.checks or [])} checks")
    report.checks, report.evidence = run_checks(
        automation, source, settings.limits, deadline=deadline
    )
    decision = decide_from_checks(report.checks, why="no LLM is configured")
    report.finding = decision.finding
    report.finding_source = FindingSource.CHECKS if decision.finding else None
    return _end(report, decision.status, error=decision.error, summary=decision.summary)


def _end(report: RunReport, status: Status, *, error: str | None, summary: str) -> RunReport:
    report.status = status
    report.error = error
    report.summary = summary
    report.finished_at = utcnow()
    return report
