"""The report of one run: what ran, what it returned, and the finding.

These dataclasses are what ``checks.run`` produces, what ``checks.store.store``
saves and loads, and what ``lookout run --json`` prints (``RunReport.to_dict``).
Values are JSON-safe (see ``json_value``) except ``CheckResult.value``, which
keeps the raw database value until it is serialised.

One module per part: ``vocabulary`` (status, finding, outcome, finding source),
``evidence`` (a query's evidence and ``json_value``), ``check_result`` (a
declared check's result, its anomaly and buckets) and ``run_report`` (the run's
report and its ``--json`` document). Every name is importable from here.
"""

from checks.report.check_result import Anomaly, Buckets, CheckResult, Metrics
from checks.report.evidence import Evidence, json_value
from checks.report.run_report import RunReport
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
    "RunReport",
    "Status",
    "json_value",
]
