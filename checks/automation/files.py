"""Which files of a folder are automation files, and reading one."""

from __future__ import annotations

import os
from pathlib import Path

from checks.errors import AutomationError

AUTOMATION_SUFFIXES = (".yaml", ".yml")
"""Extensions of automation files, compared ignoring case (``X.YAML`` is one too)."""
MAX_FILE_BYTES = 1 << 20
"""The largest automation file read (1 MiB; the shipped ones are under 4 KiB): a 200 MB
file took 627 MB to load."""


class TooLarge(OSError):
    """A file is over ``MAX_FILE_BYTES``; ``strerror`` says so."""


def read_bytes(path: str, limit: int = MAX_FILE_BYTES) -> bytes:
    """A file's bytes, with three system calls (``open()``'s file object makes about eight).

    Raises:
        OSError: it cannot be opened or read (``strerror`` says why); ``TooLarge``
            when it holds more than ``limit`` bytes (it is not read further).

    """
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        chunks = []
        size = 0
        while chunk := os.read(fd, 1 << 16):
            size += len(chunk)
            if size > limit:
                raise TooLarge(0, f"the file is over {limit:,} bytes, the most an automation "
                               "file may hold; split it")  # fmt: skip
            chunks.append(chunk)
    finally:
        os.close(fd)
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def automation_files(folder: Path) -> tuple[list[Path], list[AutomationError]]:
    """List the automation files directly inside ``folder``, sorted by name.

    A name ending in ``.yaml``/``.yml`` (any case) and not starting with ``.``
    is meant to be an automation file. One that cannot be read as a file (a
    symbolic link whose target is missing or loops, or lies outside
    ``folder``; a folder, a FIFO or a device) is a problem on that path, never
    silently skipped: its checks would stop running without a word. FIFOs and
    devices are never opened, nor files outside the folder through a link.

    Returns:
        ``(files, problems)``: the regular files (or links to one) to load, and
        an ``AutomationError`` for each name that is not one.

    """
    files: list[Path] = []
    problems: list[AutomationError] = []
    try:  # scandir: the file type comes with the listing, no stat per regular file
        with os.scandir(folder) as listing:
            found = sorted(listing, key=lambda e: e.name)
    except OSError as exc:
        return [], [AutomationError(f"cannot list: {exc.strerror}", path=str(folder))]
    for item in found:
        if item.name.startswith(".") or not item.name.lower().endswith(AUTOMATION_SUFFIXES):
            continue
        entry = folder / item.name
        try:
            regular = item.is_file()  # follows a symbolic link, as Path.is_file
        except OSError:
            regular = False
        if regular and item.is_symlink() and not _inside(entry, folder):
            problems.append(
                AutomationError(
                    f"a symbolic link to {os.readlink(entry)}, outside the automations folder;"
                    " it is not read",
                    path=str(entry),
                )
            )
            continue
        if regular:
            files.append(entry)
            continue
        problems.append(AutomationError(_not_a_file(entry), path=str(entry)))
    return files, problems


def _inside(entry: Path, folder: Path) -> bool:
    """Whether a link's final target lies inside ``folder`` (both resolved)."""
    return entry.resolve().is_relative_to(folder.resolve())


def _not_a_file(entry: Path) -> str:
    """Why ``entry``, named like an automation file, cannot be read as one."""
    if entry.is_symlink() and not entry.exists():
        try:
            target = os.readlink(entry)
        except OSError:
            target = "?"
        return f"a symbolic link to {target}, which does not exist (or loops)"
    if entry.is_dir():
        return "a folder, not an automation file"
    if entry.exists():
        return "not a regular file (a FIFO, socket or device); it is not read"
    return "vanished while the folder was read"
