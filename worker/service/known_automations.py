"""The automations the dispatcher knows, re-read file by file when a file changes.

``KnownAutomations.refresh`` looks at the folder on every dispatch and parses
only the files whose size, modification time or inode changed since the last
look (``checks.automation.loader.load_file`` on that one file). A bad file is
reported — once per change, on the ``lookout.dispatch`` logger — and its
automations left out; every other file goes on. Names must stay unique across
files: the second definition of a name is an error pointing at the first, as
``load_automations`` does for a whole folder. With the settings, the monitors
of the sources that say ``monitor:`` (``checks.automation.monitors``) join
them, made again from the sources' catalogs at most every ``MONITORS_EVERY_S``.
"""

from __future__ import annotations

import gc
import logging
import os
import time
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from checks.automation.cycle_collector import collect_young, cycle_collection_paused
from checks.automation.files import automation_files
from checks.automation.load_result import LoadResult
from checks.automation.loader import load_file
from checks.automation.model import Automation
from checks.automation.monitors import Monitors, make_monitors, monitored_sources
from checks.errors import AutomationError

if TYPE_CHECKING:
    from checks.settings.config import Settings

log = logging.getLogger("lookout.dispatch")

_Stamp = tuple[int, int, int]  # (st_mtime_ns, st_size, st_ino)

MONITORS_EVERY_S = 300.0
"""The monitors are made again from the catalogs at most this often (a new table joins)."""

FREEZE_AFTER_FILES = 1_000
"""A refresh that parsed at least this many files freezes what it built (``gc.freeze``)."""


@dataclass
class _Parsed:
    stamp: _Stamp
    result: LoadResult = field(default_factory=LoadResult)


def _files(root: Path) -> tuple[list[Path], list[AutomationError]]:
    """The files to load, and the names that cannot be (``automation_files``)."""
    if root.is_file():
        return [root], []
    if not root.is_dir():
        return [], []
    return automation_files(root)


class KnownAutomations:
    """Parsed automation files, kept between dispatches in one process.

    Args:
        path: the automations folder (or one file), as ``load_automations`` takes.
        known_sources: the configured source names; an automation naming
            another source is an error in its file.
        settings: the config, for its sources' monitors (None: no monitors).
    """

    def __init__(
        self,
        path: str | Path,
        known_sources: Collection[str] | None,
        *,
        settings: Settings | None = None,
    ) -> None:
        self.path = Path(path)
        self.known_sources = known_sources
        self.settings = settings
        self._monitors: tuple[float, Monitors] | None = None
        self._parsed: dict[Path, _Parsed] = {}
        self._listing_problems: list[AutomationError] = []
        self.reloads = 0  # files parsed since it was made (tests and the benchmark)

    def refresh(self) -> LoadResult:
        """Re-read the changed files and return every good automation and every problem.

        Problems of a file are logged when the file changes, not on every
        refresh. Never raises for a bad or vanished file.
        """
        seen: dict[Path, _Parsed] = {}
        files, self._listing_problems = _files(self.path)
        reloads = self.reloads
        with cycle_collection_paused():
            self._read(files, seen)
            self._parsed = seen
            if self.reloads - reloads >= FREEZE_AFTER_FILES:
                # The parsed automations stay for the process's life: moved out of the cycle
                # collector's reach, each later full collection (a tick of 1,000 due runs
                # makes one) no longer walks them all, and a fork shares their pages. Frozen
                # before the collector runs again: its first collection would walk them all.
                gc.freeze()
        return self._merge()

    def _read(self, files: list[Path], seen: dict[Path, _Parsed]) -> None:
        """Parse the files that changed into ``seen``; keep the others as they were."""
        # Only a file with a problem leaves cycles to free (its exceptions' frames): after
        # good files alone a young collection would walk what they built and free nothing,
        # and a refresh of many files freezes what it built anyway.
        garbage = False
        for file in files:
            try:
                st = os.stat(file)
            except OSError:  # removed between the listing and the stat
                continue
            stamp = (st.st_mtime_ns, st.st_size, st.st_ino)
            parsed = self._parsed.get(file)
            if parsed is None or parsed.stamp != stamp:
                # No positions kept: the merged result the dispatcher reads has no places.
                loaded = load_file(file, known_sources=self.known_sources, positions=False)
                parsed = _Parsed(stamp, loaded)
                self.reloads += 1
                garbage = garbage or bool(parsed.result.errors)
                if garbage and collect_young(self.reloads):
                    garbage = False
                for problem in parsed.result.errors:
                    log.error("automation file skipped: %s", problem.location_message())
                if not parsed.result.errors:
                    log.info("automation file loaded: %s", file)
            seen[file] = parsed

    def monitors(self) -> Monitors:
        """The sources' monitors, made again when the last ones are ``MONITORS_EVERY_S`` old."""
        settings = self.settings
        if settings is None or not monitored_sources(settings):
            return Monitors()
        now = time.monotonic()
        if self._monitors is None or now - self._monitors[0] >= MONITORS_EVERY_S:
            from checks.sources.pool import SourcePool  # only a config with monitors opens one

            with SourcePool(settings) as pool:
                made = make_monitors(settings, pool.get)
            for problem in made.errors:
                log.error("monitor skipped: %s", problem.location_message())
            self._monitors = (now, made)
        return self._monitors[1]

    def _merge(self) -> LoadResult:
        merged = LoadResult()
        monitored = self.settings is not None and monitored_sources(self.settings)
        if not self.path.exists() and not monitored:  # with monitors, no folder is needed
            merged.errors.append(AutomationError("no such file or folder", path=str(self.path)))
        merged.errors.extend(self._listing_problems)  # a broken link is never skipped silently
        first: dict[str, Automation] = {}
        for parsed in self._parsed.values():
            merged.errors.extend(parsed.result.errors)
            merged.warnings.extend(parsed.result.warnings)
            for automation in parsed.result.automations:
                earlier = first.get(automation.name)
                if earlier is not None:
                    merged.errors.append(
                        AutomationError(
                            f"duplicate automation name {automation.name!r}: first defined at "
                            f"{earlier.path}:{earlier.line}",
                            path=automation.path,
                            line=automation.line,
                            field="name",
                        )
                    )
                    continue
                first[automation.name] = automation
                merged.automations.append(automation)
        monitors = self.monitors()
        merged.automations.extend(monitors.automations)
        merged.errors.extend(monitors.errors)
        merged.warnings.extend(monitors.warnings)
        return merged
