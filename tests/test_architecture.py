"""The layout keeps its promises: ARCHITECTURE.md is true; ``checks`` never loads the service."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import grimp
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
    assert top == ["checks/errors.py", "checks/run.py", "checks/run_lifecycle.py"]
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


# The package order: the rooms of ``checks`` and ``worker``, highest first, as
# ARCHITECTURE.md's "Package order" draws them; each may import only rooms below it.
ORDER_BLOCK = re.compile(r"^## Package order\n.*?```\n(?P<rooms>.*?)```", re.M | re.S)
ORDER_ROOM = re.compile(r"^(?P<room>(?:checks|worker)/\S*)", re.M)


def drawn_order() -> list[str]:
    """The rooms of the "Package order" block of ARCHITECTURE.md, highest first."""
    text = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")
    block = ORDER_BLOCK.search(text)
    assert block, "ARCHITECTURE.md has no fenced block under '## Package order'"
    return ORDER_ROOM.findall(block["rooms"])


def room_of(module: str) -> str:
    """``checks.store.plans`` → ``checks/store/``; ``checks.run`` → ``checks/run.py``."""
    parts = module.split(".")
    if len(parts) == 1:
        return f"{module}/__init__.py"
    path = ROOT / parts[0] / parts[1]
    return f"{parts[0]}/{parts[1]}/" if path.is_dir() else f"{parts[0]}/{parts[1]}.py"


def import_graph(*, type_checking: bool) -> grimp.ImportGraph:
    """Every import between modules of ``checks`` and ``worker``.

    Imports inside functions count: deferring one hides a dependency from the
    interpreter, not from the reader. ``if TYPE_CHECKING:`` imports count only
    with ``type_checking`` (they never run, so they cannot close a cycle, but
    they name what a room knows of).
    """
    return grimp.build_graph(
        "checks", "worker", exclude_type_checking_imports=not type_checking, cache_dir=None
    )


def test_the_package_order_names_every_room_once() -> None:
    order = drawn_order()
    assert len(order) == len(set(order))
    every = {room_of(m) for m in import_graph(type_checking=True).modules} - {
        "checks/__init__.py",
        "worker/__init__.py",
    }
    assert sorted(every - set(order)) == []
    assert sorted(set(order) - every) == []


def test_each_room_imports_only_rooms_below_it_in_the_package_order() -> None:
    order = drawn_order()
    rank = {room: len(order) - i for i, room in enumerate(order)}  # higher rooms rank higher
    graph = import_graph(type_checking=True)
    upward: set[tuple[str, str, str]] = set()
    for importer in graph.modules:
        for imported in graph.find_modules_directly_imported_by(importer):
            a, b = room_of(importer), room_of(imported)
            if a != b and rank.get(a, 0) <= rank.get(b, 0):
                upward.add((a, b, f"{importer} -> {imported}"))
    assert sorted(upward) == []


def strongly_connected(graph: grimp.ImportGraph) -> list[list[str]]:
    """The import graph's cycles: each set of modules that import one another, sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(
        module: str,
    ) -> None:  # Tarjan's algorithm; the graph is a few hundred modules deep at most
        index[module] = low[module] = len(index)
        stack.append(module)
        for other in graph.find_modules_directly_imported_by(module):
            if other not in index:
                visit(other)
                low[module] = min(low[module], low[other])
            elif other in stack:
                low[module] = min(low[module], index[other])
        if low[module] == index[module]:
            members = []
            while True:
                member = stack.pop()
                members.append(member)
                if member == module:
                    break
            if len(members) > 1:
                found.append(sorted(members))

    for module in sorted(graph.modules):
        if module not in index:
            visit(module)
    return sorted(found)


def test_no_module_imports_itself_through_others() -> None:
    assert strongly_connected(import_graph(type_checking=False)) == []


def private_imports() -> set[tuple[str, str]]:
    """(importer, module.name) for every ``_name`` of one module imported by another."""
    found: set[tuple[str, str]] = set()
    for top in ("checks", "worker"):
        for path in (ROOT / top).rglob("*.py"):
            if "versions" in path.parts:
                continue
            module = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(
                ".__init__"
            )
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.ImportFrom) and node.module:
                    for alias in node.names:
                        name = alias.name
                        if name.startswith("_") and not name.startswith("__"):
                            found.add((module, f"{node.module}.{name}"))
    return found


@pytest.mark.slow
def test_no_module_imports_another_modules_private_names() -> None:
    assert sorted(private_imports()) == []
