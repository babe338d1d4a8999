"""Monitors: the automations a source's ``monitor:`` makes, one per watched table, at load.

A source with ``monitor:`` (``checks.settings.monitor``) gets, for each table
it watches, one automation named ``monitor:SOURCE.TABLE`` holding up to three
typed checks, made from the source's catalog when the automations load:

- ``freshness``: a ``freshness`` check on the table's freshness column
  (``freshness_column``) with ``max_age`` the monitor's; a table with no
  date or timestamp column is not watched for freshness (a load warning says so);
- ``volume``: ``row_count`` with ``expect: anomaly``: the table's row count
  against its own counts in earlier runs;
- ``schema``: ``schema`` with ``changes: forbid`` (or ``warn``): its columns
  and types against the last run's.

They are ``Automation`` objects like those read from files, so ``lookout
run``, ``validate``, ``--all``, the scheduler, the review page, alerts and
history treat them as any other; their ``path`` and ``line`` are the config
file's ``monitor:`` key. A problem (a listed table the source lacks, a source
that cannot be read) is an ``AutomationError`` at its place in the config file.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from checks.automation.load_result import LoadResult
from checks.automation.model import Automation
from checks.errors import AutomationError, LookoutError
from checks.fields.rules import did_you_mean
from checks.settings.monitor import Monitor
from checks.sources import Source
from checks.sql.catalog import Column, DataSet
from checks.sql.types import family

if TYPE_CHECKING:
    from checks.settings.config import Settings

PREFIX = "monitor:"
"""Every monitor's name starts with it (no automation file's name can: it is a slug)."""

NAME_LIMIT = 64
"""The longest automation name the store keeps (``runs.automation``)."""

Sources = Callable[[str], Source]
"""A source's name → the open source (``SourcePool.get``; raises ``LookoutError``)."""

_NEWEST = re.compile(
    r"(updated|modified|changed|loaded|ingested|inserted|synced|refreshed)(_?(at|on|time|ts))?$"
    r"|^(last_|_)?(updated|modified|loaded|ingested)",
    re.IGNORECASE,
)
_CREATED = re.compile(r"(created|event|occurred)(_?(at|on|time|ts))?$", re.IGNORECASE)
_TIMELY = re.compile(r"(_at|_time|_ts|timestamp|^time|time$)", re.IGNORECASE)


@dataclass
class Monitors:
    """What making the monitors found: the automations, problems and warnings."""

    automations: list[Automation] = field(default_factory=list)
    errors: list[AutomationError] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def monitor_name(source: str, table: str) -> str:
    """``monitor:SOURCE.TABLE``."""
    return f"{PREFIX}{source}.{table}"


def monitored_sources(settings: Settings, names: Iterable[str] | None = None) -> list[str]:
    """The sources with ``monitor:`` (those of ``names`` only, when given: ``monitor:S.T``)."""
    wanted = None if names is None else {_source_of(n) for n in names}
    return [
        name
        for name, config in settings.sources.items()
        if getattr(config, "monitor", None) is not None and (wanted is None or name in wanted)
    ]


def _source_of(name: str) -> str | None:
    if not name.startswith(PREFIX):
        return None
    return name[len(PREFIX) :].split(".", 1)[0]


def freshness_column(columns: Sequence[Column], dialect: str) -> Column | None:
    """The column whose newest value says when the table last changed, or None.

    Among the columns of a timestamp family (with or without a zone; a date
    only when there is none), the first whose name says the row was updated
    or loaded (``updated_at``, ``loaded_at``, ``_ingested``…), else created
    (``created_at``, ``event_time``), else named like a time (``…_at``,
    ``…_time``, ``timestamp``), else the first in the table's order.
    """
    stamps = [c for c in columns if family(c.type, dialect) in ("timestamp", "timestamptz")]
    found = stamps or [c for c in columns if family(c.type, dialect) == "date"]
    for rule in (_NEWEST, _CREATED, _TIMELY):
        for column in found:
            if rule.search(column.name):
                return column
    return found[0] if found else None


def monitor_checks(
    monitor: Monitor, table: DataSet, dialect: str
) -> tuple[list[dict[str, Any]], str | None]:
    """A watched table's checks as YAML data, and why freshness is not watched (or None)."""
    checks: list[dict[str, Any]] = []
    skipped = None
    if monitor.max_age is not None:
        column = freshness_column(table.columns, dialect)
        if column is None:
            skipped = "no date or timestamp column: freshness is not watched"
        else:
            spec = {"table": table.name, "column": column.name, "max_age": monitor.max_age}
            checks.append({"name": "freshness", "freshness": spec})
    if monitor.volume:
        checks.append({"name": "volume", "row_count": {"table": table.name}, "expect": "anomaly"})
    if monitor.schema_ is not False:
        changes = "warn" if monitor.schema_ == "warn" else "forbid"
        checks.append({"name": "schema", "schema": {"table": table.name, "changes": changes}})
    return checks, skipped


def make_monitors(
    settings: Settings, open_source: Sources, sources: Collection[str] | None = None
) -> Monitors:
    """The monitors of every source with ``monitor:`` (only ``sources``, when given).

    Args:
        settings: the config (its sources' ``monitor:``, and where each is in the file).
        open_source: the open source of a name (``SourcePool.get``): its catalog and dialect.
        sources: the sources to make them for; None: every monitored one.

    Never raises: a source that cannot be read, or a listed table it lacks, is
    an error at its place in the config file; the other sources' monitors stand.
    """
    found = Monitors()
    for name in monitored_sources(settings):
        if sources is not None and name not in sources:
            continue
        monitor = getattr(settings.sources[name], "monitor", None)
        assert isinstance(monitor, Monitor)
        try:
            source = open_source(name)
            catalog = list(source.catalog())
        except LookoutError as exc:
            found.errors.append(_error(settings, name, (), f"cannot read the catalog: {exc}"))
            continue
        _one_source(settings, name, monitor, catalog, source.dialect, found)
    return found


def _one_source(
    settings: Settings,
    name: str,
    monitor: Monitor,
    catalog: list[DataSet],
    dialect: str,
    found: Monitors,
) -> None:
    by_name = {data_set.name: data_set for data_set in catalog}
    tables: list[DataSet] = []
    if monitor.tables == "all":
        tables = list(catalog)
    else:
        for index, table in enumerate(monitor.tables):
            if table in by_name:
                tables.append(by_name[table])
                continue
            message = f"source {name} has no table {table!r}{did_you_mean(table, list(by_name))}"
            found.errors.append(_error(settings, name, ("tables", index), message))
    path, line, _ = settings.place(("sources", name, "monitor"))
    for data_set in tables:
        auto_name = monitor_name(name, data_set.name)
        if len(auto_name) > NAME_LIMIT:
            message = f"{auto_name}: a monitor's name is at most {NAME_LIMIT} characters"
            found.errors.append(_error(settings, name, ("tables",), message))
            continue
        checks, skipped = monitor_checks(monitor, data_set, dialect)
        if skipped is not None:
            found.warnings.append(f"{path or 'config'}:{line or 1}: {auto_name}: {skipped}")
        if not checks:
            continue
        data = {
            "name": auto_name,
            "description": f"Lookout's monitor of {data_set.name} in {name}",
            "source": name,
            "schedule": monitor.schedule,
            "timezone": monitor.timezone,
            "notify": list(monitor.notify),
            "tags": ["monitor"],
            "checks": checks,
            "path": path or "config",
            "line": line or 1,
        }
        try:
            made = Automation.model_validate(data, context={"monitor": True})
        except ValidationError as exc:  # a check the catalog's names cannot make
            message = str(exc.errors()[0]["msg"]).removeprefix("Value error, ")  # pydantic's
            found.errors.append(_error(settings, name, (), f"{auto_name}: {message}"))
            continue
        found.automations.append(made)


def _error(
    settings: Settings, source: str, key: tuple[str | int, ...], message: str
) -> AutomationError:
    loc = ("sources", source, "monitor", *key)
    path, line, column = settings.place(loc)
    dotted = ".".join(str(part) for part in loc)
    return AutomationError(message, path=path, line=line, column=column, field=dotted)


def add_monitors(loaded: LoadResult, monitors: Monitors) -> None:
    """Put the monitors, their problems and warnings into what a load of files found."""
    loaded.automations.extend(monitors.automations)
    loaded.errors.extend(monitors.errors)
    loaded.warnings.extend(monitors.warnings)
