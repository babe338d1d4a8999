"""Snowflake's read-only recipe: ``snowflake-connector-python`` and ``snowflake-sqlalchemy``.

Every session logs in with its parameters set (the connector's ``session_parameters``,
sent in the login request, so catalog reads are bounded too):
``STATEMENT_TIMEOUT_IN_SECONDS`` and ``STATEMENT_QUEUED_TIMEOUT_IN_SECONDS`` (Snowflake
cancels a statement running, or queued on a busy warehouse, past the query limit),
``TIMEZONE = 'UTC'`` (what ``TIMESTAMP_LTZ`` values and ``CURRENT_TIMESTAMP`` are shown in),
``QUOTED_IDENTIFIERS_IGNORE_CASE`` (a quoted ``"orders"`` is the table ORDERS: the names
SQLAlchemy lists and the typed kinds quote are lower case; an object created with a
quoted mixed-case name is then out of reach),
``QUERY_TAG = 'lookout'`` (every statement is found in ``QUERY_HISTORY`` by its tag) and
``ABORT_DETACHED_QUERY`` (a query whose client went away is cancelled, not left running);
autocommit is off and each query is rolled back after it is read. Each query also
carries its own limit as the connector's ``timeout`` (it cancels the query client-side).

Snowflake has no read-only session or transaction: the role's grants are the guarantee.
``write_warnings`` reads ``SHOW GRANTS TO ROLE`` of the current role and names every
grant that writes or creates. Each query's Snowflake query id is kept on its result, so
its cost can be read later (``QUERY_HISTORY``, ``QUERY_ATTRIBUTION_HISTORY``).

Source: Snowflake's documentation, Parameters (STATEMENT_TIMEOUT_IN_SECONDS,
STATEMENT_QUEUED_TIMEOUT_IN_SECONDS, TIMEZONE, QUERY_TAG, ABORT_DETACHED_QUERY), SHOW
GRANTS, and the Python connector's API (``session_parameters``, ``execute(timeout=)``,
``sfqid``); error 000630 is the statement timeout, 000604 a cancelled statement.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa

from checks.sources.recipes.base import Recipe

if TYPE_CHECKING:
    from sqlalchemy.engine import URL

    from checks.settings.limits import Limits
    from checks.sources.fingerprint import Finish
    from checks.sources.result import QueryResult

TIMEOUT_ERRORS = frozenset({604, 630})
"""Snowflake's error numbers of a statement cancelled (604) and of its timeout (630)."""

QUERY_TAG = "lookout"
"""The ``QUERY_TAG`` of every Lookout session: its statements in ``QUERY_HISTORY``."""

_PLAIN_UPPER = re.compile(r"[A-Z_][A-Z0-9_$]*")

_WRITE_PRIVILEGES = frozenset(
    {"INSERT", "UPDATE", "DELETE", "TRUNCATE", "OWNERSHIP", "ALL", "ALL PRIVILEGES", "MODIFY"}
)


def session_parameters(limits: Limits) -> dict[str, str | int | bool]:
    """The session parameters every Lookout session logs in with (see the module docstring).

    Returns:
        Parameter name -> value; timeouts in whole seconds, at least 1.

    """
    seconds = max(1, math.ceil(limits.query_timeout_s))
    return {
        "STATEMENT_TIMEOUT_IN_SECONDS": seconds,
        "STATEMENT_QUEUED_TIMEOUT_IN_SECONDS": seconds,
        "TIMEZONE": "UTC",
        "QUERY_TAG": QUERY_TAG,
        "ABORT_DETACHED_QUERY": True,
        # SQLAlchemy shows Snowflake's case-insensitive names (stored upper case) in
        # lower case, and the typed kinds quote every name they write: "orders" must
        # resolve to ORDERS.
        "QUOTED_IDENTIFIERS_IGNORE_CASE": True,
    }


class SnowflakeRecipe(Recipe):
    """Snowflake, its warehouse and role named in the URL."""

    label = "Snowflake"
    dialect = "snowflake"
    extra = "snowflake"

    def engine_args(self, name: str, url: URL, limits: Limits) -> tuple[URL, dict[str, Any]]:
        """The session parameters, autocommit off and the connector's login and network timeouts.

        These connect arguments override the same keys in the URL's query: a URL cannot
        turn autocommit on or lift the statement timeout.
        """
        connect = {
            "session_parameters": session_parameters(limits),
            "autocommit": False,
            "login_timeout": max(1, math.ceil(limits.connect_timeout_s)),
            "network_timeout": max(1, math.ceil(limits.kill_after_s(limits.query_timeout_s))),
            "client_session_keep_alive": False,
        }
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
        """One query with its own time limit, rolled back once read; its query id kept."""
        cur = conn.cursor()
        try:
            cur.execute(sql, timeout=max(1, math.ceil(timeout_s)))
            names = [shown_name(d[0]) for d in cur.description or []]
            result = finish(cur.fetchmany, names)
            result.query_id = cur.sfqid
            return result
        finally:
            cur.close()
            conn.rollback()

    def reset(self, conn: Any) -> bool:
        """Roll back what is open; the session parameters stay (no statement can change them)."""
        try:
            conn.rollback()
        except Exception:
            return False
        return True

    def version(self, conn: sa.Connection) -> str:
        """``Snowflake 9.38.2``, from ``CURRENT_VERSION()``."""
        return f"{self.label} {conn.execute(sa.text('SELECT CURRENT_VERSION()')).scalar_one()}"

    def write_warnings(self, conn: sa.Connection, schema: str) -> list[str]:
        """The current role's grants that write or create, from ``SHOW GRANTS TO ROLE``.

        Only the role's own grants are read: privileges of roles granted to it are
        shown as a USAGE on that role, named so they can be read the same way.
        """
        role = conn.execute(sa.text("SELECT CURRENT_ROLE()")).scalar_one()
        quoted = '"' + str(role).replace('"', '""') + '"'
        rows = conn.execute(sa.text(f"SHOW GRANTS TO ROLE {quoted}")).mappings().all()
        return grant_warnings(str(role), rows)

    def is_timeout(self, error: BaseException) -> bool:
        """Snowflake's statement timeout (000630) or the connector's cancel (000604)."""
        return getattr(error, "errno", None) in TIMEOUT_ERRORS


def shown_name(name: str) -> str:
    """A result column's name as SQLAlchemy shows it: ``ROWS_IN_SCOPE`` as ``rows_in_scope``.

    Snowflake stores an unquoted name in upper case; a name in any other case (or
    not a plain identifier) was quoted and keeps its case.
    """
    return name.lower() if _PLAIN_UPPER.fullmatch(name) else name


def grant_warnings(role: str, grants: Iterable[Any]) -> list[str]:
    """One sentence per grant of ``role`` that writes, creates or owns.

    Args:
        role: the role's name, as ``CURRENT_ROLE()`` gives it.
        grants: ``SHOW GRANTS TO ROLE`` rows as mappings (``privilege``, ``granted_on``,
            ``name``), keys in any case.

    Returns:
        ``role ANALYST has INSERT on TABLE SHOP.PUBLIC.ORDERS``, one per such grant,
        and ``role ANALYST is granted role LOADER, whose grants are not read`` per
        role granted to it.

    """
    found = []
    for grant in grants:
        row = {str(k).lower(): v for k, v in dict(grant).items()}
        privilege = str(row.get("privilege", "")).upper()
        on = str(row.get("granted_on", "")).upper()
        what = f"{privilege} on {on} {row.get('name', '')}".rstrip()
        if privilege in _WRITE_PRIVILEGES or privilege.startswith("CREATE "):
            found.append(f"role {role} has {what}")
        elif privilege == "USAGE" and on == "ROLE":
            found.append(
                f"role {role} is granted role {row.get('name', '')}, whose grants are not read"
            )
    return found
