"""The layout keeps its promises: ARCHITECTURE.md is true; ``checks`` never loads the service."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.paths import ROOT

ROOM_ROW = re.compile(r"^\| `(?P<room>(?:checks|worker)/[^`]*)` \| (?P<owns>.*) \|$", re.M)
NAMED = re.compile(r"`([\w/]+(?:\.py|/))`")


def rooms() -> dict[str, set[str]]:
    """Room path -> the module and folder paths its row names, relative to the repository."""
    text = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")
    found: dict[str, set[str]] = {}
    for row in ROOM_ROW.finditer(text):
        room = row["room"]
        names: set[str] = set()
        for name in NAMED.findall(row["owns"]):
            full = name if name.startswith(("checks/", "worker/")) else f"{room}{name}"
            names.add(full)
        found[room] = names
    return found


def packages() -> list[Path]:
    """Every subpackage of checks and worker (migrations' versions aside: they are data)."""
    found = []
    for top in ("checks", "worker"):
        for init in sorted((ROOT / top).rglob("__init__.py")):
            folder = init.parent
            if folder.name != "versions" and folder != ROOT / top:
                found.append(folder)
    return found


def test_every_module_and_folder_named_in_architecture_exists() -> None:
    named = rooms()
    assert named, "no room rows found in ARCHITECTURE.md"
    missing = [
        path
        for room, names in named.items()
        for path in {room, *names}
        if not (ROOT / path).exists()
    ]
    assert missing == []


def test_every_subpackage_and_module_is_named_in_architecture() -> None:
    named = rooms()
    everything = set(named) | {n for names in named.values() for n in names}
    unnamed_packages = [
        str(p.relative_to(ROOT)) + "/"
        for p in packages()
        if str(p.relative_to(ROOT)) + "/" not in everything
    ]
    assert unnamed_packages == []
    unnamed_modules = []
    for room in (r for r in named if r.endswith("/")):
        for module in sorted((ROOT / room).glob("*.py")):
            path = str(module.relative_to(ROOT))
            if module.name != "__init__.py" and path not in everything:
                unnamed_modules.append(path)
    assert unnamed_modules == []


def test_every_top_level_module_of_checks_is_a_room() -> None:
    named = rooms()
    top = sorted(
        str(p.relative_to(ROOT)) for p in (ROOT / "checks").glob("*.py") if p.name != "__init__.py"
    )
    assert top == ["checks/errors.py", "checks/run.py"]
    assert all(path in named for path in top)


BOUNDARY = """
import importlib, pkgutil, sys
import checks, checks.run
for info in pkgutil.walk_packages(checks.__path__, "checks."):
    if ".migrations" not in info.name:
        importlib.import_module(info.name)
service = {"celery", "kombu", "fastapi", "starlette", "uvicorn", "worker"}
print(",".join(sorted({m.split(".")[0] for m in sys.modules} & service)))
"""


@pytest.mark.slow
def test_importing_all_of_checks_loads_neither_celery_nor_the_web_framework() -> None:
    out = subprocess.run(
        [sys.executable, "-c", BOUNDARY], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == ""
