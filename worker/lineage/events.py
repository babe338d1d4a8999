"""A stored run as OpenLineage run events, with its data-quality facets.

The OpenLineage spec (https://openlineage.io/docs/spec/object-model, its run cycle and
the ``dataQualityAssertions`` and ``dataQualityMetrics`` input-dataset facets) is built
through ``openlineage-python``'s own models, so an event that breaks the spec fails
here, not at the server. A run gives two events: ``START`` at its start and ``COMPLETE``
(a completed run, whatever its finding) or ``FAIL`` (a run in error) at its end. Each
table the run's checks read is one input dataset named as the spec's naming page says
(https://openlineage.io/docs/spec/naming): ``postgres://host:port`` + ``db.schema.table``,
``mysql://host:port`` + ``db.table``, and likewise for the other URL sources; a DuckDB
source is ``duckdb://SOURCE`` + ``main.table`` (DuckDB has no entry in the naming page).
"""

from __future__ import annotations

import datetime as dt
import uuid
from collections import defaultdict
from typing import Any

import sqlglot
from openlineage.client.event_v2 import InputDataset, Job, Run, RunEvent, RunState
from openlineage.client.facet_v2 import (
    data_quality_assertions_dataset,
    data_quality_metrics_input_dataset,
    documentation_job,
    error_message_run,
    job_type_job,
)
from sqlalchemy.engine import make_url

from checks.report import CheckResult, RunReport
from checks.report.vocabulary import Status
from checks.settings.config import Settings
from checks.sql.tables import tables_read

PRODUCER = "https://github.com/lookout-data/lookout"
"""The ``producer`` of every event: the URI of the software that made it (the spec's rule)."""

_SCHEMES = {"postgresql": "postgres", "mariadb": "mysql"}
_DEFAULT_SCHEMA = {"postgresql": "public", "mssql": "dbo"}
_DEFAULT_PORTS = {"postgresql": 5432, "mysql": 3306, "mariadb": 3306, "mssql": 1433}


def run_id_of(settings: Settings, report: RunReport) -> str:
    """The run's OpenLineage ``runId``: a UUID, the same for its START and its end event."""
    key = f"lookout:{settings.lineage.namespace}:{report.automation}:{report.run_id}"
    return str(uuid.uuid5(uuid.NAMESPACE_URL, key))


def run_events(settings: Settings, report: RunReport, source: str) -> list[RunEvent]:
    """The START and COMPLETE/FAIL events of a stored run of an automation on ``source``.

    Raises:
        ValueError: the run has not ended (queued or running), or has no start time.

    """
    if report.status in (Status.QUEUED, Status.RUNNING) or report.started_at is None:
        raise ValueError(f"run {report.run_id} of {report.automation} has not ended")
    run_id = run_id_of(settings, report)
    job = Job(
        namespace=settings.lineage.namespace,
        name=report.automation,
        facets=_job_facets(report),
    )
    inputs = input_datasets(settings, report, source)
    end_state = RunState.FAIL if report.status == Status.ERROR else RunState.COMPLETE
    end_facets: dict[str, Any] = {}
    if report.error:
        end_facets["errorMessage"] = error_message_run.ErrorMessageRunFacet(
            message=report.error, programmingLanguage="python"
        )
    ended = report.finished_at or report.started_at
    return [
        RunEvent(
            eventType=RunState.START,
            eventTime=_time(report.started_at),
            run=Run(runId=run_id),
            job=job,
            producer=PRODUCER,
            inputs=[InputDataset(namespace=d.namespace, name=d.name) for d in inputs],
        ),
        RunEvent(
            eventType=end_state,
            eventTime=_time(ended),
            run=Run(runId=run_id, facets=end_facets),
            job=job,
            producer=PRODUCER,
            inputs=inputs,
        ),
    ]


def input_datasets(settings: Settings, report: RunReport, source: str) -> list[InputDataset]:
    """One input dataset per table the run's checks read, with their assertions and metrics."""
    namespace, prefix = dataset_namespace(settings, source)
    blocks = {c.get("name"): c for c in report.definition.get("checks", [])}
    by_table: dict[str, list[tuple[CheckResult, dict[str, Any]]]] = defaultdict(list)
    for check in report.checks:
        block = _kind_block(blocks.get(check.name, {}), check.kind)
        for table in _tables(check, block, settings, source):
            by_table[table].append((check, block))
    return [
        InputDataset(
            namespace=namespace,
            name=f"{prefix}{table}",
            inputFacets={"dataQualityAssertions": _assertions(checks), **_metrics(checks)},
        )
        for table, checks in sorted(by_table.items())
    ]


def dataset_namespace(settings: Settings, source: str) -> tuple[str, str]:
    """(namespace, name prefix) of ``source``'s tables, by the spec's naming page.

    The URL's user and password never appear: only its scheme, host and port.
    """
    config = settings.sources.get(source)
    url = getattr(config, "url", None)
    if not url:
        engine = getattr(config, "type", "lookout")
        return f"{engine}://{source}", "main."
    parsed = make_url(str(url))
    backend = parsed.get_backend_name()
    scheme = _SCHEMES.get(backend, backend)
    if backend == "sqlite":
        return f"sqlite://{parsed.database or source}", ""
    port = parsed.port or _DEFAULT_PORTS.get(backend)
    host = f"{parsed.host or 'localhost'}{f':{port}' if port else ''}"
    schema = getattr(config, "schema_", None) or _DEFAULT_SCHEMA.get(backend)
    parts = [p for p in (parsed.database, schema) if p]
    return f"{scheme}://{host}", "".join(f"{p}." for p in parts)


def _kind_block(block: dict[str, Any], kind: str) -> dict[str, Any]:
    inner = block.get(kind)
    return inner if isinstance(inner, dict) else {}


def _tables(
    check: CheckResult, block: dict[str, Any], settings: Settings, source: str
) -> list[str]:
    if isinstance(block.get("table"), str):
        return [block["table"]]
    if check.kind != "sql" or not check.sql:
        return []
    from checks.sources import dialect_of

    config = settings.sources.get(source)
    try:
        dialect = dialect_of(config) if config is not None else "duckdb"
        tree = sqlglot.parse_one(check.sql, read=dialect)
        return sorted(set(tables_read(tree, dialect)))
    except Exception:  # a query Lookout could not read names no table, it is not guessed
        return []


def _assertions(
    checks: list[tuple[CheckResult, dict[str, Any]]],
) -> data_quality_assertions_dataset.DataQualityAssertionsDatasetFacet:
    return data_quality_assertions_dataset.DataQualityAssertionsDatasetFacet(
        assertions=[
            data_quality_assertions_dataset.Assertion(
                assertion="custom_sql" if check.kind == "sql" else check.kind,
                success=check.outcome in ("passed", "warned"),
                column=block.get("column") if isinstance(block.get("column"), str) else None,
                severity="warn" if check.outcome == "warned" else "error",
                name=check.name,
                expected=check.expect,
                actual=None if check.value is None else str(check.value),
                content=check.sql or None,
                contentType="sql" if check.sql else None,
            )
            for check, block in checks
        ]
    )


def _metrics(checks: list[tuple[CheckResult, dict[str, Any]]]) -> dict[str, Any]:
    """The metrics the checks computed over the whole table (no ``filter:``, no ``over:``)."""
    rows: int | None = None
    columns: dict[str, data_quality_metrics_input_dataset.ColumnMetrics] = {}
    for check, block in checks:
        if check.kind == "sql" or block.get("filter") or check.buckets is not None:
            continue
        scope = check.metrics.get("rows_in_scope")
        if isinstance(scope, int) and check.outcome != "error":
            rows = scope
        nulls = check.metrics.get("missing", check.metrics.get("null_values"))
        column = block.get("column")
        if isinstance(column, str) and isinstance(nulls, int):
            columns[column] = data_quality_metrics_input_dataset.ColumnMetrics(
                nullCount=nulls, count=float(scope) if isinstance(scope, int) else None
            )
    if rows is None and not columns:
        return {}
    facet = data_quality_metrics_input_dataset.DataQualityMetricsInputDatasetFacet
    return {"dataQualityMetrics": facet(columnMetrics=columns, rowCount=rows)}


def _job_facets(report: RunReport) -> dict[str, Any]:
    facets: dict[str, Any] = {
        "jobType": job_type_job.JobTypeJobFacet(
            processingType="BATCH", integration="LOOKOUT", jobType="DATA_QUALITY"
        )
    }
    goal = report.definition.get("goal")
    if isinstance(goal, str) and goal:
        facets["documentation"] = documentation_job.DocumentationJobFacet(description=goal)
    return facets


def _time(moment: dt.datetime) -> str:
    return moment.astimezone(dt.UTC).isoformat()
