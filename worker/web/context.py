"""What every route shares: settings, store, access, templates, the broker and the clock."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Annotated

from fastapi import Path, Request
from starlette.templating import Jinja2Templates

from checks.clock import utcnow
from checks.settings.config import Settings
from checks.store.store import Store
from worker.review.actions import Send
from worker.service.queue_records import QueuedRun
from worker.web.auth import Access
from worker.web.login_limits import LoginLimits
from worker.web.session import SessionRegistry

MAX_RUN_ID = 2**63 - 1
RunId = Annotated[int, Path(ge=1, le=MAX_RUN_ID)]
"""A run id in a path: beyond what the store can hold, or not a number, it is a 404."""


def celery_send(run: QueuedRun) -> None:
    """Send a queued run's message through the Celery app (imported on first use)."""
    from worker.service.tasks import send_run

    send_run(run)


@dataclass
class Web:
    """What the routes share, kept on ``app.state.web``.

    Attributes:
        settings: the loaded settings.
        store: the report store.
        access: users, tokens and the local mode.
        templates: the pages' templates.
        send: sends a queued run to the broker ("run now").
        sessions: the logged-in sessions in the store (revoked at logout).
        login_limits: failed logins per client and user, and the backoff.
        clock: the current time (aware); replaceable in tests.
    """

    settings: Settings
    store: Store
    access: Access
    templates: Jinja2Templates
    send: Send
    sessions: SessionRegistry
    login_limits: LoginLimits = field(default_factory=LoginLimits)
    clock: Callable[[], dt.datetime] = field(default=utcnow)


def web_of(request: Request) -> Web:
    """Return the app's shared ``Web``."""
    web: Web = request.app.state.web
    return web
