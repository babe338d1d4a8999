"""What every route shares: settings, store, access, templates, the broker and the clock."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass, field

from fastapi import Request
from starlette.templating import Jinja2Templates

from checks.settings.config import Settings
from checks.store.store import Store, utcnow
from worker.review.actions import Send
from worker.service.queue_records import QueuedRun
from worker.web.auth import Access


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
        clock: the current time (aware); replaceable in tests.
    """

    settings: Settings
    store: Store
    access: Access
    templates: Jinja2Templates
    send: Send
    clock: Callable[[], dt.datetime] = field(default=utcnow)


def web_of(request: Request) -> Web:
    """Return the app's shared ``Web``."""
    web: Web = request.app.state.web
    return web
