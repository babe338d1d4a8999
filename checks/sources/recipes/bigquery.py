"""BigQuery's read-only recipe, through ``google-cloud-bigquery`` and ``sqlalchemy-bigquery``.

Every query is first sent as a dry run (``QueryJobConfig(dry_run=True,
use_query_cache=False)``): BigQuery plans it and says how many bytes it would scan
(``totalBytesProcessed``) without running it or billing it. Over the source's cost cap
(``max_bytes_billed``, default 10 GB) the query is refused before it runs, with the
estimate and the cap. Under it, the query runs as a job with ``maximum_bytes_billed`` set
to the cap (BigQuery itself fails a job that would bill more), ``job_timeout_ms`` and
the client's ``timeout`` from the query limit, GoogleSQL (``use_legacy_sql=False``), the
label ``tool: lookout`` and the session's ``time_zone`` connection property pinned to
UTC. The cap is also the client's default job configuration, so the catalog's own
queries (row counts) are capped and labelled too. Each query's job id and bytes scanned are kept on
its result.

BigQuery has no read-only session: the credentials' IAM roles are the guarantee, and a
job can only write where its configuration says (a destination table, a DML statement):
the URL may not set a destination or any disposition, and the guard refuses DML,
scripts and ``EXPORT DATA``.

Source: BigQuery's REST reference (``JobConfigurationQuery``: dryRun, useQueryCache,
maximumBytesBilled, useLegacySql, labels, connectionProperties; ``JobConfiguration``:
jobTimeoutMs; ``JobStatistics2``: totalBytesProcessed) and google-cloud-bigquery's
``Client.query`` and ``QueryJobConfig``.
"""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, Any

from checks.errors import QueryFailed, SourceError
from checks.sources.recipes.base import Recipe

if TYPE_CHECKING:
    import sqlalchemy as sa
    from sqlalchemy.engine import URL

    from checks.settings.limits import Limits
    from checks.sources.fingerprint import Finish
    from checks.sources.result import QueryResult

CAP_KEY = "max_bytes_billed"
"""The source key of BigQuery's cost cap, in bytes (``10 GB``, ``500 MB``, ``1 TiB``)."""

DEFAULT_CAP_BYTES = 10 * 10**9
"""The cost cap of a BigQuery source that names none: 10 GB."""

LABELS = {"tool": "lookout"}
"""The labels of every Lookout job (found in ``INFORMATION_SCHEMA.JOBS`` and billing)."""

URL_KEYS = frozenset(
    {
        "location",
        "credentials_path",
        "credentials_base64",
        "arraysize",
        "list_tables_page_size",
        "maximum_bytes_billed",
    }
)
"""The URL query keys a BigQuery source may set: sqlalchemy-bigquery's others (a
destination table, dispositions, dry_run, a user-supplied client) change what a job does."""


def in_bytes(count: int) -> str:
    """A byte count in decimal units, as BigQuery bills: ``12.3 GB``, ``10 GB``, ``512 B``."""
    size = float(count)
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if size < 1000 or unit == "TB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.3g} {unit}"
        size /= 1000
    raise AssertionError("unreachable")


def over_cap(estimate: int, cap: int) -> str:
    """The refusal of a query whose dry run says it would scan more than the cap."""
    return (
        f"the query would scan {in_bytes(estimate)}, over this source's cap of"
        f" {in_bytes(cap)} ({CAP_KEY}); it was not run"
    )


def job_config(cap: int, timeout_s: float, *, dry_run: bool, default: Any) -> Any:
    """The ``QueryJobConfig`` of one query's dry run or run (see the module docstring).

    Args:
        cap: the cost cap, in bytes.
        timeout_s: the query's time limit, in seconds.
        dry_run: the dry run (no cache, so the estimate is the query's own scan).
        default: the client's default ``QueryJobConfig`` (the source's dataset and
            connection properties), or None.

    """
    from google.cloud.bigquery import ConnectionProperty, QueryJobConfig

    properties = [
        p for p in getattr(default, "connection_properties", None) or [] if p.key != "time_zone"
    ]
    config = QueryJobConfig(
        dry_run=dry_run,
        use_legacy_sql=False,
        maximum_bytes_billed=cap,
        labels=dict(LABELS),
        connection_properties=[*properties, ConnectionProperty("time_zone", "UTC")],
    )
    if dry_run:
        config.use_query_cache = False
    else:
        config.job_timeout_ms = max(1, int(timeout_s * 1000))
    return config


class BigQueryRecipe(Recipe):
    """BigQuery: a project and dataset, credentials from the environment or the URL."""

    label = "BigQuery"
    dialect = "bigquery"
    extra = "bigquery"
    cost_cap_key = "maximum_bytes_billed"

    def engine_args(self, name: str, url: URL, limits: Limits) -> tuple[URL, dict[str, Any]]:
        """The URL with the cost cap as the client's default; no key that makes a job write.

        Raises:
            SourceError: the URL sets a key outside ``URL_KEYS``, or a cap that is not a
                positive whole number of bytes.

        """
        refused = sorted(set(url.query) - URL_KEYS)
        if refused:
            raise SourceError(
                f"source {name}: the url may not set {', '.join(refused)}: Lookout's BigQuery"
                f" jobs write nowhere and set their own configuration (allowed:"
                f" {', '.join(sorted(URL_KEYS))})"
            )
        cap = url.query.get("maximum_bytes_billed", str(DEFAULT_CAP_BYTES))
        if not isinstance(cap, str) or not cap.isdigit() or int(cap) < 1:
            raise SourceError(f"source {name}: {CAP_KEY} must be a positive number of bytes")
        # Results are read through the REST client: no BigQuery Storage client.
        connect = {"prefer_bqstorage_client": False}
        # The client's default job configuration: the catalog's own queries (row
        # counts, through the DB-API cursor) are capped and labelled too.
        labels = ",".join(f"{k}:{v}" for k, v in LABELS.items())
        url = url.update_query_dict({"maximum_bytes_billed": cap, "labels": labels})
        return url, {"connect_args": connect}

    def run(
        self,
        conn: Any,
        sql: str,
        timeout_s: float,
        finish: Finish,
        *,
        limits: Limits,
        schema: str | None,
    ) -> QueryResult:
        """The dry run, compared with the cap; then the query, capped and limited.

        Raises:
            QueryFailed: the dry run's estimate is over the cap (the query did not run),
                or BigQuery refused the query.

        """
        client = conn._client  # the DB-API connection's client, as sqlalchemy-bigquery reads it
        default = client.default_query_job_config
        cap = int(default.maximum_bytes_billed)
        dry = client.query(
            sql,
            job_config=job_config(cap, timeout_s, dry_run=True, default=default),
            timeout=timeout_s,
        )
        estimate = int(dry.total_bytes_processed or 0)
        if estimate > cap:
            raise QueryFailed(over_cap(estimate, cap))
        job = client.query(
            sql,
            job_config=job_config(cap, timeout_s, dry_run=False, default=default),
            timeout=timeout_s,
        )
        rows = job.result(timeout=timeout_s, page_size=2_000)
        values = (tuple(row.values()) for row in rows)
        result = finish(
            lambda n: list(itertools.islice(values, n)), [f.name for f in rows.schema or []]
        )
        result.query_id = job.job_id
        result.bytes_processed = job.total_bytes_processed
        return result

    def version(self, conn: sa.Connection) -> str:
        """``BigQuery``: the service has no version to read."""
        return self.label

    def write_warnings(self, conn: sa.Connection, schema: str) -> list[str]:
        """BigQuery's write permissions are IAM roles, which a query cannot read: said once."""
        return [
            "BigQuery's grants are IAM roles, not read here: give these credentials"
            " roles/bigquery.dataViewer on the dataset and roles/bigquery.jobUser, nothing more"
        ]

    def is_timeout(self, error: BaseException) -> bool:
        """The client's wait ending, or BigQuery ending the job at ``job_timeout_ms``."""
        import concurrent.futures

        if isinstance(error, concurrent.futures.TimeoutError | TimeoutError):
            return True
        errors = getattr(error, "errors", None) or []
        return any(isinstance(e, dict) and e.get("reason") == "timeout" for e in errors)
