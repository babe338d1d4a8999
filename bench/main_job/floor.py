"""What `lookout run` costs before it does anything: its imports alone, for bench/main_job.sh.

``floor.py record MODULES -- LOOKOUT_ARGS…`` runs ``lookout LOOKOUT_ARGS…`` in this process and
writes the modules it loaded, in the order they were loaded, to MODULES (one name a line).

``floor.py import MODULES [libraries|lookout|all]`` imports those modules in that order and does
nothing else: ``libraries`` the third-party and standard-library ones only, ``lookout`` those
plus Lookout's own (``checks``, ``worker``: its settings and table classes, the run path), which
is what the main process of a run loads before and while it runs (``all`` is the same set; the
word names the row). A module that fails to import alone is skipped and counted on stderr.
The process ends with ``os._exit``, as the ``lookout`` console script does.

Timed beside ``lookout run --all``, the difference is the run's own work: reading the files, the
guard, the query round trips, the store's statements and the output.
"""

from __future__ import annotations

import atexit
import importlib
import os
import sys
from pathlib import Path

OWN = ("checks", "worker")


def record(modules: Path, args: list[str]) -> None:
    """Run ``lookout *args`` here; on exit write the modules loaded, in load order."""

    def write() -> None:
        names = [name for name in list(sys.modules) if name != "__main__"]
        modules.write_text("\n".join(names) + "\n")

    atexit.register(write)
    sys.argv = ["lookout", *args]
    from worker.cli import main

    main()


def load(modules: Path, which: str) -> None:
    """Import the recorded modules (``which``: libraries, lookout or all), then exit at once."""
    skipped = 0
    for name in modules.read_text().split():
        own = name.split(".")[0] in OWN
        if own and which == "libraries":
            continue
        try:
            importlib.import_module(name)
        except Exception:  # some modules only import as a side effect of others
            skipped += 1
    if skipped:
        print(f"floor: {skipped} modules skipped", file=sys.stderr)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    command, path, *rest = sys.argv[1:]
    if command == "record":
        record(Path(path), rest[1:] if rest[:1] == ["--"] else rest)
    elif command == "import":
        load(Path(path), rest[0] if rest else "all")
    else:
        raise SystemExit(f"unknown command {command!r} (record or import)")
