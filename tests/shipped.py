"""The example automations shipped with Lookout, apart from any a user keeps beside them.

``automations/`` is also the default folder a user runs from, so a file of
their own may sit there; the tests of the shipped examples must not count it.
Shipped means tracked by git (a clean checkout, as CI runs on, holds nothing
else); outside a git work tree, every automation file of the folder.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from tests.paths import ROOT

EXAMPLES_DIR = ROOT / "automations"


def shipped_files() -> list[Path]:
    """The shipped example files, sorted by name (``.yaml`` and ``.yml``)."""
    try:
        listed = subprocess.run(
            ["git", "ls-files", "-z", "--", "*.yaml", "*.yml"],
            cwd=EXAMPLES_DIR,
            capture_output=True,
            check=True,
        ).stdout.decode()
    except (OSError, subprocess.CalledProcessError):  # no git, or not a work tree
        return sorted(p for p in EXAMPLES_DIR.iterdir() if p.suffix in (".yaml", ".yml"))
    return sorted(EXAMPLES_DIR / name for name in listed.split("\0") if name and "/" not in name)


def shipped_folder(into: Path) -> Path:
    """A folder under ``into`` holding a copy of exactly the shipped example files."""
    folder = into / "shipped-automations"
    folder.mkdir(parents=True, exist_ok=True)
    for path in shipped_files():
        shutil.copy(path, folder / path.name)
    return folder
