"""The Snowflake source on fakesnow's emulator, through the real connector and dialect.

What the recipe sends reaches the connector (``snowflake_connects`` records each
connection's arguments), each query's id is kept, the version is Snowflake's, and the
grants that would let the role write are named.
"""

from __future__ import annotations

import re
import subprocess
import sys
from typing import Any

import pytest

from checks.errors import SourceError
from checks.settings.limits import Limits
from checks.settings.sources import SQLAlchemySource
from checks.sources import SQLQuerySource
from checks.sources.recipes.snowflake import SnowflakeRecipe, grant_warnings, shown_name
from tests.engine_fixtures.snowflake import LOGINS, SHOP_URL

pytestmark = pytest.mark.slow  # the emulator's server starts once, ~2 s


def source(url: str, limits: Limits | None = None) -> SQLQuerySource:
    return SQLQuerySource("shop", SQLAlchemySource(type="sqlalchemy", url=url), limits or Limits())


def test_every_session_logs_in_read_only_limited_and_in_utc(
    shop_snowflake: str, snowflake_connects: list[dict[str, Any]]
) -> None:
    snowflake_connects.clear()
    limits = Limits(query_timeout_s=12.5, connect_timeout_s=4)
    # A URL asking for autocommit does not get it: the recipe's arguments win.
    with source(SHOP_URL + "&autocommit=true", limits) as shop:
        result = shop.query("SELECT COUNT(*) AS n FROM orders")
    assert (result.columns, result.rows) == (["n"], [(5,)])
    sent = snowflake_connects[-1]
    assert {k: sent[k] for k in ("account", "user", "database", "schema", "warehouse", "role")} == {
        "account": "fakesnow",
        "user": "fake",
        "database": "shop",
        "schema": "public",
        "warehouse": "checks_wh",
        "role": "reader",
    }
    assert sent["session_parameters"] == {
        "STATEMENT_TIMEOUT_IN_SECONDS": 13,
        "STATEMENT_QUEUED_TIMEOUT_IN_SECONDS": 13,
        "TIMEZONE": "UTC",
        "QUERY_TAG": "lookout",
        "ABORT_DETACHED_QUERY": True,
        "QUOTED_IDENTIFIERS_IGNORE_CASE": True,
    }
    assert (sent["autocommit"], sent["login_timeout"], sent["network_timeout"]) == (False, 4, 16)
    # And so they reached the emulator, in the login request.
    login = LOGINS[-1]
    assert {k: login[k] for k in sent["session_parameters"]} == sent["session_parameters"]
    assert login["AUTOCOMMIT"] is False
    assert sent["client_session_keep_alive"] is False


def test_each_query_keeps_its_snowflake_query_id(shop_snowflake: str) -> None:
    with source(SHOP_URL) as shop:
        first = shop.query("SELECT COUNT(*) FROM orders")
        second = shop.query("SELECT COUNT(*) FROM customers")
    ids = [first.query_id, second.query_id]
    assert all(re.fullmatch(r"[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}", i or "") for i in ids)
    assert ids[0] != ids[1]
    assert first.bytes_processed is None


def test_the_version_is_snowflakes_current_version(shop_snowflake: str) -> None:
    with source(SHOP_URL) as shop:
        assert shop.engine_version() == "Snowflake 10.0.0"  # fakesnow's CURRENT_VERSION()


@pytest.mark.xfail(
    strict=True, raises=SourceError, reason="fakesnow does not parse SHOW GRANTS TO ROLE"
)
def test_write_warnings_read_the_roles_grants_on_the_emulator(shop_snowflake: str) -> None:
    with source(SHOP_URL) as shop:
        assert shop.write_warnings() == []


def test_grants_that_write_create_or_own_are_named() -> None:
    # SHOW GRANTS TO ROLE's columns, as Snowflake's documentation gives them.
    rows = [
        {"privilege": "SELECT", "granted_on": "TABLE", "name": "SHOP.PUBLIC.ORDERS"},
        {"privilege": "USAGE", "granted_on": "WAREHOUSE", "name": "CHECKS_WH"},
        {"privilege": "INSERT", "granted_on": "TABLE", "name": "SHOP.PUBLIC.ORDERS"},
        {"PRIVILEGE": "CREATE TABLE", "GRANTED_ON": "SCHEMA", "NAME": "SHOP.PUBLIC"},
        {"privilege": "OWNERSHIP", "granted_on": "DATABASE", "name": "SCRATCH"},
        {"privilege": "USAGE", "granted_on": "ROLE", "name": "LOADER"},
    ]
    assert grant_warnings("ANALYST", rows) == [
        "role ANALYST has INSERT on TABLE SHOP.PUBLIC.ORDERS",
        "role ANALYST has CREATE TABLE on SCHEMA SHOP.PUBLIC",
        "role ANALYST has OWNERSHIP on DATABASE SCRATCH",
        "role ANALYST is granted role LOADER, whose grants are not read",
    ]
    assert grant_warnings("READER", rows[:2]) == []


def test_result_names_are_shown_as_sqlalchemy_shows_snowflakes() -> None:
    assert [shown_name(n) for n in ("ROWS_IN_SCOPE", "Mixed", "lower", "A B", "X$1")] == [
        "rows_in_scope",
        "Mixed",
        "lower",
        "A B",
        "x$1",
    ]


def test_snowflakes_statement_timeout_and_cancel_are_timeouts() -> None:
    from snowflake.connector.errors import ProgrammingError

    recipe = SnowflakeRecipe()
    timed_out = ProgrammingError(
        msg="Statement reached its statement or warehouse timeout of 13 second(s) and was"
        " canceled.",
        errno=630,
    )
    cancelled = ProgrammingError(msg="SQL execution canceled", errno=604)
    syntax = ProgrammingError(msg="SQL compilation error", errno=1003)
    assert [recipe.is_timeout(e) for e in (timed_out, cancelled, syntax)] == [True, True, False]


def test_a_missing_driver_names_the_extra() -> None:
    # A fresh interpreter where the dialect's package cannot be imported.
    code = (
        "import sys; sys.modules['snowflake'] = None\n"
        "from checks.settings.limits import Limits\n"
        "from checks.settings.sources import SQLAlchemySource\n"
        "from checks.sources import SQLQuerySource\n"
        "try:\n"
        f"    config = SQLAlchemySource(type='sqlalchemy', url={SHOP_URL!r})\n"
        "    SQLQuerySource('wh', config, Limits())\n"
        "except Exception as e:\n"
        "    print(e)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip().endswith("pip install 'lookout[snowflake]'")
    assert done.stdout.startswith(
        "source wh: cannot use snowflake://fake:***@fakesnow/shop/public?"
    )
