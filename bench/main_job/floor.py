"""What `lookout run` costs before it does anything: its imports alone, for bench/main_job.sh.

``floor.py record MODULES -- LOOKOUT_ARGS…`` runs ``lookout LOOKOUT_ARGS…`` in this process and
writes the modules it loaded, in the order they were loaded, to MODULES (one name a line).

``floor.py import MODULES [named|libraries|lookout|all]`` imports those modules in that order and
does nothing else: ``named`` only the libraries the design names for what a run does (SQLAlchemy
for the store, sqlglot for SQL, pydantic for schemas, PyYAML for the files) and what they import,
``libraries`` every third-party and standard-library one, ``lookout`` those plus Lookout's own
(``checks``, ``worker``: its settings and table classes, the run path), which is what the main
process of a run loads before and while it runs (``all`` is the same set; the word names the
row). A module that fails to import alone is skipped and counted on stderr. As in the ``lookout``
console script, the cycle collector is paused while they import, and the process ends with
``os._exit``.

Timed beside ``lookout run --all``, the difference is the run's own work: reading the files, the
guard, the query round trips, the store's statements and the output.
"""

from __future__ import annotations

import atexit
import gc
import importlib
import os
import sys
from pathlib import Path

OWN = ("checks", "worker")
NAMED = ("sqlalchemy", "sqlglot", "pydantic", "pydantic_core", "yaml")


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
    """Import the recorded modules (``which``: named, libraries, lookout or all), then exit."""
    gc.disable()
    skipped = 0
    for name in modules.read_text().split():
        top = name.split(".")[0]
        left_out = top in OWN if which == "libraries" else which == "named" and top not in NAMED
        if left_out:
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
