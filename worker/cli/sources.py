"""``lookout sources check [NAME]`` and ``lookout sources list``: what each source is, seen live.

``check`` opens each configured source (or the one named) as a run would, and prints
its engine and version, the tables it offers, whether its role could write anywhere
(``Source.write_warnings``: each grant named) and how long a ``SELECT 1`` through the
guarded path took. Registered on the main app by ``register(app)``.

Exit status: 0 every source checked is reachable and read-only; 1 a source's role
holds a write grant; 2 a configuration error (an unknown name, an engine Lookout does
not read, a listed table the database lacks, a plain-text password); 3 a source
cannot be reached. The highest that applies wins.
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Annotated, Any

import typer

from checks.errors import ConfigError, LookoutError
from worker.cli.durations import duration_text
from worker.cli.safe_text import SafeConsole

if TYPE_CHECKING:
    from checks.settings.config import Settings

EXIT_OK, EXIT_WRITES, EXIT_CONFIG, EXIT_UNREACHABLE = 0, 1, 2, 3

SHOWN_TABLES = 10
"""Table names printed per source unless ``--all``; the rest are counted."""

out = SafeConsole(highlight=False)

sources_app = typer.Typer(
    help="The configured sources: list them, or connect and check each.",
    no_args_is_help=True,
)


def register(app: typer.Typer) -> None:
    """Add the ``sources`` command group to the main ``lookout`` app."""
    app.add_typer(sources_app, name="sources")


@dataclass
class Checked:
    """What ``sources check`` found of one source (its ``--json`` shape, one object each)."""

    name: str
    status: str = "ok"  # ok | writes | config_error | unreachable
    engine: str | None = None
    tables: list[str] = field(default_factory=list)
    read_only: str | None = None
    grants_read: bool = False
    write_warnings: list[str] = field(default_factory=list)
    first_query_ms: float | None = None
    error: str | None = None

    @property
    def exit_status(self) -> int:
        """This source's part of the command's exit status."""
        return {
            "ok": EXIT_OK,
            "writes": EXIT_WRITES,
            "config_error": EXIT_CONFIG,
            "unreachable": EXIT_UNREACHABLE,
        }[self.status]


def check_source(name: str, settings: Settings) -> Checked:
    """Open source ``name`` and read its engine, tables, write grants and first query's time.

    Never raises for the source's own failures: a problem of its settings is
    ``config_error``, any other failure to open or read it ``unreachable``, with the
    error's message (passwords redacted).
    """
    from checks.settings.config import redact
    from checks.sources import open_source
    from checks.sources.source_config import config_problems

    found = Checked(name)
    problems = config_problems(settings, [name])
    if problems:
        found.status, found.error = "config_error", str(problems[0])
        return found
    try:
        with open_source(name, settings.sources[name], settings) as source:
            found.engine = source.engine_version()
            found.tables = [d.name for d in source.catalog()]
            found.read_only = source.read_only_by()
            found.grants_read = source.reads_grants()
            found.write_warnings = source.write_warnings()
            started = time.monotonic()
            source.query("SELECT 1", max_rows=1)
            found.first_query_ms = round((time.monotonic() - started) * 1000, 1)
    except ConfigError as error:
        found.status, found.error = "config_error", redact(str(error), settings.secrets())
        return found
    except LookoutError as error:
        found.status, found.error = "unreachable", redact(str(error), settings.secrets())
        return found
    if found.write_warnings:
        found.status = "writes"
    return found


def _settings(ctx: typer.Context) -> Settings:
    from checks.settings.config import load_settings

    obj: Any = ctx.obj
    return obj.settings() if hasattr(obj, "settings") else load_settings()


@sources_app.command("check")
def check(
    ctx: typer.Context,
    name: Annotated[str | None, typer.Argument(help="One source; default every one.")] = None,
    show_all: Annotated[
        bool, typer.Option("--all", help=f"List every table, not the first {SHOWN_TABLES}.")
    ] = False,
    as_json: Annotated[
        bool, typer.Option("--json", help="One JSON list, one object per source.")
    ] = False,
) -> None:
    """Connect to each source: engine and version, tables, write grants, first query's time."""
    settings = _settings(ctx)
    if name is not None and name not in settings.sources:
        from checks.fields.rules import did_you_mean

        known = sorted(settings.sources)
        raise ConfigError(
            f"no source {name!r}{did_you_mean(name, known)}; configured: "
            f"{', '.join(known) or 'none'}"
        )
    names = [name] if name is not None else list(settings.sources)
    results = []
    for each in names:
        checked = check_source(each, settings)
        results.append(checked)
        if not as_json:
            for line in _lines(checked, show_all=show_all):
                out.print(line, markup=False)
    if as_json:
        out.print(json.dumps([asdict(r) for r in results]), markup=False, soft_wrap=True)
    else:
        out.print(_totals(results), markup=False)
    raise typer.Exit(max((r.exit_status for r in results), default=EXIT_OK))


@sources_app.command("list")
def list_sources(ctx: typer.Context) -> None:
    """Each configured source's name and type, without connecting."""
    from checks.settings.sources import SQLAlchemySource

    settings = _settings(ctx)
    for each, config in settings.sources.items():
        if isinstance(config, SQLAlchemySource):
            from sqlalchemy.engine import make_url

            try:
                where = make_url(config.url).render_as_string(hide_password=True)
            except Exception:  # an unparsable URL: shown as written, with secrets redacted
                from checks.settings.config import redact

                where = redact(config.url, settings.secrets())
        else:
            where = config.database or f"{len(config.tables)} files"
        out.print(f"{each}: {config.type} {where}", markup=False)


def _lines(checked: Checked, *, show_all: bool) -> list[str]:
    """One source's lines: its engine, then tables, writes and first query, indented."""
    if checked.error is not None:
        why = "configuration error" if checked.status == "config_error" else "cannot be reached"
        return [f"{checked.name}: {why}", f"  error: {checked.error}"]
    tables = checked.tables
    shown = tables if show_all else tables[:SHOWN_TABLES]
    more = len(tables) - len(shown)
    listed = ", ".join(shown) + (f" and {more} more (--all lists them)" if more else "")
    noun = "table" if len(tables) == 1 else "tables"
    lines = [
        f"{checked.name}: {checked.engine}",
        f"  {len(tables)} {noun}" + (f": {listed}" if tables else ""),
    ]
    lines.append(f"  read-only: {checked.read_only}")
    if checked.grants_read and not checked.write_warnings:
        lines.append("  grants: none that write")
    lines += [f"  warning: {w}" for w in checked.write_warnings]
    ms = checked.first_query_ms or 0.0
    lines.append(f"  first query: SELECT 1 through the guard in {duration_text(ms / 1000)}")
    return lines


def _totals(results: list[Checked]) -> str:
    """``2 sources checked: 1 read-only, 1 with write grants, 0 unreachable, 0 misconfigured``."""
    by = {s: sum(r.status == s for r in results) for s in ("ok", "writes", "unreachable")}
    bad = sum(r.status == "config_error" for r in results)
    noun = "source" if len(results) == 1 else "sources"
    return (
        f"{len(results)} {noun} checked: {by['ok']} read-only, {by['writes']} with write"
        f" grants, {by['unreachable']} unreachable, {bad} misconfigured"
    )
