"""A local stand-in for Marquez's lineage endpoint: real HTTP on 127.0.0.1, strict, recording.

``POST /api/v1/lineage`` takes one OpenLineage event as JSON and answers ``201`` with an
empty body, as Marquez does (its OpenAPI spec, ``/api/v1/lineage``). Before answering,
the event is rebuilt through ``openlineage-python``'s own models, so an event those
models refuse (a field they do not know, a ``runId`` that is not a UUID, an
``eventTime`` without a zone, an event type outside the spec's) gets ``400`` with the
reason, and a missing or wrong bearer token (when the fake has a key) ``401``.
``fail_next`` answers the next requests with a given status instead.
"""

from __future__ import annotations

import json
import threading
import uuid
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from openlineage.client.event_v2 import InputDataset, Job, Run, RunEvent, RunState
from openlineage.client.facet_v2 import (
    data_quality_assertions_dataset,
    data_quality_metrics_input_dataset,
)

PATH = "/api/v1/lineage"


def rebuild(event: dict[str, Any]) -> RunEvent:
    """The event as ``openlineage-python``'s models, checked by their validators.

    Raises:
        ValueError, TypeError, KeyError: the event breaks the models (the fake's 400).

    """
    uuid.UUID(event["run"]["runId"])
    inputs = []
    for data in event.get("inputs", []):
        facets = dict(data.get("inputFacets") or {})
        assertions = facets.pop("dataQualityAssertions", None)
        metrics = facets.pop("dataQualityMetrics", None)
        if facets or data.get("facets"):
            raise ValueError(f"unexpected dataset facets {sorted(facets)}")
        input_facets: dict[str, Any] = {}
        if assertions is not None:
            input_facets["dataQualityAssertions"] = (
                data_quality_assertions_dataset.DataQualityAssertionsDatasetFacet(
                    assertions=[
                        data_quality_assertions_dataset.Assertion(**_fields(a))
                        for a in assertions["assertions"]
                    ]
                )
            )
        if metrics is not None:
            input_facets["dataQualityMetrics"] = (
                data_quality_metrics_input_dataset.DataQualityMetricsInputDatasetFacet(
                    columnMetrics={
                        name: data_quality_metrics_input_dataset.ColumnMetrics(**_fields(m))
                        for name, m in metrics["columnMetrics"].items()
                    },
                    rowCount=metrics.get("rowCount"),
                )
            )
        inputs.append(
            InputDataset(
                namespace=data["namespace"],
                name=data["name"],
                inputFacets=input_facets,
            )
        )
    return RunEvent(
        eventType=RunState(event["eventType"]),
        eventTime=event["eventTime"],
        run=Run(runId=event["run"]["runId"]),
        job=Job(namespace=event["job"]["namespace"], name=event["job"]["name"]),
        producer=event["producer"],
        inputs=inputs,
    )


def _fields(facet: dict[str, Any]) -> dict[str, Any]:
    """A facet's fields without the ``_producer``/``_schemaURL`` every facet carries."""
    return {k: v for k, v in facet.items() if not k.startswith("_")}


class FakeMarquez:
    """Serves the lineage endpoint on a free port of 127.0.0.1 until ``close``.

    Attributes:
        url: the base URL (``http://127.0.0.1:PORT``).
        events: every accepted event, as parsed JSON, in order.
        refused: (status, reason) of every refused request.

    """

    def __init__(self, api_key: str | None = None) -> None:
        self.api_key = api_key
        self.events: list[dict[str, Any]] = []
        self.refused: list[tuple[int, str]] = []
        self._fail: deque[int] = deque()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                status, reason = fake._answer(self)
                body = b"" if status == 201 else json.dumps({"error": reason}).encode()
                self.send_response(status)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                return

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    def fail_next(self, *statuses: int) -> None:
        """Answer the next requests with these statuses, in order."""
        self._fail.extend(statuses)

    def _answer(self, request: BaseHTTPRequestHandler) -> tuple[int, str]:
        raw = request.rfile.read(int(request.headers.get("Content-Length") or 0))
        if self._fail:
            status = self._fail.popleft()
            self.refused.append((status, "scripted"))
            return status, "scripted"
        if request.path != PATH:
            return self._refuse(404, f"no endpoint {request.path}")
        if self.api_key and request.headers.get("Authorization") != f"Bearer {self.api_key}":
            return self._refuse(401, "missing or wrong bearer token")
        if not (request.headers.get("Content-Type") or "").startswith("application/json"):
            return self._refuse(415, "the body is not application/json")
        try:
            event = json.loads(raw)
            rebuild(event)
        except (ValueError, TypeError, KeyError) as error:
            return self._refuse(400, f"{type(error).__name__}: {error}")
        self.events.append(event)
        return 201, ""

    def _refuse(self, status: int, reason: str) -> tuple[int, str]:
        self.refused.append((status, reason))
        return status, reason

    def close(self) -> None:
        """Stop serving."""
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> FakeMarquez:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
