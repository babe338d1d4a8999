"""Loading automation files: YAML read with line and column, validated, every problem kept.

A YAML file holds one automation (a mapping of fields) or several under a
top-level ``automations:`` key. ``load_automations`` reads a folder of such
files (or one file), validates every automation and returns the good ones with
every problem found, each pointing at the YAML line and column it comes from.
A bad automation never stops the good ones beside it.
"""

from __future__ import annotations

import contextlib
import gc
import os
from collections.abc import Collection, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import (
    BaseModel,
    ValidationError,
)
from pydantic_core import ErrorDetails

from checks.automation.check_kinds import KINDS
from checks.automation.fields import (
    did_you_mean,
)
from checks.automation.model import LOADER_FIELDS, Automation, Check
from checks.automation.yaml_tree import (
    Loc,
    Place,
    PlaceFields,
    YamlTree,
    place_fields,
    position,
    shown,
)
from checks.errors import AutomationError


def _yaml_keys(model: type[BaseModel]) -> list[str]:
    fields = model.model_fields.items()
    return [info.alias or name for name, info in fields if name not in LOADER_FIELDS]


@dataclass(frozen=True)
class Written:
    """One automation's file as it was read, and where the automation is in it.

    Attributes:
        raw: the file's bytes (shared by every automation of the file).
        prefix: the automation's location in the file's data: ``()`` for a
            file of one automation, ``("automations", i)`` otherwise.
    """

    raw: bytes
    prefix: Loc


def _places_in(tree: YamlTree, prefix: Loc) -> dict[Loc, PlaceFields]:
    """Where the automation at ``prefix`` has its values: itself, ``source`` and its checks'."""
    depth = len(prefix)
    return {
        loc[depth:]: found
        for loc, node in tree.values.items()
        if loc[:depth] == prefix
        and loc[depth : depth + 1] in (("checks",), ("source",), ())
        and (found := place_fields(node, tree.lines)) is not None
    }


@dataclass
class LoadResult:
    """What ``load_automations`` found.

    Attributes:
        automations: the automations with no problem, in file then position order.
        errors: every problem in every file, each with path, line, column and field.
        warnings: lines to show that do not stop anything (e.g. goal-only automations).
        written: for each good automation (by name), its file as read and
            where the automation is in it (``()``, or ``("automations", i)``),
            so that ``place_of`` can find its values without every load
            keeping every value's position. Empty when loaded with
            ``positions=False``.
        places: for each good automation (by name) whose places were asked
            for, where its checks' values are in its file, keyed by location
            under the automation (``("checks", 0, "sql")``), as the fields of
            a ``Place``; filled by ``place_of`` from ``written``, one file at a
            time (``lookout validate`` points into the SQL with them).

    """

    automations: list[Automation] = field(default_factory=list)
    errors: list[AutomationError] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    written: dict[str, Written] = field(default_factory=dict)
    places: dict[str, dict[Loc, PlaceFields]] = field(default_factory=dict)
    _last_tree: tuple[bytes, YamlTree] | None = field(default=None, repr=False, compare=False)

    def place_of(self, automation: Automation, loc: Loc) -> Place:
        """Where ``loc`` (under ``automation``) is, or the nearest enclosing place known."""
        known = self._places(automation.name)
        while loc and loc not in known:
            loc = loc[:-1]
        found = known.get(loc)
        return Place(*found) if found is not None else Place(automation.line, 1)

    def _places(self, name: str) -> dict[Loc, PlaceFields]:
        """The places of one automation, found (for every automation of its file) when asked."""
        known = self.places.get(name)
        if known is not None:
            return known
        written = self.written.get(name)
        if written is None:
            return {}
        # The file as it was read, composed again: the same nodes, so the same places. The
        # last file's tree is kept: its other automations are usually asked about next.
        last = self._last_tree
        if last is None or last[0] is not written.raw:
            last = self._last_tree = (written.raw, YamlTree.parse(written.raw))
        known = self.places[name] = _places_in(last[1], written.prefix)
        return known

    def by_name(self, name: str) -> Automation:
        """Return the automation called ``name``.

        Raises:
            KeyError: no good automation has that name.

        """
        for automation in self.automations:
            if automation.name == name:
                return automation
        raise KeyError(name)


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


def load_automations(
    path: str | Path, *, known_sources: Collection[str] | None = None
) -> LoadResult:
    """Read and validate automations from a folder or one file.

    Args:
        path: a folder (every ``*.yaml``/``*.yml`` file directly inside, the
            extension in any case, sorted by name; hidden files skipped; see
            ``automation_files``) or one file.
        known_sources: the configured source names; ``None`` skips the check.

    Returns:
        The good automations and every problem. Nothing is raised for a bad
        file: a bad automation never stops the good ones beside it, in the same
        file or others. Names must be unique across all files; the second of two
        is an error naming the first's ``path:line``. Each good automation's
        file is kept as read (``LoadResult.written``) for ``place_of``.

    """
    root = Path(path)
    result = LoadResult()
    if root.is_dir():
        files, problems = automation_files(root)
        result.errors.extend(problems)
        if not files and not problems:
            result.warnings.append(f"{root}: no automation files (*.yaml, *.yml)")
    elif root.is_file():
        files = [root]
    else:
        result.errors.append(AutomationError("no such file or folder", path=str(root)))
        return result
    first: dict[str, Automation] = {}  # name -> where it was first defined, across files
    with cycle_collection_paused():
        for count, file in enumerate(files, start=1):
            collect_young(count)
            _load_file(str(file), result, known_sources, first, positions=True)
    return result


def load_file(
    path: str | Path,
    *,
    known_sources: Collection[str] | None = None,
    positions: bool = True,
) -> LoadResult:
    """Read and validate the automations of one file (a path that is, or links to, a file).

    What ``load_automations`` does for one of its files, without looking at
    what the path is first (the dispatcher's catalog has already). With
    ``positions=False`` the file's bytes are not kept (``LoadResult.written``
    stays empty, ``place_of`` gives each automation's first line).

    Returns:
        Its good automations and every problem, as ``load_automations``; a
        file that cannot be read is one problem (``cannot read: …``).

    """
    result = LoadResult()
    _load_file(str(path), result, known_sources, {}, positions=positions)
    return result


def _load_file(
    path: str,
    result: LoadResult,
    known_sources: Collection[str] | None,
    first: dict[str, Automation],
    *,
    positions: bool,
) -> None:
    try:
        data = _read(path)
    except OSError as exc:
        result.errors.append(AutomationError(f"cannot read: {exc.strerror}", path=path))
        return
    _FileLoader(path, result, known_sources, first, positions=positions).load(data)


def _read(path: str) -> bytes:
    """A file's bytes, with three system calls (``open()``'s file object makes about eight).

    Raises:
        OSError: it cannot be opened or read (``strerror`` says why).

    """
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        chunks = []
        while chunk := os.read(fd, 1 << 16):
            chunks.append(chunk)
    finally:
        os.close(fd)
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


AUTOMATION_SUFFIXES = (".yaml", ".yml")
"""Extensions of automation files, compared ignoring case (``X.YAML`` is one too)."""


def automation_files(folder: Path) -> tuple[list[Path], list[AutomationError]]:
    """List the automation files directly inside ``folder``, sorted by name.

    A name ending in ``.yaml``/``.yml`` (any case) and not starting with ``.``
    is meant to be an automation file. One that cannot be read as a file (a
    symbolic link whose target is missing or loops, a folder, a FIFO or a
    device) is a problem on that path, never silently skipped: its checks
    would stop running without a word. FIFOs and devices are never opened.

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
        if regular:
            files.append(entry)
            continue
        if entry.is_symlink() and not entry.exists():
            try:
                target = os.readlink(entry)
            except OSError:
                target = "?"
            message = f"a symbolic link to {target}, which does not exist (or loops)"
        elif entry.is_dir():
            message = "a folder, not an automation file"
        elif entry.exists():
            message = "not a regular file (a FIFO, socket or device); it is not read"
        else:
            message = "vanished while the folder was read"
        problems.append(AutomationError(message, path=str(entry)))
    return files, problems


def _relative(err: ErrorDetails) -> tuple[Any, ...]:
    """Where an error is, under the automation: a validator may name its own place (``at``)."""
    ctx = err.get("ctx") or {}
    if err["type"] != "lookout":
        return tuple(err["loc"])
    at = tuple(ctx["at"])
    return (*err["loc"], *at) if ctx.get("relative") else at


def _unknown_field(relative: tuple[Any, ...]) -> str:
    """``unknown field 'x' (did you mean 'y'?)``, with the keys of the model it is in."""
    key = str(relative[-1])
    known: list[str] = []
    if len(relative) == 1:
        known = _yaml_keys(Automation)
    elif len(relative) == 3 and relative[0] == "checks":
        if key == "filter":
            return (
                "unknown field 'filter': it goes inside the kind's mapping, "
                "e.g. missing: {table: orders, column: email, filter: \"status = 'paid'\"}"
            )
        known = _yaml_keys(Check)
    elif len(relative) == 4 and relative[0] == "checks" and relative[2] in KINDS:
        known = _yaml_keys(KINDS[relative[2]])
    return f"unknown field {key!r}{did_you_mean(key, known)}"


def _kind(value: object) -> str:
    if value is None:
        return "nothing"
    kinds = {dict: "a mapping", list: "a list", str: "text", bool: "a boolean"}
    for kind, name in kinds.items():
        if isinstance(value, kind):
            return name
    return "a number" if isinstance(value, int | float) else type(value).__name__


def _message(err: ErrorDetails) -> str:
    """Turn one pydantic error into a readable one-line message."""
    ctx = err.get("ctx") or {}
    kind, value = err["type"], err.get("input")
    if kind == "lookout":
        return str(ctx["message"])
    if kind == "value_error":
        return str(ctx["error"])
    if kind == "model_type":
        return f"expected a mapping of fields, got {_kind(value)}"
    written = _kind(value) if value is None or isinstance(value, dict | list) else shown(value)
    if len(written) > 60:
        written = written[:57] + "..."
    msg = err["msg"]
    return f"{msg[:1].lower()}{msg[1:]} (got {written})"


class _FileLoader:
    """Loads one file's automations into a shared ``LoadResult``."""

    def __init__(
        self,
        path: str,
        result: LoadResult,
        known_sources: Collection[str] | None,
        first: dict[str, Automation],
        *,
        positions: bool = True,
    ) -> None:
        self.path = path
        self.result = result
        self.known_sources = known_sources
        self.first = first  # shared by the files of one load: duplicates found in O(1)
        self.positions = positions
        self.raw = b""

    def error(self, message: str, node: Any = None, loc: Loc = ()) -> None:
        line, column = position(node)
        dotted = ".".join(str(part) for part in loc) or None
        self.result.errors.append(
            AutomationError(message, path=self.path, line=line, column=column, field=dotted)
        )

    def load(self, raw: bytes) -> None:
        self.raw = raw
        try:
            tree = YamlTree.parse(raw)
        except AutomationError as exc:
            located = AutomationError(exc.message, path=self.path, line=exc.line, column=exc.column)
            self.result.errors.append(located)
            return
        first_error = len(self.result.errors)
        entries = self.entries(tree)
        for where, node, message in tree.problems:
            if not any(where[: len(prefix)] == prefix for prefix in entries):
                self.error(message, node, where)
        for prefix in entries:
            self.load_entry(tree, prefix)
        self.result.errors[first_error:] = sorted(
            self.result.errors[first_error:], key=lambda e: (e.line or 0, e.column or 0)
        )

    def entries(self, tree: YamlTree) -> list[Loc]:
        """Return the location of each automation in the file, reporting shape errors."""
        data = tree.data
        if not isinstance(data, dict):
            self.error(
                "expected an automation (a mapping of fields) or 'automations:' with a list, "
                f"got {_kind(data)}",
                tree.values[()],
            )
            return []
        if "automations" not in data:
            return [()]
        for key in data:
            if key != "automations":
                self.error(
                    "a file with 'automations:' holds nothing else", tree.keys[(key,)], (key,)
                )
        listed = data["automations"]
        if not isinstance(listed, list):
            where = ("automations",)
            self.error(
                f"expected a list of automations, got {_kind(listed)}", tree.values[where], where
            )
            return []
        if not listed:
            self.result.warnings.append(f"{self.path}: 'automations:' is an empty list")
        return [("automations", index) for index in range(len(listed))]

    def load_entry(self, tree: YamlTree, prefix: Loc) -> None:
        """Load one automation of a file; its problems carry its name when it has one."""
        errors_before = len(self.result.errors)
        self._load_entry(tree, prefix, errors_before)
        data = tree.get(prefix)
        name = data.get("name") if isinstance(data, dict) else None
        for problem in self.result.errors[errors_before:]:
            problem.automation = name if isinstance(name, str) else None

    def _load_entry(self, tree: YamlTree, prefix: Loc, errors_before: int) -> None:
        node, data = tree.values[prefix], tree.get(prefix)
        reported = {where for where, _, _ in tree.problems}
        for where, problem_node, message in tree.problems:
            if where[: len(prefix)] == prefix:
                self.error(message, problem_node, where)
        if not isinstance(data, dict):
            if prefix not in reported:
                message = f"expected an automation (a mapping of fields), got {_kind(data)}"
                self.error(message, node, prefix)
            return
        fields = {key: value for key, value in data.items() if key not in LOADER_FIELDS}
        for key in LOADER_FIELDS:
            if key in data:
                where = (*prefix, key)
                self.error(f"unknown field {key!r} (set by the loader)", tree.keys[where], where)
        fields.update(path=self.path, line=position(node)[0] or 1)
        context = {"known_sources": self.known_sources}
        try:
            automation = Automation.model_validate(fields, context=context)
        except ValidationError as exc:
            for err in exc.errors():
                if (*prefix, *_relative(err)) not in reported:  # e.g. None left by a bad tag
                    self.pydantic_error(tree, prefix, err)
            return
        if len(self.result.errors) == errors_before:
            self.add(automation, tree, prefix)

    def pydantic_error(self, tree: YamlTree, prefix: Loc, err: ErrorDetails) -> None:
        """Report one pydantic error at the YAML node it is about."""
        relative = _relative(err)
        loc = (*prefix, *relative)
        if err["type"] == "extra_forbidden":
            message = _unknown_field(relative)
            node = tree.keys.get(loc) or tree.near(loc)
        elif err["type"] == "missing":
            message, node = "required field is missing", tree.near(loc[:-1])
        else:
            message, node = _message(err), tree.near(loc)
        self.error(message, node, loc)

    def add(self, automation: Automation, tree: YamlTree, prefix: Loc) -> None:
        where = (*prefix, "name")
        other = self.first.get(automation.name)
        if other is not None:
            message = f"duplicate automation name {automation.name!r}"
            self.error(
                f"{message}: first defined at {other.path}:{other.line}", tree.near(where), where
            )
            return
        self.first[automation.name] = automation
        self.result.automations.append(automation)
        if self.positions:
            self.result.written[automation.name] = Written(self.raw, prefix)
        if not automation.checks:
            self.result.warnings.append(
                f"{automation.path}:{automation.line}: {automation.name}: no checks: "
                "needs an LLM to run; without one it is skipped"
            )
