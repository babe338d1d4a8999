"""Operations endpoints: ``/healthz`` (no login, for probes) and ``/metrics`` (any role)."""

from __future__ import annotations

from typing import Annotated

import anyio
import anyio.to_thread
from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse, Response
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
from sqlalchemy import Engine, text
from sqlalchemy.exc import SQLAlchemyError

from checks.settings.review import Role
from worker.web.auth import Identity
from worker.web.context import web_of
from worker.web.roles import READ, requires

router = APIRouter(tags=["operations"])


_health: list[anyio.CapacityLimiter] = []


def _store_answers(engine: Engine) -> bool:
    try:
        with engine.connect() as conn:
            conn.execute(text("SELECT 1"))
    except SQLAlchemyError:
        return False
    return True


@router.get("/healthz", summary="Liveness and store reachability (no login needed)")
async def healthz(request: Request) -> JSONResponse:
    """Answer 200 ``{"status": "ok"}`` when the store answers, else 503 (no detail is shown).

    Its store check runs on threads of its own (``anyio.CapacityLimiter``), not
    in the pool the pages share, so a flood of slow requests (logins) does not
    hold it.
    """
    if not _health:
        _health.append(anyio.CapacityLimiter(4))
    engine = web_of(request).store.engine
    if not await anyio.to_thread.run_sync(_store_answers, engine, limiter=_health[0]):
        return JSONResponse({"status": "unavailable", "store": "unreachable"}, status_code=503)
    return JSONResponse({"status": "ok", "store": "ok"})


@router.get(
    "/metrics",
    summary="Prometheus metrics computed from the store at each scrape",
    response_class=Response,
)
def metrics(
    request: Request, _: Annotated[Identity, Depends(requires(Role.VIEWER, READ))]
) -> Response:
    """Return every metric of ``worker.web.metrics`` in the Prometheus text format."""
    registry: CollectorRegistry = request.app.state.metrics
    return Response(generate_latest(registry), media_type=CONTENT_TYPE_LATEST)
