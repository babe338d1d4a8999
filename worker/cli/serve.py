"""``lookout serve``: the review page and its JSON API, with uvicorn.

``register(app)`` adds the command to the ``lookout`` Typer app (``worker.cli.app``
calls it), so this module never imports ``worker.cli.app``.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Annotated

import typer

from checks.errors import ConfigError

if TYPE_CHECKING:
    from checks.settings.config import Settings


def check_bind(host: str, *, local: bool, settings: Settings) -> None:
    """Refuse what cannot be served safely.

    Raises:
        ConfigError: the local mode on a non-loopback address, or no way to
            log in at all (no users, no tokens, no local mode).
    """
    from worker.web.auth import is_loopback  # the web stack: only for serve

    if local and not is_loopback(host):
        raise ConfigError(
            f"--local serves without login, so it listens only on a loopback address "
            f"(127.0.0.1, ::1, localhost), not on {host}; configure review.users instead"
        )
    if not local and not settings.review.users and not settings.review.tokens:
        raise ConfigError(
            "nobody can log in: add review.users (or review.tokens) to the config, "
            "or pass --local on a loopback address",
            field="review.users",
        )


def serve(
    ctx: typer.Context,
    host: Annotated[
        str | None, typer.Option(help="Address to listen on (default review.host, 127.0.0.1).")
    ] = None,
    port: Annotated[
        int | None, typer.Option(help="TCP port (default review.port, 8000).", min=1, max=65535)
    ] = None,
    local: Annotated[
        bool,
        typer.Option(
            "--local", help="No login, for one person on this machine; loopback addresses only."
        ),
    ] = False,
) -> None:
    """Serve the review page and its JSON API (login required unless --local)."""
    if ctx.obj.config is not None:  # "run now" sends through the Celery app, which reads these
        os.environ["LOOKOUT_CONFIG"] = str(ctx.obj.config)
    if ctx.obj.automations is not None:
        os.environ["LOOKOUT_AUTOMATIONS_DIR"] = str(ctx.obj.automations)
    settings: Settings = ctx.obj.settings()
    bind_host = host or settings.review.host
    local = local or settings.review.local
    check_bind(bind_host, local=local, settings=settings)
    import uvicorn

    from worker.web import create_app

    app = create_app(settings, local=local)
    typer.echo(
        f"Lookout review on http://{bind_host}:{port or settings.review.port}/"
        + (" (local mode: no login)" if local else ""),
        err=True,
    )
    uvicorn.run(
        app,
        host=bind_host,
        port=port or settings.review.port,
        proxy_headers=False,
        server_header=False,
        log_level="info",
    )


def register(app: typer.Typer) -> None:
    """Add ``serve`` to the ``lookout`` app."""
    app.command()(serve)
