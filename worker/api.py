"""Lookout from Python: run an automation and get its report, as ``lookout run`` does.

For orchestrators (an Airflow task, a Dagster op or asset) and scripts::

    from worker.api import Lookout

    with Lookout(config="config/lookout.yaml") as lookout:
        report = lookout.run("orders-amounts")     # a checks.report.RunReport
        code = lookout.exit_code([report])         # 0 Clear, 1 Needs attention, 3 error

or in one call, ``worker.api.run("orders-amounts")``. Each run takes the one
run lifecycle of ``lookout run`` and the service
(``checks.run_lifecycle.run_and_store``: the row started, the run, the report
stored fenced, its incidents moved), then, as ``lookout run`` does, its
OpenLineage events are sent when ``lineage.url`` is set and, with
``notify=True``, its alerts delivered (``lookout run --notify``).

The distribution is ``lookout``, its import packages ``checks`` and
``worker`` (the layout's two rooms); the API lives here, above the alerts and
lineage it calls and below the command line, which reads its exit codes.

Exit codes (``ExitCode``) are the command line's and stay as they are
(docs/cli.md): 0 all Clear, 1 any Needs attention, 2 a configuration error,
3 any run in error, 4 an internal error; the highest that applies wins and a
skipped run counts for none. Errors are raised, never returned: a bad config
or an unknown automation is a ``checks.errors.ConfigError``; a store that
cannot keep the run a ``checks.errors.StoreError``.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from enum import IntEnum
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING

from checks.errors import ConfigError
from checks.report import Finding, RunReport, Status

if TYPE_CHECKING:
    from checks.automation.load_result import LoadResult
    from checks.automation.model import Automation
    from checks.settings.config import Settings
    from checks.sources.pool import SourcePool
    from checks.store.store import Store

log = logging.getLogger("lookout.api")


class ExitCode(IntEnum):
    """The exit status of a batch of runs: the ``lookout`` command line's (docs/cli.md)."""

    CLEAR = 0
    NEEDS_ATTENTION = 1
    CONFIG_ERROR = 2
    RUN_ERROR = 3
    INTERNAL_ERROR = 4


def exit_code(reports: Iterable[RunReport], config_errors: int = 0) -> ExitCode:
    """The highest status that applies: a run in error, a config error, a Needs attention.

    ``config_errors`` counts the problems found beside the runs (bad files with
    ``--all``, a source no recipe reads); skipped runs count for nothing.
    """
    reports = list(reports)
    if any(r.status == Status.ERROR for r in reports):
        return ExitCode.RUN_ERROR
    if config_errors:
        return ExitCode.CONFIG_ERROR
    if any(r.finding == Finding.NEEDS_ATTENTION for r in reports):
        return ExitCode.NEEDS_ATTENTION
    return ExitCode.CLEAR


class Lookout:
    """Runs automations in this process and stores their reports, as ``lookout run`` does.

    Settings are read once, as the command line reads them (``config`` or
    ``LOOKOUT_CONFIG``, then ``LOOKOUT_*`` overrides; ``automations`` wins over
    both); the automation files are read again at each run, so a long-lived
    process sees their changes. The sources and the store open at the first
    run and stay open until ``close`` (or the end of a ``with`` block).

    Raises:
        ConfigError: the config file is missing or invalid (from the constructor).
    """

    def __init__(
        self,
        config: str | Path | None = None,
        *,
        automations: str | Path | None = None,
        settings: Settings | None = None,
    ) -> None:
        from checks.settings.config import load_settings

        self.settings = settings or load_settings(Path(config) if config else None)
        if automations is not None:
            self.settings.automations_dir = str(automations)
        self._pool: SourcePool | None = None
        self._store: Store | None = None
        self.problems: list[ConfigError] = []
        """What the last ``run_many()`` of every automation could not run, each at its place."""

    def automation(self, name: str) -> Automation:
        """The enabled or disabled automation called ``name``, read from its file now.

        A ``monitor:SOURCE.TABLE`` name is made from that source's catalog, as
        ``lookout run`` makes it.

        Raises:
            ConfigError: no valid automation or monitor has that name (the problems named).
        """
        from checks.automation.configured import unknown_name

        loaded = self._load([name])
        try:
            return loaded.by_name(name)
        except KeyError:
            problems = "; ".join(e.location_message() for e in loaded.errors[:3])
            raise ConfigError(
                unknown_name(name, loaded, self.settings.automations_dir)
                + (f" ({problems})" if problems else "")
            ) from None

    def _load(self, names: Sequence[str] | None) -> LoadResult:
        """The folder's automations and the monitors of ``names`` (None: every monitor)."""
        from checks.automation.configured import folder_automations
        from checks.automation.monitors import add_monitors, make_monitors, monitored_sources

        loaded = folder_automations(self.settings)
        monitored = monitored_sources(self.settings, names)
        if monitored:
            pool, _ = self._open()
            add_monitors(loaded, make_monitors(self.settings, pool.get, monitored))
        return loaded

    def run(self, name: str, *, fresh: bool = False, notify: bool = False) -> RunReport:
        """Run one automation now and return its stored report.

        Args:
            name: the automation's name.
            fresh: ask the agent even when the pinned plan's evidence is unchanged.
            notify: deliver the run's alerts now, as ``lookout run --notify``.

        Raises:
            ConfigError: no such automation, or its source's settings name an
                engine Lookout does not read.
            StoreError: the store could not keep the run.
        """
        from checks.sources.source_config import config_problems

        automation = self.automation(name)
        problems = config_problems(self.settings, [automation.source])
        if problems:
            raise ConfigError(problems[0].location_message())
        return self._run(automation, fresh=fresh, notify=notify)

    def _run(self, automation: Automation, *, fresh: bool, notify: bool) -> RunReport:
        """One run through the lifecycle, then its lineage and, with ``notify``, its alerts."""
        from checks.run_lifecycle import run_and_store

        pool, store = self._open()
        report = run_and_store(automation, self.settings, pool, store, announce=notify, fresh=fresh)
        if self.settings.lineage.url:
            self._send_lineage(report)
        if notify:
            from worker.alerts.delivery import deliver_for_run

            for record in deliver_for_run(store, self.settings, report):
                log.info("alert: %s → %s: %s", record.event, record.channel, record.status)
        return report

    def run_many(
        self, names: Sequence[str] | None = None, *, fresh: bool = False, notify: bool = False
    ) -> list[RunReport]:
        """Run the automations named, in order, or every enabled one (``lookout run --all``).

        Every one includes the sources' monitors (``monitor:SOURCE.TABLE``).

        Every one (``names`` None) runs the good files' automations whose source
        Lookout can read, as ``lookout run --all`` does; what it could not run
        (a bad file, a source no recipe reads) is kept in ``problems``, logged,
        and counts in ``exit_code(reports, lookout.problems)``.
        """
        if names is not None:
            return [self.run(name, fresh=fresh, notify=notify) for name in names]
        from checks.sources.source_config import config_problems

        loaded = self._load(None)
        chosen = [a for a in loaded.automations if a.enabled]
        sources = sorted({a.source for a in chosen})
        refused = {n for n in sources if config_problems(self.settings, [n])}
        self.problems = [*loaded.errors, *config_problems(self.settings, sorted(refused))]
        for problem in self.problems:
            log.warning("not run: %s", problem.location_message())
        return [self._run(a, fresh=fresh, notify=notify) for a in chosen if a.source not in refused]

    @staticmethod
    def exit_code(reports: Iterable[RunReport], problems: Sequence[ConfigError] = ()) -> ExitCode:
        """The exit status ``lookout run`` would give these reports and problems (``exit_code``)."""
        return exit_code(reports, len(problems))

    def _open(self) -> tuple[SourcePool, Store]:
        from checks.sources.pool import SourcePool
        from checks.store.store import Store

        if self._pool is None:
            self._pool = SourcePool(self.settings)
        if self._store is None:
            self._store = Store(self.settings.store_url)
        return self._pool, self._store

    def _send_lineage(self, report: RunReport) -> None:
        """The run's OpenLineage events; a failure is logged, never the run's status."""
        from worker.lineage.emit import LineageError, emit_run

        try:
            emit_run(self.settings, report)
        except LineageError as error:
            log.warning("%s", error)

    def close(self) -> None:
        """Close the sources and the store; the next run opens them again."""
        if self._pool is not None:
            self._pool.close()
            self._pool = None
        if self._store is not None:
            self._store.close()
            self._store = None

    def __enter__(self) -> Lookout:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()


def run(
    name: str,
    *,
    config: str | Path | None = None,
    automations: str | Path | None = None,
    fresh: bool = False,
    notify: bool = False,
) -> RunReport:
    """Run one automation now and return its stored report (``Lookout(...).run``, then closed)."""
    with Lookout(config, automations=automations) as lookout:
        return lookout.run(name, fresh=fresh, notify=notify)
