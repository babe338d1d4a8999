"""One pass of ``lookout suggest`` over a source: profile its tables, relate them, suggest.

Each table gets ``budget_s`` seconds for its profile (``profile.profile_table``);
the foreign-key candidates between them get the same again. A table whose
profile or suggestions fail, for any reason, is reported with why (``failed``),
never suggested from a partial profile, and never stops the others. A table
whose name has leading or trailing spaces is reported so, not profiled: the
automation loader strips names, so its checks would name another table.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from checks.clock import utcnow
from checks.errors import ConfigError, QueryError
from checks.fields.rules import did_you_mean
from checks.sources.base import Source
from checks.suggest.profile import TableProfile, profile_table
from checks.suggest.relations import foreign_keys
from checks.suggest.rules import Suggestion, suggest
from checks.suggest.sampling import SAMPLE_ABOVE

BUDGET_S = 60.0
"""Seconds each table's profile may take (and the foreign-key candidates, together)."""


@dataclass
class TableSuggestions:
    """What one table gave: its profile, its suggested checks, notes (what was not suggested)."""

    profile: TableProfile
    suggestions: list[Suggestion]
    notes: list[str] = field(default_factory=list)

    @property
    def problems(self) -> list[str]:
        """The real problems its suggestions reveal (each fails on today's data)."""
        return [s.problem for s in self.suggestions if s.problem]


@dataclass
class SourcePass:
    """The whole pass: each table's suggestions, and the tables that failed with why."""

    tables: list[TableSuggestions]
    failed: dict[str, str]


def suggest_source(
    source: Source,
    tables: Sequence[str] = (),
    *,
    budget_s: float = BUDGET_S,
    now: dt.datetime | None = None,
    sample_above: int = SAMPLE_ABOVE,
    progress: Callable[[str], None] | None = None,
) -> SourcePass:
    """Profile ``tables`` of ``source`` (default every data set) and suggest checks for each.

    ``now``: the profile's time (default the clock's); ``sample_above``: see
    ``profile.profile_table``; ``progress`` is told each step in a few words.

    Raises:
        ConfigError: a table named is not in the source's catalog (its closest name said).
        SourceError: the catalog cannot be read.
    """
    at = now or utcnow()
    catalog = {d.name: d for d in source.catalog()}
    for name in tables:
        if name not in catalog:
            raise ConfigError(
                f"source {source.name} has no table {name!r}{did_you_mean(name, catalog)}"
                f" (it has: {', '.join(catalog)})"
            )
    chosen = [catalog[n] for n in (tables or list(catalog))]
    profiles: list[TableProfile] = []
    failed: dict[str, str] = {}
    for data_set in chosen:
        if data_set.name != data_set.name.strip():
            failed[data_set.name] = (
                "its name has leading or trailing spaces, which the loader strips"
            )
            continue
        if progress:
            progress(f"profiling {data_set.name}")
        try:
            profiled = profile_table(
                source, data_set, budget_s=budget_s, now=at, sample_above=sample_above
            )
            profiles.append(profiled)
        except Exception as error:  # any table's failure is its own, never the others'
            failed[data_set.name] = _why(error)
    if progress:
        progress("looking for foreign keys")
    try:
        declared = source.foreign_keys()
        keys, skipped = foreign_keys(source, profiles, budget_s=budget_s, declared=declared)
    except Exception as error:  # no relationships checks, every other one still suggested
        keys, skipped = (
            [],
            [f"{p.name}.*: foreign keys not searched: {_why(error)}" for p in profiles],
        )
    done = []
    for profile in profiles:
        try:
            found, notes = suggest(profile, keys)
        except Exception as error:
            failed[profile.name] = _why(error)
            continue
        notes += [s for s in skipped if s.startswith(f"{profile.name}.")]
        done.append(TableSuggestions(profile, found, notes))
    return SourcePass(done, failed)


def _why(error: Exception) -> str:
    """An error in words: a query's own message; any other error with its class (a bug)."""
    return str(error) if isinstance(error, QueryError) else f"{type(error).__name__}: {error}"
