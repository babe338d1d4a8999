"""Operations endpoints: ``/healthz`` (no login, for probes) and ``/metrics`` (login or token)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse, Response
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
from sqlalchemy import text
from sqlalchemy.exc import SQLAlchemyError

from worker.web.auth import Identity, api_identity
from worker.web.context import web_of

router = APIRouter(tags=["operations"])


@router.get("/healthz", summary="Liveness and store reachability (no login needed)")
def healthz(request: Request) -> JSONResponse:
    """Answer 200 ``{"status": "ok"}`` when the store answers, else 503 (no detail is shown)."""
    try:
        with web_of(request).store.engine.connect() as conn:
            conn.execute(text("SELECT 1"))
    except SQLAlchemyError:
        return JSONResponse({"status": "unavailable", "store": "unreachable"}, status_code=503)
    return JSONResponse({"status": "ok", "store": "ok"})


@router.get(
    "/metrics",
    summary="Prometheus metrics computed from the store at each scrape",
    response_class=Response,
)
def metrics(request: Request, _: Annotated[Identity, Depends(api_identity)]) -> Response:
    """Return every metric of ``worker.web.metrics`` in the Prometheus text format."""
    registry: CollectorRegistry = request.app.state.metrics
    return Response(generate_latest(registry), media_type=CONTENT_TYPE_LATEST)
