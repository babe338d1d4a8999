"""Loading automation files: YAML read with line and column, validated, every problem kept.

A YAML file holds one automation (a mapping of fields) or several under a
top-level ``automations:`` key. ``load_automations`` reads a folder of such
files (or one file), validates every automation and returns the good ones with
every problem found, each pointing at the YAML line and column it comes from.
A bad automation never stops the good ones beside it.
"""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path
from typing import Any

from pydantic import ValidationError
from pydantic_core import ErrorDetails

from checks.automation.check_shapes import validated_checks
from checks.automation.cycle_collector import collect_young, cycle_collection_paused
from checks.automation.files import automation_files, read_bytes
from checks.automation.load_result import LoadResult, Written
from checks.automation.model import LOADER_FIELDS, Automation
from checks.automation.validation_messages import (
    kind_of,
    message_of,
    relative_loc,
    unknown_field,
)
from checks.errors import AutomationError
from checks.fields.yaml_places import position
from checks.fields.yaml_tree import Loc, YamlTree

__all__ = ["LoadResult", "load_automations", "load_file"]


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
        data = read_bytes(path)
    except OSError as exc:
        result.errors.append(AutomationError(f"cannot read: {exc.strerror}", path=path))
        return
    _FileLoader(path, result, known_sources, first, positions=positions).load(data)


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
        if not tree.complete:  # an alias bomb: the data is cut short, only its problems stand
            for where, node, message in tree.problems:
                self.error(message, node, where)
            return
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
                f"got {kind_of(data)}",
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
                f"expected a list of automations, got {kind_of(listed)}", tree.values[where], where
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
                message = f"expected an automation (a mapping of fields), got {kind_of(data)}"
                self.error(message, node, prefix)
            return
        fields = {key: value for key, value in data.items() if key not in LOADER_FIELDS}
        for key in LOADER_FIELDS:
            if key in data:
                where = (*prefix, key)
                self.error(f"unknown field {key!r} (set by the loader)", tree.keys[where], where)
        fields.update(path=self.path, line=position(node)[0] or 1)
        if "checks" in fields:  # validated once per distinct check, then shared
            fields["checks"] = validated_checks(fields["checks"])
        context = {"known_sources": self.known_sources}
        try:
            automation = Automation.model_validate(fields, context=context)
        except ValidationError as exc:
            for err in exc.errors():
                if (*prefix, *relative_loc(err)) not in reported:  # e.g. None left by a bad tag
                    self.pydantic_error(tree, prefix, err)
            return
        if len(self.result.errors) == errors_before:
            self.add(automation, tree, prefix)

    def pydantic_error(self, tree: YamlTree, prefix: Loc, err: ErrorDetails) -> None:
        """Report one pydantic error at the YAML node it is about."""
        relative = relative_loc(err)
        loc = (*prefix, *relative)
        if err["type"] == "extra_forbidden":
            message = unknown_field(relative)
            node = tree.keys.get(loc) or tree.near(loc)
        elif err["type"] == "missing":
            message, node = "required field is missing", tree.near(loc[:-1])
        else:
            message, node = message_of(err), tree.near(loc)
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
        for index, check in enumerate(automation.checks):
            never = check.never_evaluated()
            if never is not None:
                field, reason = never
                line, column = position(tree.near((*prefix, "checks", index, field)))
                self.result.warnings.append(
                    f"{automation.path}:{line}:{column}: checks.{index}.{field}: {reason}"
                )
        if not automation.checks:
            line, column = position(tree.near(prefix))  # where the automation starts
            self.result.warnings.append(
                f"{automation.path}:{line}:{column}: {automation.name}: no checks: "
                "needs an LLM to run; without one it is skipped"
            )
