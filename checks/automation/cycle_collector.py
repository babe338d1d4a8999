"""Python's cycle collector paused while automation files load, young objects collected."""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def cycle_collection_paused() -> Iterator[None]:
    """Pause Python's cycle collector while automation files load, then restore it.

    Every full collection walks every object built so far, and loading builds
    millions that all stay (nodes, values, models): at 10,000 files the
    collections took a quarter of the load's CPU. What a load leaves behind
    that only a collection could free (an exception's frames) is freed once
    the collector runs again. Nested uses restore it only at the outermost.
    """
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


YOUNG_COLLECTION_FILES = 200
"""While the collector is paused, the young generations are collected every this many files."""


def collect_young(files_read: int) -> bool:
    """Every ``YOUNG_COLLECTION_FILES`` files, free the cycles a load left (young objects only).

    Cheap, unlike a full collection, and it keeps a paused load's garbage (each
    file's parser and constructor) from piling up. Returns whether it collected.
    """
    if files_read % YOUNG_COLLECTION_FILES == 0 and not gc.isenabled():
        gc.collect(1)
        return True
    return False
