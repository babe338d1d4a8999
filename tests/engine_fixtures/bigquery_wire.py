"""A small local BigQuery: the REST wire the real ``google-cloud-bigquery`` client speaks.

BigQuery cannot run here. This server answers the calls a Lookout source makes, in the
shapes of BigQuery's REST reference, and records every job configuration it is sent:

- ``POST /token``: the service account's OAuth token exchange (its ``token_uri``).
- ``GET …/projects/P/datasets``, ``…/datasets/D/tables`` and ``…/tables/T``: the catalog.
- ``POST …/projects/P/jobs`` (jobs.insert): a dry run answers with
  ``statistics.totalBytesProcessed`` and runs nothing; a query is answered from
  ``answers`` (exact SQL → result), and fails as BigQuery does
  (``bytesBilledLimitExceeded``) when its bytes exceed ``maximumBytesBilled``.
- ``POST …/projects/P/queries`` (jobs.query, what the DB-API cursor sends: the catalog's
  row counts), answered the same way and recorded in ``queries``.
- ``GET …/projects/P/queries/J`` (jobs.getQueryResults).

A query with no answer is a 400 ``invalidQuery``: nothing passes by accident.
"""

from __future__ import annotations

import json
import re
import threading
import uuid
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Answer:
    """One query's result: BigQuery field types, rows of Python values, bytes it scans."""

    fields: list[tuple[str, str]]
    rows: list[tuple[Any, ...]]
    bytes_processed: int = 1_000


@dataclass
class FakeBigQuery:
    """The server's state: tables, answers by SQL, and every job configuration sent."""

    project: str
    dataset: str
    tables: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    answers: dict[str, Answer] = field(default_factory=dict)
    jobs: list[dict[str, Any]] = field(default_factory=list)
    queries: list[dict[str, Any]] = field(default_factory=list)
    results: dict[str, Answer] = field(default_factory=dict)


def _cell(value: Any) -> dict[str, Any]:
    return {"v": None if value is None else str(value)}


def _schema(fields: list[tuple[str, str]]) -> dict[str, Any]:
    return {"fields": [{"name": n, "type": t, "mode": "NULLABLE"} for n, t in fields]}


def _error(status: int, reason: str, message: str) -> tuple[int, dict[str, Any]]:
    body = {"code": status, "message": message, "errors": [{"reason": reason, "message": message}]}
    return status, {"error": body}


class _Handler(BaseHTTPRequestHandler):
    state: FakeBigQuery

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: a line per request otherwise."""

    def _send(self, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        if self.path == "/token":
            self._send(
                200, {"access_token": "fake-token", "expires_in": 3600, "token_type": "Bearer"}
            )
            return
        if re.fullmatch(r"/bigquery/v2/projects/[^/]+/jobs(\?.*)?", self.path):
            self._send(*self._insert(json.loads(raw)))
            return
        if re.fullmatch(r"/bigquery/v2/projects/[^/]+/queries(\?.*)?", self.path):
            self._send(*self._query(json.loads(raw)))
            return
        self._send(*_error(404, "notFound", f"no route {self.path}"))

    def _insert(self, job: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        state = self.state
        state.jobs.append(job)
        config = job.get("configuration", {})
        sql = config.get("query", {}).get("query", "")
        reference = job.get("jobReference") or {"projectId": state.project}
        reference.setdefault("jobId", uuid.uuid4().hex)
        reference.setdefault("location", "US")
        answer = state.answers.get(sql)
        if answer is None:
            return _error(400, "invalidQuery", f"the fake has no answer for: {sql}")
        scanned = str(answer.bytes_processed)
        statistics = {"totalBytesProcessed": scanned, "query": {"totalBytesProcessed": scanned}}
        done = {
            "kind": "bigquery#job",
            "id": f"{state.project}:US.{reference['jobId']}",
            "jobReference": reference,
            "configuration": config,
            "status": {"state": "DONE"},
            "statistics": statistics,
        }
        if config.get("dryRun"):
            return 200, done
        cap = config.get("query", {}).get("maximumBytesBilled")
        if cap is not None and answer.bytes_processed > int(cap):
            return _error(400, "bytesBilledLimitExceeded", "Query exceeded limit for bytes billed")
        state.results[reference["jobId"]] = answer
        return 200, done

    def _query(self, request: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        """jobs.query: a ``QueryRequest`` answered at once as a ``QueryResponse``."""
        self.state.queries.append(request)
        answer = self.state.answers.get(request.get("query", ""))
        if answer is None:
            return _error(
                400, "invalidQuery", f"the fake has no answer for: {request.get('query')}"
            )
        cap = request.get("maximumBytesBilled")
        if cap is not None and answer.bytes_processed > int(cap):
            return _error(400, "bytesBilledLimitExceeded", "Query exceeded limit for bytes billed")
        reference = {"projectId": self.state.project, "jobId": uuid.uuid4().hex, "location": "US"}
        return 200, {
            "kind": "bigquery#queryResponse",
            "jobReference": reference,
            "jobComplete": True,
            "schema": _schema(answer.fields),
            "rows": [{"f": [_cell(v) for v in row]} for row in answer.rows],
            "totalRows": str(len(answer.rows)),
            "totalBytesProcessed": str(answer.bytes_processed),
        }

    def do_GET(self) -> None:
        state = self.state
        path = self.path.split("?", 1)[0]
        base = f"/bigquery/v2/projects/{state.project}"
        if path == f"{base}/datasets":
            reference = {"projectId": state.project, "datasetId": state.dataset}
            dataset = {"kind": "bigquery#dataset", "datasetReference": reference}
            self._send(200, {"kind": "bigquery#datasetList", "datasets": [dataset]})
            return
        if path == f"{base}/datasets/{state.dataset}/tables":
            tables = [
                {
                    "kind": "bigquery#table",
                    "id": f"{state.project}:{state.dataset}.{name}",
                    "tableReference": {
                        "projectId": state.project,
                        "datasetId": state.dataset,
                        "tableId": name,
                    },
                    "type": "TABLE",
                }
                for name in state.tables
            ]
            self._send(200, {"kind": "bigquery#tableList", "tables": tables})
            return
        table = re.fullmatch(rf"{base}/datasets/{state.dataset}/tables/(\w+)", path)
        if table and table.group(1) in state.tables:
            name = table.group(1)
            reference = {"projectId": state.project, "datasetId": state.dataset, "tableId": name}
            self._send(
                200,
                {"kind": "bigquery#table", "tableReference": reference, "type": "TABLE",
                 "schema": _schema(state.tables[name])},
            )  # fmt: skip
            return
        results = re.fullmatch(rf"{base}/queries/([\w-]+)", path)
        if results and results.group(1) in state.results:
            answer = state.results[results.group(1)]
            reference = {"projectId": state.project, "jobId": results.group(1), "location": "US"}
            self._send(
                200,
                {
                    "kind": "bigquery#getQueryResultsResponse",
                    "jobReference": reference,
                    "jobComplete": True,
                    "schema": _schema(answer.fields),
                    "rows": [{"f": [_cell(v) for v in row]} for row in answer.rows],
                    "totalRows": str(len(answer.rows)),
                    "totalBytesProcessed": str(answer.bytes_processed),
                },
            )
            return
        self._send(*_error(404, "notFound", f"not found: {path}"))


class BigQueryServer:
    """The fake on a loopback port, in a thread; ``url`` is its base (the emulator host)."""

    def __init__(self, state: FakeBigQuery) -> None:
        handler = type("Handler", (_Handler,), {"state": state})
        self.state = state
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> BigQueryServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
