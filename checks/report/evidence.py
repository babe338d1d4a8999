"""One query's evidence: what ran in this run and a bounded, JSON-safe sample of its result."""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from checks.sources.row_set import RowSet

if TYPE_CHECKING:
    from checks.settings.limits import Limits
    from checks.sources.base import QueryResult


def json_value(value: Any) -> Any:
    """Return ``value`` as a JSON-safe value without losing exactness.

    Decimals become numbers when a float holds them exactly (``0.0245``) and
    strings otherwise; dates and times become ISO 8601 strings; bytes become
    ``"<N bytes>"``; NaN and infinities become strings.
    """
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, Decimal):
        if value == value.to_integral_value() and abs(value) < 2**63:
            return int(value)
        as_float = float(value)
        return as_float if Decimal(repr(as_float)) == value else str(value)
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, dt.timedelta):
        return str(value)
    if isinstance(value, bytes | bytearray | memoryview):
        return f"<{len(bytes(value))} bytes>"
    if isinstance(value, list | tuple):
        return [json_value(v) for v in value]
    if isinstance(value, dict):
        return {str(k): json_value(v) for k, v in value.items()}
    return str(value)


@dataclass
class Evidence:
    """One query that ran in this run, with a bounded sample of its result.

    Attributes:
        id: ``C1``… for declared checks, ``S1``… for the sample of violating
            rows of typed check 1, ``Q1``… for the agent's queries.
        rows: at most ``limits.max_rows`` rows, JSON-safe, cells cut to the budget.
        row_count: rows in the full result (a lower bound when ``row_count_exact``
            is False). For a sample (``S…``), whose SQL
            ends in ``LIMIT``, the number of violating rows the check counted.
        truncated: ``rows`` holds fewer rows than ``row_count``.
        fingerprint: sha256 hex of the result's column names and rows
            (``checks.sources.base.QueryResult.fingerprint``): of every row, or of
            the first ``limits.fingerprint_max_rows`` when ``row_count_exact`` is False.
        row_count_exact: False when the result had more rows than
            ``limits.fingerprint_max_rows``: the scan stopped there, so
            ``row_count`` is only "at least".
        query_key: the key of the SQL's normal form (``checks.sql.normal_form``):
            how the same query is found in other runs; None when unknown.
        row_set: the result's row hashes (``checks.sources.row_set``), its
            sample's cut to ``rows``; None when not read. Stored apart, never
            in ``--json``.
    """

    id: str
    sql: str
    columns: list[str]
    rows: list[list[Any]]
    row_count: int
    truncated: bool
    fingerprint: str
    origin: str = "check"
    row_count_exact: bool = True
    query_key: str | None = None
    row_set: RowSet | None = None

    @classmethod
    def of_result(
        cls,
        result: QueryResult,
        *,
        evidence_id: str,
        origin: str,
        limits: Limits,
        sql: str | None = None,
        row_count: int | None = None,
        row_count_exact: bool | None = None,
    ) -> Evidence:
        """The evidence of a query's ``result``: every field read from it, one way for all.

        Rows are made JSON-safe within ``limits.max_cell_chars`` and
        ``limits.max_result_chars`` (``QueryResult.jsonable``); the row set keeps
        the hashes of the rows kept as its sample.

        Args:
            sql: the SQL to show, when not the statement that ran (a raw check
                shows the check's own text).
            row_count: the result's row count, when counted apart (a raw
                check recounts a capped scan); ``truncated`` then also says
                whether fewer rows are kept than that.
            row_count_exact: overrides the result's flag (a recount is exact).

        """
        rows, cut = result.jsonable(
            max_cell_chars=limits.max_cell_chars, max_result_chars=limits.max_result_chars
        )
        count = result.row_count if row_count is None else row_count
        return cls(
            id=evidence_id,
            sql=result.sql if sql is None else sql,
            columns=list(result.columns),
            rows=rows,
            row_count=count,
            truncated=result.truncated or cut or count > len(rows),
            fingerprint=result.fingerprint,
            origin=origin,
            row_count_exact=result.row_count_exact if row_count_exact is None else row_count_exact,
            query_key=result.query_key,
            row_set=result.row_set.with_sample(len(rows)) if result.row_set else None,
        )
