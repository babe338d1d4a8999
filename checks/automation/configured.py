"""The automations a config names: its folder's files, and the words when a name is none of them.

A config whose sources say ``monitor:`` needs no automation files: its
automations folder may be missing (``folder_automations``: a note, not an
error). ``unknown_name`` says why a name asked for is not there: a
``monitor:`` name is not a monitor of the config's sources, any other is no
valid automation of the folder; each with the closest name there is.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from checks.automation.load_result import LoadResult
from checks.automation.loader import load_automations
from checks.automation.monitors import PREFIX, monitored_sources
from checks.fields.rules import did_you_mean

if TYPE_CHECKING:
    from checks.settings.config import Settings


def folder_automations(settings: Settings) -> LoadResult:
    """The automations of ``settings.automations_dir`` (``load_automations``).

    With monitors configured, a missing folder is a warning (only the
    monitors run); without, it stays the error ``no such file or folder``.
    """
    folder = Path(settings.automations_dir)
    if not folder.exists() and monitored_sources(settings):
        loaded = LoadResult()
        loaded.warnings.append(
            f"{folder}: no automations folder: only the sources' monitors (monitor:) run"
        )
        return loaded
    return load_automations(folder, known_sources=settings.sources.keys())


def unknown_name(name: str, loaded: LoadResult, folder: str | Path) -> str:
    """Why ``name`` is none of ``loaded``'s automations, with the closest name there is.

    ``monitor:shop.order`` → ``'monitor:shop.order' is not a monitor of the
    config's sources (did you mean 'monitor:shop.orders'?)``; any other →
    ``no valid automation named 'x' in FOLDER (did you mean 'y'?)``.
    """
    names = [a.name for a in loaded.automations]
    if name.startswith(PREFIX):
        monitors = [n for n in names if n.startswith(PREFIX)]
        return f"{name!r} is not a monitor of the config's sources" + did_you_mean(
            name, monitors or names
        )
    return f"no valid automation named {name!r} in {folder}" + did_you_mean(name, names)
