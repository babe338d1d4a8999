"""The ``lookout`` command line: one module per command group, plus terminal rendering."""

from worker.cli.app import main

__all__ = ["main"]
