"""Trino's read-only recipe, through the ``trino`` client and its SQLAlchemy dialect.

Written from Trino's documentation (trino.io/docs/current): "Query management
properties" and "SET SESSION". Every connection carries the session properties
``query_max_run_time`` (the time a query may exist: analysis, planning, queueing and
running) and ``query_max_execution_time`` (running only), both the query limit, and,
with ``cost_cap``, ``query_max_scan_physical_bytes`` (the bytes a query may scan
before Trino stops it: the cost cap, a data size such as ``10GB``); the client sends
its time zone as ``UTC`` (``X-Trino-Time-Zone``) so ``current_timestamp`` and
``timestamp with time zone`` casts are in UTC. Session properties the URL gives
(``?session_properties={…}``) are kept; these win over them.

Read-only: each query runs in its own ``START TRANSACTION READ ONLY`` … ``ROLLBACK``,
in which Trino refuses any write whatever the connector ("START TRANSACTION"). A
connector without transactions still reads in one; what else holds is the guard
(one SELECT) and the role's access control (docs/engines.md). The watchdog cancels
the query at its own limit, which may be shorter than the connection's.
"""

from __future__ import annotations

import copy
import json
import math
import re
from typing import TYPE_CHECKING, Any

from checks.errors import QueryFailed, QueryTimeout, SourceError
from checks.sources.recipes.base import Recipe
from checks.sources.watchdog import after

if TYPE_CHECKING:
    from sqlalchemy.engine import URL

    from checks.settings.limits import Limits
    from checks.settings.sources import SQLAlchemySource
    from checks.sources.fingerprint import Finish
    from checks.sources.result import QueryResult

# Trino's data sizes ("Properties reference", data size type): a number and a unit.
_DATA_SIZE = re.compile(r"\d+(\.\d+)?(B|kB|MB|GB|TB|PB)")
START_READ_ONLY = "START TRANSACTION READ ONLY"
_TIMEOUTS = frozenset({"EXCEEDED_TIME_LIMIT", "USER_CANCELED"})


class TrinoRecipe(Recipe):
    """Trino (and Starburst), one catalog and schema per source."""

    label = "Trino"
    dialect = "trino"
    extra = "trino"

    scan_cap: str | None = None
    """``query_max_scan_physical_bytes`` from ``cost_cap``, or None."""
    schema: str | None = None
    """The source's ``schema``, made the session's schema."""

    def with_options(self, name: str, config: SQLAlchemySource) -> TrinoRecipe:
        """This source's cost cap (a data size, or a whole number of bytes) and schema.

        Raises:
            SourceError: ``cost_cap`` is not a data size (``10GB``, ``500MB``).

        """
        recipe = copy.copy(self)
        recipe.schema = config.schema_
        cap = config.cost_cap
        if cap is not None:
            text = f"{cap}B" if isinstance(cap, int) else cap.replace(" ", "")
            if (isinstance(cap, int) and cap <= 0) or not _DATA_SIZE.fullmatch(text):
                raise SourceError(
                    f"source {name}: cost_cap {cap!r} is not a Trino data size: the bytes a"
                    " query may scan, such as 10GB, 500MB or 1TB"
                )
            recipe.scan_cap = text
        return recipe

    def engine_args(self, name: str, url: URL, limits: Limits) -> tuple[URL, dict[str, Any]]:
        """Session properties with the limits and the cost cap; the client's zone UTC.

        Raises:
            SourceError: the URL's ``session_properties`` is not a JSON object.

        """
        properties: dict[str, Any] = {}
        given = url.query.get("session_properties")
        if given is not None:
            try:
                properties = json.loads(given if isinstance(given, str) else given[-1])
            except ValueError:
                properties = None  # type: ignore[assignment]
            if not isinstance(properties, dict):
                raise SourceError(
                    f"source {name}: session_properties in the url is not a JSON object"
                )
            url = url.difference_update_query(["session_properties"])
        limit = f"{max(1, math.ceil(limits.query_timeout_s))}s"
        properties["query_max_run_time"] = limit
        properties["query_max_execution_time"] = limit
        if self.scan_cap is not None:
            properties["query_max_scan_physical_bytes"] = self.scan_cap
        connect: dict[str, Any] = {
            "session_properties": properties,
            "timezone": "UTC",
            # One HTTP request of the client (it polls a running query): a coordinator
            # gone silent fails the read instead of holding it.
            "request_timeout": limits.kill_after_s(limits.query_timeout_s),
        }
        if self.schema is not None:
            connect["schema"] = self.schema
        return url, {"connect_args": connect, "pool_pre_ping": True}

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
        """One query in a READ ONLY transaction, cancelled at ``timeout_s``.

        Raises:
            QueryTimeout: the watchdog cancelled it at ``timeout_s``.
            trino.exceptions.TrinoQueryError: Trino refused or ended it.

        """
        begin_read_only(conn)
        cancelled: list[bool] = []

        def cancel() -> None:
            cancelled.append(True)
            _cancel(cur)

        late = f"the query ran past its time limit of {timeout_s:g} s"
        try:
            cur = conn.cursor()
            with after(timeout_s, cancel):
                try:
                    cur.execute(sql)
                    result = finish(cur.fetchmany, [d[0] for d in cur.description or []])
                except (QueryTimeout, QueryFailed):
                    raise
                except Exception:
                    if cancelled:  # Trino's USER_CANCELED, or the connection cut
                        raise QueryTimeout(late) from None
                    raise
            # A cancelled query's cursor may just end, its rows cut short: never a result.
            if cancelled:
                raise QueryTimeout(late)
            return result
        finally:
            conn.rollback()

    def reset(self, conn: Any) -> bool:
        """Roll back a transaction a failed query left open; False if that failed."""
        try:
            if conn.transaction is not None:
                conn.rollback()
        except Exception:
            return False
        return True

    def is_timeout(self, error: BaseException) -> bool:
        """Trino's ``EXCEEDED_TIME_LIMIT``, or ``USER_CANCELED`` (the watchdog's cancel)."""
        return getattr(error, "error_name", None) in _TIMEOUTS


def begin_read_only(conn: Any) -> None:
    """Start a READ ONLY transaction that the connection's cursors and ``rollback`` use.

    The client starts its own transactions with a plain ``START TRANSACTION`` only
    (``trino.transaction.Transaction.begin``); this sends ``START TRANSACTION READ
    ONLY`` the same way: the coordinator answers with the transaction's id in
    ``X-Trino-Started-Transaction-Id``, which every later request of the connection
    sends back in ``X-Trino-Transaction-Id``.

    Raises:
        QueryFailed: the coordinator started no transaction.
        trino.exceptions.TrinoQueryError: it refused the statement.

    """
    from trino import constants
    from trino.transaction import NO_TRANSACTION, Transaction

    if conn.transaction is not None:
        conn.rollback()
    request = conn._create_request()  # the client's own, as its transactions use
    response = request.post(START_READ_ONLY)
    started = None
    while True:
        started = response.headers.get(constants.HEADER_STARTED_TRANSACTION) or started
        status = request.process(response)
        if not status.next_uri:
            break
        response = request.get(status.next_uri)
    if not started or started == NO_TRANSACTION:
        raise QueryFailed("Trino did not start a read-only transaction")
    request.transaction_id = started
    transaction = Transaction(request)
    transaction._id = started
    conn._transaction = transaction  # conn.cursor() and conn.rollback() use it


def _cancel(cur: Any) -> None:
    try:
        cur.cancel()
    except Exception:  # nothing running yet, or already ended
        return
