"""A source's settings checked against what Lookout reads, each problem at its place in the file.

An engine a URL names that no recipe reads (``oracle://``, ``postgres://``) is found
without opening anything, for ``lookout validate``, ``lookout run`` and ``lookout
sources check`` alike; a table a source's ``tables:`` lists that the database lacks is
found when the source opens. Both are ``SourceConfigError``: a mistake in the settings
(exit 2), placed at the key's line and column, with the closest name there is.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable
from typing import TYPE_CHECKING

from checks.errors import SourceConfigError
from checks.fields.rules import did_you_mean

if TYPE_CHECKING:
    from checks.settings.config import Settings

Place = Callable[[tuple[str | int, ...]], tuple[str | None, int | None, int | None]]
"""A key under one source (``("tables", 1)``) → the config file, line and column of its value."""

_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9.-]*)(?:\+[^:]*)?://")


def place_in(settings: Settings, name: str) -> Place:
    """Where the keys of source ``name`` are in the config file ``settings`` were read from."""
    return lambda key: settings.place(("sources", name, *key))


def config_error(
    name: str, key: tuple[str | int, ...], message: str, place: Place | None
) -> SourceConfigError:
    """``path:line:column: sources.NAME.KEY: message`` (the place left out when unknown)."""
    path, line, column = place(key) if place is not None else (None, None, None)
    field = ".".join(str(part) for part in ("sources", name, *key))
    return SourceConfigError(message, path=path, line=line, column=column, field=field)


def unknown_engine(url: str, supported: Collection[str]) -> str | None:
    """Why ``url`` names no engine Lookout reads, with the closest one; None when it names one.

    The engine is the URL's scheme before any ``+driver`` (SQLAlchemy's backend name), so
    ``postgres://`` is told ``did you mean 'postgresql'?``. A URL with no scheme is left to
    SQLAlchemy's own parsing (``not a valid SQLAlchemy URL``).
    """
    match = _SCHEME.match(url)
    if match is None:
        return None
    engine = match.group(1).lower()
    if engine in supported:
        return None
    return (
        f"unsupported database {engine!r}{did_you_mean(engine, sorted(supported))}: Lookout"
        f" reads {', '.join(sorted(supported))} through a URL (docs/engines.md)"
    )


def missing_tables(
    name: str, listed: list[str], found: Iterable[str], place: Place | None, shown: str
) -> SourceConfigError | None:
    """The first name of a source's ``tables:`` that the database lacks, at its item; else None.

    A name matches exactly, else in another case (``Orders`` for ``orders``). ``shown`` is
    the database as the message names it (its URL, password hidden).
    """
    names = list(found)
    lowered = {n.lower() for n in names}
    for index, table in enumerate(listed):
        if table not in names and table.lower() not in lowered:
            message = f"no table {table}{did_you_mean(table, names)} in {shown}"
            return config_error(name, ("tables", index), message, place)
    return None


def config_problems(
    settings: Settings, names: Iterable[str] | None = None
) -> list[SourceConfigError]:
    """Each problem of the sources ``names`` (default: every one) found without opening them.

    Today: a URL naming an engine no recipe reads.
    """
    from checks.settings.sources import SQLAlchemySource
    from checks.sources.recipes import BACKENDS

    found = []
    for name in settings.sources if names is None else names:
        config = settings.sources.get(name)
        if isinstance(config, SQLAlchemySource):
            why = unknown_engine(config.url, BACKENDS)
            if why is not None:
                found.append(config_error(name, ("url",), why, place_in(settings, name)))
    return found
