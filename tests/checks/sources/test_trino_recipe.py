"""Trino's recipe through the real ``trino`` client, against a recording HTTP coordinator.

No Trino runs here. ``Coordinator`` speaks the client protocol's few replies the
recipe needs (a finished statement with its columns and rows; the started and
cleared transaction headers) and records every request: its SQL and the headers
the client derives from our connect arguments. What is asserted is our output as
the client sends it, never Trino's behaviour.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import unquote

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import make_url

from checks.errors import QueryTimeout, SourceError
from checks.settings.limits import Limits
from checks.settings.sources import SQLAlchemySource
from checks.sources.recipes import recipe_for
from checks.sources.recipes.trino import TrinoRecipe

LIMITS = Limits(query_timeout_s=12.5, connect_timeout_s=3)
SLOW = "SELECT COUNT(*) FROM orders AS a CROSS JOIN orders AS b"
HEADERS = ("X-Trino-Session", "X-Trino-Time-Zone", "X-Trino-Transaction-Id", "X-Trino-Schema")


class Coordinator(ThreadingHTTPServer):
    """Records each statement with the headers named in ``HEADERS``."""

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.seen: list[tuple[str, dict[str, str]]] = []
        self.cancelled = False


class _Handler(BaseHTTPRequestHandler):
    server: Coordinator

    def log_message(self, *args: Any) -> None:
        return

    def do_POST(self) -> None:
        sql = self.rfile.read(int(self.headers["Content-Length"])).decode()
        self.server.seen.append(
            (sql, {h: unquote(self.headers[h]) for h in HEADERS if h in self.headers})
        )
        body: dict[str, Any] = {
            "id": f"q{len(self.server.seen)}",
            "infoUri": "http://127.0.0.1/ui",
            "stats": {"state": "FINISHED"},
        }
        extra: dict[str, str] = {}
        if sql == SLOW:
            body.update(stats={"state": "RUNNING"}, nextUri=self._running())
        elif sql == "START TRANSACTION READ ONLY":
            extra["X-Trino-Started-Transaction-Id"] = "tx-7"
        elif sql == "ROLLBACK":
            extra["X-Trino-Clear-Transaction-Id"] = "true"
        else:
            bigint = {"rawType": "bigint", "arguments": []}
            body["columns"] = [{"name": "rows_in_scope", "type": "bigint", "typeSignature": bigint}]
            body["data"] = [[3]]
        self._reply(body, extra)

    def do_GET(self) -> None:  # the client polls a running query, until it is cancelled
        time.sleep(0.02)
        body: dict[str, Any] = {"id": "slow", "infoUri": "http://127.0.0.1/ui"}
        if self.server.cancelled:
            error = {"errorName": "USER_CANCELED", "errorType": "USER_ERROR"}
            body.update(stats={"state": "FAILED"}, error={**error, "message": "Query was canceled"})
        else:
            body.update(stats={"state": "RUNNING"}, nextUri=self._running())
        self._reply(body, {})

    def do_DELETE(self) -> None:  # the client cancels it
        self.server.cancelled = True
        self.server.seen.append((f"DELETE {self.path}", {}))
        self.send_response(204)
        self.end_headers()

    def _running(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1/statement/executing/slow/1"

    def _reply(self, body: dict[str, Any], extra: dict[str, str]) -> None:
        payload = json.dumps(body).encode()
        self.send_response(200)
        for name, value in extra.items():
            self.send_header(name, value)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


@pytest.fixture
def coordinator() -> Iterator[Coordinator]:
    server = Coordinator()
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def recipe(**keys: Any) -> TrinoRecipe:
    config = SQLAlchemySource.model_validate({"type": "sqlalchemy", "url": "trino://x", **keys})
    found = recipe_for("trino").with_options("lake", config)
    assert isinstance(found, TrinoRecipe)
    return found


def collect(fetch: Any, columns: list[str]) -> tuple[list[str], list[Any]]:
    return columns, fetch(10)


def test_the_engine_arguments_carry_the_limits_the_cap_and_utc() -> None:
    url = make_url(
        "trino://reader@trino.example:8080/hive/sales"
        '?session_properties={"query_priority": "2", "query_max_run_time": "1h"}'
    )
    engine_url, options = recipe(cost_cap="10GB").engine_args("lake", url, LIMITS)
    assert engine_url.render_as_string() == "trino://reader@trino.example:8080/hive/sales"
    assert options == {
        "connect_args": {
            "session_properties": {
                "query_priority": "2",  # the URL's own are kept; the limits win
                "query_max_run_time": "13s",
                "query_max_execution_time": "13s",
                "query_max_scan_physical_bytes": "10GB",
            },
            "timezone": "UTC",
            "request_timeout": 15.625,  # the query limit's kill time, for one HTTP request
        },
        "pool_pre_ping": True,
    }


def test_a_query_runs_in_a_read_only_transaction_with_the_session_properties(
    coordinator: Coordinator,
) -> None:
    port = coordinator.server_address[1]
    found = recipe(cost_cap=5_000_000, schema="orders_2024")
    url, options = found.engine_args(
        "lake", make_url(f"trino://reader@127.0.0.1:{port}/hive/sales"), LIMITS
    )
    engine = sa.create_engine(url, **options)
    raw = engine.raw_connection()
    try:
        sql = 'SELECT COUNT(*) AS rows_in_scope FROM "orders" AS t'
        result = found.run(raw.driver_connection, sql, 12.5, collect, limits=LIMITS, schema=None)
        assert found.reset(raw.driver_connection) is True
    finally:
        raw.close()
        engine.dispose()
    assert result == (["rows_in_scope"], [[3]])
    session = (
        "query_max_run_time=13s,query_max_execution_time=13s,query_max_scan_physical_bytes=5000000B"
    )
    common = {
        "X-Trino-Session": session,
        "X-Trino-Time-Zone": "UTC",
        "X-Trino-Schema": "orders_2024",
    }
    assert coordinator.seen == [
        ("START TRANSACTION READ ONLY", {**common, "X-Trino-Transaction-Id": "NONE"}),
        (sql, {**common, "X-Trino-Transaction-Id": "tx-7"}),
        ("ROLLBACK", {**common, "X-Trino-Transaction-Id": "tx-7"}),
    ]


@pytest.mark.parametrize(
    ("cap", "message"),
    [
        ("10 gigabytes", "'10 gigabytes'"),
        ("10gb", "'10gb'"),
        (0, "0"),
    ],
)
def test_a_cost_cap_that_is_not_a_data_size_is_refused(cap: object, message: str) -> None:
    with pytest.raises(SourceError) as raised:
        recipe(cost_cap=cap)
    assert str(raised.value) == (
        f"source lake: cost_cap {message} is not a Trino data size: the bytes a query may"
        " scan, such as 10GB, 500MB or 1TB"
    )


def test_session_properties_in_the_url_must_be_a_json_object() -> None:
    url = make_url("trino://reader@trino.example:8080/hive?session_properties=[1]")
    with pytest.raises(SourceError) as raised:
        recipe().engine_args("lake", url, LIMITS)
    assert str(raised.value) == "source lake: session_properties in the url is not a JSON object"


def test_the_time_limit_and_a_cancel_are_timeouts_a_scan_cap_is_not() -> None:
    from trino.exceptions import TrinoQueryError

    def error(name: str) -> TrinoQueryError:
        return TrinoQueryError({"errorName": name, "errorType": "USER_ERROR", "message": name})

    found = recipe()
    assert found.is_timeout(error("EXCEEDED_TIME_LIMIT"))
    assert found.is_timeout(error("USER_CANCELED"))
    assert not found.is_timeout(error("EXCEEDED_SCAN_LIMIT"))


def test_a_query_past_its_limit_is_cancelled_and_never_a_result(coordinator: Coordinator) -> None:
    port = coordinator.server_address[1]
    found = recipe()
    url, options = found.engine_args(
        "lake", make_url(f"trino://reader@127.0.0.1:{port}/hive/sales"), LIMITS
    )
    engine = sa.create_engine(url, **options)
    raw = engine.raw_connection()
    try:
        with pytest.raises(QueryTimeout) as raised:
            found.run(raw.driver_connection, SLOW, 0.3, collect, limits=LIMITS, schema=None)
    finally:
        raw.close()
        engine.dispose()
    assert str(raised.value) == "the query ran past its time limit of 0.3 s"
    assert [sql for sql, _ in coordinator.seen] == [
        "START TRANSACTION READ ONLY",
        SLOW,
        "DELETE /v1/statement/executing/slow/1",
        "ROLLBACK",
    ]
