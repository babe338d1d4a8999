"""Which automations a command runs: the ones named, or every enabled one."""

from __future__ import annotations

from typing import TYPE_CHECKING

from checks.errors import ConfigError

if TYPE_CHECKING:
    from checks.automation.loader import LoadResult
    from checks.automation.model import Automation


def select_automations(
    loaded: LoadResult, names: list[str], run_all: bool, *, folder: str, validate: str
) -> list[Automation]:
    """The automations named (in that order), or every enabled one with ``run_all``.

    ``folder`` is where they were loaded from and ``validate`` the command that
    lists that folder's file problems (``Context.validate_command``): both are
    in the error.

    Raises:
        ConfigError: a name is not a valid automation of ``loaded``.
    """
    if run_all:
        return [a for a in loaded.automations if a.enabled]
    chosen = []
    for name in names:
        try:
            chosen.append(loaded.by_name(name))
        except KeyError:
            from checks.automation.configured import unknown_name

            raise ConfigError(
                f"{unknown_name(name, loaded, folder)} (run '{validate}' to see file errors)"
            ) from None
    return chosen
