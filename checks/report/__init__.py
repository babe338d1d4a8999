"""The report of one run: what ran, what it returned, and the finding.

These dataclasses are what ``checks.run`` produces, what ``checks.store.store``
saves and loads, and what ``lookout run --json`` prints (``RunReport.to_dict``).
Values are JSON-safe (see ``json_value``) except ``CheckResult.value``, which
keeps the raw database value until it is serialised.

One module per part: ``vocabulary`` (status, finding, outcome, finding source),
``evidence`` (a query's evidence and ``json_value``), ``check_result`` (a
declared check's result, its anomaly and buckets), ``segments`` (a
segmented check's segments), ``citations`` (the ids a
summary cites), ``pinned_plan`` (the plan an accepted agent report makes, carried
by the report to the store) and ``run_report`` (the run's report and its
``--json`` document). Every name is importable from here.
"""

from checks.report.check_result import (
    Anomaly,
    Buckets,
    CheckResult,
    Metrics,
    outcome_of,
    passed_of,
)
from checks.report.citations import cited_ids
from checks.report.evidence import Evidence, json_value
from checks.report.pinned_plan import PinnedPlan, PinnedQuery
from checks.report.run_report import RunReport
from checks.report.segments import Segment, Segments
from checks.report.vocabulary import FRESH_TRIGGER, CheckOutcome, Finding, FindingSource, Status

__all__ = [
    "FRESH_TRIGGER",
    "Anomaly",
    "Buckets",
    "CheckOutcome",
    "CheckResult",
    "Evidence",
    "Finding",
    "FindingSource",
    "Metrics",
    "PinnedPlan",
    "PinnedQuery",
    "RunReport",
    "Segment",
    "Segments",
    "Status",
    "cited_ids",
    "json_value",
    "outcome_of",
    "passed_of",
]
