"""A finished report kept the way every run is kept, for tests that build reports by hand."""

from __future__ import annotations

from checks.errors import StoreError
from checks.report import RunReport
from checks.store.store import Store


def store_report(store: Store, report: RunReport) -> int:
    """Keep ``report`` as the run lifecycle does (row started claimed, finished fenced); its id.

    Its incidents do not move (``checks.store.incidents.decide_run_events`` is the caller's).

    Raises:
        StoreError: the slot already has a run.
    """
    started = store.start_run(
        report.automation,
        report.scheduled_for,
        lease_s=3600,
        trigger=report.trigger,
        definition=report.definition,
    )
    if started is None:
        raise StoreError(
            f"{report.automation} already has a run for {report.scheduled_for.isoformat()}"
        )
    run_id, attempt = started
    assert store.finish_run(run_id, attempt, report)  # just started: the attempt is current
    report.run_id = run_id
    return run_id
