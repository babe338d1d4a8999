"""The service's commands: ``lookout worker``, ``beat``, ``schedule`` and ``run-now``.

``register(app)`` adds them to the ``lookout`` Typer app (``worker.cli.app`` calls
it), so this module never imports ``worker.cli.app``. The Celery app is imported
only inside the commands that need it, after ``--config`` and
``--automations`` are put in the environment it reads its settings from.
"""

from __future__ import annotations

import datetime as dt
import json
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any
from zoneinfo import ZoneInfo

import typer

from checks.errors import ConfigError, StoreError
from worker.cli.layout import Column, Grid
from worker.cli.render import print_load_problems
from worker.cli.safe_text import SafeConsole

if TYPE_CHECKING:
    from checks.automation.loader import LoadResult
    from checks.automation.model import Automation
    from checks.settings.config import Settings

# The loader, the store, the dispatcher's slot code and Celery are imported
# inside the commands: `lookout --help` and the other commands never load them.

out = SafeConsole(highlight=False)
err = SafeConsole(stderr=True, highlight=False)
MAX_LISTED = 1000  # slots per automation ``schedule --between`` prints at most


def _settings(ctx: typer.Context) -> Settings:
    settings: Settings = ctx.obj.settings()
    return settings


def _export_options(ctx: typer.Context) -> None:
    """Hand ``--config`` / ``--automations`` to the Celery app, which reads the environment."""
    if ctx.obj.config is not None:
        os.environ["LOOKOUT_CONFIG"] = str(ctx.obj.config)
    if ctx.obj.automations is not None:
        os.environ["LOOKOUT_AUTOMATIONS_DIR"] = str(ctx.obj.automations)


def _load(ctx: typer.Context, settings: Settings, names: list[str]) -> LoadResult:
    """Load the automations and the monitors; print the problems of ``names`` (all when empty)."""
    from checks.automation.loader import load_automations
    from checks.automation.monitors import add_monitors, make_monitors, monitored_sources
    from checks.sources.pool import SourcePool

    loaded = load_automations(settings.automations_dir, known_sources=settings.sources.keys())
    monitored = monitored_sources(settings, names or None)
    if monitored:  # made from the catalogs, as the dispatcher makes them
        with SourcePool(settings) as pool:
            add_monitors(loaded, make_monitors(settings, pool.get, monitored))
    print_load_problems(err, loaded, names or None, validate=ctx.obj.validate_command())
    return loaded


def _pick(
    ctx: typer.Context, settings: Settings, loaded: LoadResult, names: list[str]
) -> list[Automation]:
    if not names:
        return list(loaded.automations)
    try:
        return [loaded.by_name(name) for name in names]
    except KeyError as missing:
        raise ConfigError(
            f"no valid automation named '{missing.args[0]}' in {settings.automations_dir}"
            f" (run '{ctx.obj.validate_command()}')"
        ) from None


_EARLIEST = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
_LATEST = dt.datetime(9000, 12, 31, 23, 59, 59, tzinfo=dt.UTC)
"""The instants ``--between`` takes: near year 1 or 9999 a slot's zone arithmetic overflows."""


def _instant(text: str) -> dt.datetime:
    try:
        value = dt.datetime.fromisoformat(text)
    except ValueError:
        raise ConfigError(f"not an ISO 8601 date or time: {text!r}") from None
    value = value if value.tzinfo else value.replace(tzinfo=dt.UTC)
    if not _EARLIEST <= value <= _LATEST:
        raise ConfigError(
            f"--between takes times from {_EARLIEST:%Y-%m-%d} to {_LATEST:%Y-%m-%d} (got {text!r})"
        )
    return value


def _window(start: str, end: str) -> tuple[dt.datetime, dt.datetime]:
    """``--between START END`` as instants (UTC unless an offset is given), START first.

    Raises:
        ConfigError: either is not ISO 8601 or is outside 1970–9000, or START is after END.

    """
    window = _instant(start), _instant(end)
    if window[0] > window[1]:
        raise ConfigError(f"--between START ({start}) is after END ({end})")
    return window


@dataclass(frozen=True)
class _Slot:
    automation: str
    zone: str
    at: dt.datetime

    @property
    def local(self) -> dt.datetime:
        return self.at.astimezone(ZoneInfo(self.zone))

    def to_dict(self) -> dict[str, Any]:
        return {
            "automation": self.automation,
            "timezone": self.zone,
            "local": self.local.isoformat(),
            "utc": self.at.astimezone(dt.UTC).isoformat(),
        }


def _slots(
    automations: list[Automation], count: int, between: tuple[dt.datetime, dt.datetime] | None
) -> tuple[list[_Slot], list[str]]:
    from worker.service.dispatch import due_slots
    from worker.service.slots import CronSchedule, next_occurrences

    slots: list[_Slot] = []
    notes: list[str] = []
    now = dt.datetime.now(dt.UTC)
    for automation in automations:
        schedule = CronSchedule.of(automation)
        if schedule is None or not automation.enabled:
            why = "no schedule: runs on demand only" if schedule is None else "disabled"
            notes.append(f"{automation.name}: {why}")
            continue
        if between is None:
            found = next_occurrences(schedule, now, count)
        else:
            start, end = between
            found = due_slots(schedule, start - dt.timedelta(microseconds=1), end, cap=MAX_LISTED)
            if len(found) == MAX_LISTED:
                notes.append(f"{automation.name}: showing the last {MAX_LISTED} slots only")
        slots.extend(_Slot(automation.name, automation.timezone, at) for at in found)
    return sorted(slots, key=lambda s: (s.at, s.automation)), notes


def schedule(
    ctx: typer.Context,
    names: Annotated[list[str] | None, typer.Argument(help="Automations; default all.")] = None,
    count: Annotated[
        int | None, typer.Option("--next", help="How many next slots each (default 5).", min=1)
    ] = None,
    between: Annotated[
        tuple[str, str] | None,
        typer.Option(
            "--between",
            help="START END (ISO 8601, UTC unless an offset is given): every slot in between.",
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="A JSON list of slots.")] = False,
) -> None:
    """Print the slots dispatch would create, local time and UTC (same code as dispatch)."""
    if count is not None and between is not None:
        raise ConfigError("give --next or --between, not both")
    settings = _settings(ctx)
    chosen = _pick(ctx, settings, _load(ctx, settings, names or []), names or [])
    window = _window(*between) if between else None
    slots, notes = _slots(chosen, count or 5, window)
    if as_json:
        out.print(json.dumps([s.to_dict() for s in slots]))
        return
    grid = Grid([Column("automation", title=True), Column("UTC"), Column("local time", flex=True)])
    for slot in slots:
        grid.add_row(
            slot.automation,
            slot.at.astimezone(dt.UTC).strftime("%Y-%m-%d %H:%M"),
            _local(slot.local, slot.zone),
        )
    grid.print(out)
    for note in notes:
        err.print(note)


def _local(local: dt.datetime, zone: str) -> str:
    """``2026-12-02 02:10 EST (America/New_York)``; the zone's name left out where it is ``UTC``.

    A narrow terminal breaks the line before the bracketed name, never inside
    the date-time (``worker.cli.no_break``) nor after a dangling separator.
    """
    shown = local.strftime("%Y-%m-%d %H:%M %Z")
    return shown if zone == local.strftime("%Z") else f"{shown} ({zone})"


def run_now(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="The automation to run.")],
    fresh: Annotated[
        bool,
        typer.Option(
            "--fresh", help="Ask the agent even when the pinned plan's evidence is unchanged."
        ),
    ] = False,
) -> None:
    """Queue an immediate run for the workers (the service must be running).

    When the broker cannot be reached it exits 2: the run stays queued, and
    the service's reaper sends it once the broker answers.
    """
    _export_options(ctx)
    settings = _settings(ctx)
    automation = _pick(ctx, settings, _load(ctx, settings, [name]), [name])[0]
    from kombu.exceptions import OperationalError

    from checks.store.store import Store
    from worker.service.broker import unreachable
    from worker.service.celery_app import source_queue
    from worker.service.dispatch import visibility_problem
    from worker.service.run_queue import RunQueue
    from worker.service.tasks import send_run

    problem = visibility_problem(automation, settings.service)
    if problem is not None:  # the rule dispatch applies to every scheduled run
        raise ConfigError(f"{automation.name} cannot be sent to the workers: {problem}")

    queue = RunQueue(Store(settings.store_url))
    run = queue.add_manual(  # its slot on the store's clock, which the reaper reads
        automation.name, automation.source, automation.definition(), now=queue.now(), fresh=fresh
    )
    if run is None:
        raise StoreError(f"{automation.name} already has a run for this instant; try again")
    try:
        send_run(run)
    except OperationalError as exc:  # left unsent: the service's reaper sends it (one rule)
        line = unreachable(settings.redis_url, str(exc), settings.secrets())
        raise ConfigError(
            f"{line}. Run {run.id} of {automation.name} is recorded and not sent:"
            " the service's reaper sends it once the broker answers"
        ) from None
    queue.mark_sent([run.id])
    out.print(
        f"queued run {run.id} of {automation.name} on {source_queue(automation.source)}; "
        f"see 'lookout show {run.id}'"
    )


def _warn_unreachable(waiting: str) -> None:
    """Say in one line when the service's broker does not answer (Celery then retries)."""
    from worker.service.broker import probe, unreachable
    from worker.service.celery_app import settings

    problem = probe(settings.redis_url)
    if problem is not None:
        line = unreachable(settings.redis_url, problem, settings.secrets())
        err.print(f"warning: {line}; {waiting}")


def worker(
    ctx: typer.Context,
    queues: Annotated[
        str | None,
        typer.Option(
            help="Comma-separated queues (default all: lookout.default, lookout.source.*)."
        ),
    ] = None,
    exclude_queues: Annotated[
        str | None,
        typer.Option(help="Comma-separated queues not to consume, e.g. lookout.default."),
    ] = None,
    concurrency: Annotated[
        int | None, typer.Option(help="Pool size (default: the number of CPUs).", min=1)
    ] = None,
    pool: Annotated[
        str, typer.Option(help="prefork (time limits enforced) or threads.")
    ] = "prefork",
    loglevel: Annotated[str, typer.Option(help="Celery log level.")] = "INFO",
) -> None:
    """Start a Celery worker that runs queued runs and the dispatcher.

    In a busy worker dispatch_due waits behind runs: in production give
    lookout.default a worker of its own (--queues lookout.default
    --concurrency 1) and --exclude-queues it from the others.
    """
    if pool not in ("prefork", "threads"):
        raise ConfigError(f"--pool must be prefork or threads, not '{pool}'")
    _export_options(ctx)
    from worker.service.celery_app import app

    _warn_unreachable("the worker waits for it")
    argv = ["worker", f"--loglevel={loglevel}", f"--pool={pool}"]
    if queues:
        argv.append(f"--queues={queues}")
    if exclude_queues:
        argv.append(f"--exclude-queues={exclude_queues}")
    if concurrency:
        argv.append(f"--concurrency={concurrency}")
    app.worker_main(argv=argv)


def beat(
    ctx: typer.Context,
    loglevel: Annotated[str, typer.Option(help="Celery log level.")] = "INFO",
) -> None:
    """Start Celery beat: it sends dispatch_due every service.dispatch_interval_s."""
    _export_options(ctx)
    from worker.service.celery_app import app

    _warn_unreachable("beat waits for it")
    app.start(argv=["beat", f"--loglevel={loglevel}"])


def register(app: typer.Typer) -> None:
    """Add ``worker``, ``beat``, ``schedule`` and ``run-now`` to the ``lookout`` app."""
    app.command()(worker)
    app.command()(beat)
    app.command()(schedule)
    app.command("run-now")(run_now)
