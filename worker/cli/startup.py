"""A command's start-up: Python's cycle collector paused while it imports, then frozen.

A short command spends most of its time importing: every module object,
class and function it builds stays until the process ends, yet each full
collection walks all of them again (about a tenth of ``lookout run --all``'s
CPU on the 12 comparison checks). So the console script pauses the collector
before it imports anything (``pause``), and each command ends its start-up
(``over``) before the work that does leave cycles behind (parsed SQL trees,
sessions, exceptions): the objects built so far are frozen (``gc.freeze``:
never walked again) and the collector runs as usual from there. Commands
that run for long (the worker, beat, the review page) end it at once.
"""

from __future__ import annotations

import gc

_paused = False


def pause() -> None:
    """Pause the cycle collector for the start-up (the console script only, never in tests)."""
    global _paused
    if gc.isenabled():
        gc.disable()
        _paused = True


def over() -> None:
    """End the start-up: freeze what was built and resume the collector, if ``pause`` paused it.

    A no-op otherwise (a command invoked in a test, or a second call).
    """
    global _paused
    if _paused:
        _paused = False
        gc.freeze()
        gc.enable()


def paused() -> bool:
    """Whether the start-up still holds the collector paused."""
    return _paused
