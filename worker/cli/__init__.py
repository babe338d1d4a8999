"""The ``lookout`` command line: one module per command group, plus terminal rendering."""

from __future__ import annotations

import atexit
import os
import sys
import threading

from worker.cli import startup


def main() -> None:
    """Console-script entry point: ``worker.cli.app.main``, then a quick exit.

    Once the command has ended, its exit functions run (``atexit``, which also
    flushes and closes logging) and the output streams are flushed; then the
    process ends without tearing down its modules one by one, which took a
    quarter of a short command's CPU. When a thread that is not a daemon is
    still running, the interpreter's usual exit waits for it instead.

    Python's cycle collector is paused while the command starts up
    (``startup``): the command resumes it once its imports are done.
    """
    startup.pause()
    from worker.cli import app  # imported with the collector paused

    try:
        app.main()
    except SystemExit as done:
        waiting = [
            t
            for t in threading.enumerate()
            if t is not threading.main_thread() and not t.daemon and t.is_alive()
        ]
        if waiting:
            raise
        status = _status(done.code)
        atexit._run_exitfuncs()
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):  # a closed pipe: nothing more can be written
                status = status or 1
        os._exit(status)


def _status(code: object) -> int:
    """The exit status ``sys.exit(code)`` would give (a message is printed, status 1)."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    print(code, file=sys.stderr)
    return 1


__all__ = ["main"]
