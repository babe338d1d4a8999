"""``lookout notify …``: send a test message, flush held alerts, read the delivery log.

A thin edge over ``worker.alerts.delivery`` and ``worker.alerts.delivery_log``; registered on
the main app by ``register(app)``. Webhook URLs never appear in the output:
channels are shown by name and type, and errors are stored redacted.

Exit status: 0 done; 1 a test message was not delivered; 2 a configuration
error (unknown channel, bad config).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.text import Text

from checks.errors import ConfigError, StoreError
from worker.cli.safe_text import SafeConsole, clean, wrap_text

if TYPE_CHECKING:
    from checks.settings.config import Settings
    from checks.store.store import Store
    from worker.alerts.delivery_log import DeliveryRecord

# The settings, the store and the senders are imported inside the commands:
# `lookout --help` and the other commands never load them.

EXIT_FAILED, EXIT_CONFIG = 1, 2

out = SafeConsole(highlight=False)

notify_app = typer.Typer(
    help="Chat alerts: send a test message, flush held alerts, show deliveries.",
    no_args_is_help=True,
)


def register(app: typer.Typer) -> None:
    """Add the ``notify`` command group to the main ``lookout`` app."""
    app.add_typer(notify_app, name="notify")


def _settings(ctx: typer.Context) -> Settings:
    """Return settings from the main app's context object (``--config``), else the defaults."""
    from checks.settings.config import load_settings

    obj: Any = ctx.obj
    return obj.settings() if hasattr(obj, "settings") else load_settings()


def _store(settings: Settings) -> Store:
    from checks.store.store import Store

    try:
        return Store(settings.store_url)
    except StoreError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(EXIT_CONFIG) from None


def _plural(n: int, noun: str, plural: str | None = None) -> str:
    return f"{n} {noun if n == 1 else plural or noun + 's'}"


def _print(record: DeliveryRecord) -> None:
    """One delivery: a line, and its (redacted) error on indented lines below, wrapped."""
    run = f"run {record.run_id}" if record.run_id is not None else "test"
    code = f" HTTP {record.http_status}" if record.http_status is not None else ""
    held = f" until {record.not_before.isoformat()}" if record.not_before else ""
    out.print(
        f"{record.status:<13} {run} {record.event} -> {record.channel} ({record.channel_type})"
        f"{code}{held}, {_plural(record.attempts, 'attempt')}"
    )
    if record.error:
        _indented(f"error: {record.error}")


def _indented(line: str) -> None:
    text = Text(clean(line))
    for part in wrap_text(out, text, max(1, out.width - 4)):
        out.print(Text("    ") + part, soft_wrap=True)


def _nothing_logged(run: int | None, status: str | None) -> str:
    """The line ``notify log`` prints when no delivery matches: what would make one."""
    only = [
        f"{flag} {value}"
        for flag, value in (("--run", run), ("--status", status))
        if value is not None
    ]
    where = f" matching {' '.join(only)}" if only else ""
    return (
        f"no deliveries recorded{where}: alerts are recorded as they are sent by the service"
        " or 'lookout run NAME --notify', and 'lookout notify test CHANNEL' sends one"
        " (see the README's 'Alerts to chat')"
    )


@notify_app.command("test")
def test_channel(
    ctx: typer.Context,
    channel: Annotated[str, typer.Argument(help="A channel name from the config's channels.")],
) -> None:
    """Send a sample message to CHANNEL; exit 1 when it was not delivered."""
    from worker.alerts.delivery import send_test

    try:
        settings = _settings(ctx)
    except ConfigError as exc:
        typer.echo(f"error: {exc.location_message()}", err=True)
        raise typer.Exit(EXIT_CONFIG) from None
    if channel not in settings.channels:
        known = ", ".join(sorted(settings.channels)) or "none are configured"
        typer.echo(f"error: unknown channel {channel!r}; known: {known}", err=True)
        raise typer.Exit(EXIT_CONFIG)
    store = _store(settings)
    try:
        record = send_test(store, settings, channel)
    finally:
        store.close()
    _print(record)
    if record.status != "sent":
        raise typer.Exit(EXIT_FAILED)


@notify_app.command("flush")
def flush(ctx: typer.Context) -> None:
    """Send alerts held by quiet hours whose window has ended, and close stale ones."""
    from worker.alerts.delivery import deliver_due

    settings = _settings(ctx)
    store = _store(settings)
    try:
        records = deliver_due(store, settings)
    finally:
        store.close()
    for record in records:
        _print(record)
    out.print(f"{_plural(len(records), 'delivery', 'deliveries')} handled")


@notify_app.command("log")
def log(
    ctx: typer.Context,
    run: Annotated[int | None, typer.Option("--run", help="Only this run's deliveries.")] = None,
    status: Annotated[
        str | None,
        typer.Option("--status", help="sent, fallback_sent, failed, deferred or sending."),
    ] = None,
    limit: Annotated[int, typer.Option("--limit", min=1)] = 50,
    attempts: Annotated[bool, typer.Option("--attempts", help="Show every attempt.")] = False,
    as_json: Annotated[
        bool, typer.Option("--json", help="A JSON list, each delivery with its attempts.")
    ] = False,
) -> None:
    """Show recent deliveries, newest first (errors are redacted)."""
    from worker.alerts.delivery_log import DELIVERY_STATUSES, attempts_of, list_deliveries

    if status is not None and status not in DELIVERY_STATUSES:  # else it lists nothing, exit 0
        known = ", ".join(DELIVERY_STATUSES)
        raise ConfigError(f"--status must be one of {known}, not {status!r}")
    settings = _settings(ctx)
    store = _store(settings)
    try:
        records = list_deliveries(store.engine, run_id=run, status=status, limit=limit)
        if as_json:
            docs = []
            for record in records:
                doc = record.to_dict()
                tries = attempts_of(store.engine, record.id)
                doc["attempts_detail"] = [{**t.__dict__, "at": t.at.isoformat()} for t in tries]
                docs.append(doc)
            out.print(json.dumps(docs))
            return
        if not records:
            out.print(_nothing_logged(run, status))
        for record in records:
            tries = attempts_of(store.engine, record.id) if attempts else []
            _print(record)
            for t in tries:
                code = f" HTTP {t.http_status}" if t.http_status is not None else ""
                error = f": {t.error}" if t.error else ""
                _indented(f"#{t.number} {t.kind} {t.outcome}{code} {t.at.isoformat()}{error}")
    finally:
        store.close()
