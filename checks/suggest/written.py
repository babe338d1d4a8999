"""Writing the suggested files: new ones written, unedited ones replaced, edited ones kept.

A file written by ``lookout suggest`` carries the hash of its text
(``yaml_writer.HASH_LINE``). Run again, each file is compared with what it
would now be: the same → ``unchanged``; different and not edited since →
``updated``, with the unified diff; edited since (its text no longer matches
its hash, or it has none) → ``kept`` with the diff, unless ``force``
(``overwritten``).
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from pathlib import Path

from checks.suggest.yaml_writer import HASH_LINE, edited


@dataclass(frozen=True)
class Written:
    """What became of one file.

    Attributes:
        path: the file.
        outcome: ``new``, ``unchanged``, ``updated``, ``kept`` (edited since; not
            written) or ``overwritten`` (edited since; written with ``force``).
        diff: the unified diff from the file on disk to the new text ('' if none).
    """

    path: Path
    outcome: str
    diff: str = ""


def _without_hash(text: str) -> list[str]:
    return HASH_LINE.sub("", text, count=1).splitlines(keepends=True)


def write(path: Path, text: str, *, force: bool = False) -> Written:
    """Write ``text`` to ``path`` unless the file there was edited since it was written.

    The hash lines are left out of the diff (they change with any line).

    Raises:
        OSError: the folder or file cannot be written.
    """
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return Written(path, "new")
    old = path.read_text(encoding="utf-8")
    if _without_hash(old) == _without_hash(text):
        return Written(path, "unchanged")
    diff = "".join(
        difflib.unified_diff(
            _without_hash(old), _without_hash(text), f"{path} (on disk)", f"{path} (suggested)"
        )
    )
    if edited(old) and not force:
        return Written(path, "kept", diff)
    outcome = "overwritten" if edited(old) else "updated"
    path.write_text(text, encoding="utf-8")
    return Written(path, outcome, diff)
