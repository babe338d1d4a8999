"""YAML read as plain data while keeping the line and column behind every value.

Used by ``checks.automation.model`` so that every error points at the node it is
about. Built on ``yaml.compose``; duplicate keys, which PyYAML silently resolves
to the last value, are reported as problems. A key written as the plain word
``null`` is the name ``null`` (the option of ``accepted_values`` and ``range``),
not YAML's null.

Files are composed by libyaml (``yaml.CSafeLoader``, ~25 times faster than the
pure-Python parser), whose nodes carry the same marks (line and column). When
libyaml refuses a file, it is composed again by PyYAML's pure-Python
``SafeLoader``, so every error message and position is PyYAML's, as before.
libyaml's composer calls back into Python three times per node (the tag
resolver and its path hooks): ``_Composer`` answers the first from a cache and
the other two with C callables that do nothing, as PyYAML's do without path
resolvers (SafeLoader has none).
"""

from __future__ import annotations

import datetime as dt
import functools
import json
import math
from dataclasses import dataclass
from typing import Any

import yaml
from yaml.nodes import ScalarNode, SequenceNode

from checks.errors import AutomationError

Loc = tuple[Any, ...]  # a location in the YAML data: keys and list indexes

_MERGE_TAG = "tag:yaml.org,2002:merge"
_STR_TAG = "tag:yaml.org,2002:str"
_COLLECTION_TAGS = ("tag:yaml.org,2002:map", "tag:yaml.org,2002:seq")
_MAX_NODES = 20_000  # stops alias bombs ("billion laughs")
_MAX_DEPTH = 64
_RESOLVER: Any = yaml.resolver.Resolver()  # SafeLoader's implicit tags (null, bool, int, …)
_RESOLVED_KEPT = 4096  # scalars whose tag is kept: keys and short values repeat across files
_KEY_TYPES = (str, int, float)  # bool is an int


@functools.lru_cache(maxsize=_RESOLVED_KEPT)
def _resolve(kind: type, value: str | None, implicit: Any) -> str:
    """The tag PyYAML's resolver gives a node: it depends on these three arguments only.

    (SafeLoader's resolver has no path resolvers; its implicit ones are fixed
    when PyYAML is imported.)
    """
    tag: str = _RESOLVER.resolve(kind, value, implicit)
    return tag


_BASE_LOADER: Any = getattr(yaml, "CSafeLoader", None)


class _Composer(_BASE_LOADER or yaml.SafeLoader):  # type: ignore[misc]
    """libyaml's composer (when PyYAML has it), with its calls into Python made cheap.

    The same nodes, tags and marks as ``yaml.CSafeLoader``: the resolver's
    answer comes from ``_resolve``; ``descend_resolver``/``ascend_resolver``
    only track paths for path resolvers, which SafeLoader has none of, so they
    are C callables doing nothing (a builtin is not bound as a method).
    """

    if _BASE_LOADER is not None:
        resolve = staticmethod(_resolve)
        descend_resolver: Any = {}.get  # (parent, index) -> index, ignored
        ascend_resolver = tuple  # () -> (), ignored


_FAST_LOADER: Any = _Composer  # without libyaml: SafeLoader, the same nodes


def shown(value: object) -> str:
    """A value read from YAML as an error message shows it: as YAML writes it, never a Python repr.

    Text is single-quoted (``'Late Flights'``; double-quoted with escapes when it
    holds control characters), booleans are ``true``/``false``, infinities
    ``.inf``; a date or timestamp YAML read from an unquoted value says so
    (``the date 2024-01-01``), since that is why text was not found.
    """
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and not math.isfinite(value):
        return ".nan" if math.isnan(value) else ("-.inf" if value < 0 else ".inf")
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, str):
        if value.isprintable():
            return "'" + value.replace("'", "''") + "'"
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, dt.datetime):
        return f"the timestamp {value.isoformat(sep=' ')}"
    if isinstance(value, dt.date):
        return f"the date {value.isoformat()}"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list | tuple):
        return "a list"
    if isinstance(value, bytes):
        return "binary data"
    return "a value of another kind"


class YamlTree:
    """Plain data built from one YAML document, keeping the node behind every location.

    Built from ``yaml.compose`` rather than ``safe_load`` so that
    each value keeps its line and column, and so that a duplicate key, which
    PyYAML would silently resolve to the last value, is found. Merge keys
    (``<<``) and aliases are followed; every value they build, each merged
    mapping included, counts toward ``_MAX_NODES``.
    """

    def __init__(self) -> None:
        self.values: dict[Loc, Any] = {}  # location -> value node
        self.keys: dict[Loc, Any] = {}  # location -> key node
        self.problems: list[tuple[Loc, Any, str]] = []  # location, node, message
        self.data: Any = None
        self.text = ""  # the file's text, for positions inside values (``lines``)
        self._lines: list[str] | None = None
        self._constructor: Any = None  # scalars other than text only; made when first needed
        self._visited = 0
        self._open: list[Any] = []  # collection nodes being built: an alias back to one loops

    @property
    def lines(self) -> list[str]:
        """The file's text split in lines (split when first asked: only positions need it)."""
        if self._lines is None:
            self._lines = self.text.splitlines()
        return self._lines

    @classmethod
    def parse(cls, raw: bytes) -> YamlTree:
        """Decode and compose one file.

        Raises:
            AutomationError: (without a path) the file is not UTF-8, not YAML,
                or empty. Problems inside the data are collected in ``problems``.

        """
        try:
            text = raw.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            head = raw[: exc.start]
            line, column = head.count(b"\n") + 1, exc.start - head.rfind(b"\n")
            message = f"not UTF-8 text: byte 0x{raw[exc.start]:02x} cannot be decoded"
            raise AutomationError(message, line=line, column=column) from None
        try:
            root = yaml.compose(text, Loader=_FAST_LOADER)
        except (yaml.YAMLError, RecursionError):
            root = cls._compose_slowly(text)
        if root is None:
            raise AutomationError(
                "the file is empty; expected an automation or 'automations:' with a list"
            )
        tree = cls()
        tree.text = text
        tree.data = tree._build(root, ())
        return tree

    @staticmethod
    def _compose_slowly(text: str) -> Any:
        """Compose with PyYAML's pure-Python parser: its errors, at its positions.

        Raises:
            AutomationError: the text is not YAML (which is why libyaml refused it).

        """
        try:
            return yaml.compose(text, Loader=yaml.SafeLoader)
        except yaml.MarkedYAMLError as exc:
            raise yaml_error(exc) from None
        except RecursionError:  # PyYAML's composer recurses once per nesting level
            raise AutomationError("not valid YAML: nested too deep") from None
        except yaml.YAMLError as exc:  # ReaderError: a character YAML does not allow
            position = getattr(exc, "position", 0)
            before = text[:position]
            line, column = before.count("\n") + 1, position - before.rfind("\n")
            message = f"not valid YAML: {str(exc).splitlines()[0]}"
            raise AutomationError(message, line=line, column=column) from None

    def near(self, loc: Loc) -> Any:
        """Return the node at ``loc``, or at its nearest enclosing location."""
        while loc not in self.values and loc:
            loc = loc[:-1]
        return self.values.get(loc)

    def get(self, loc: Loc) -> Any:
        """Return the data at ``loc`` (which must exist)."""
        data = self.data
        for part in loc:
            data = data[part]
        return data

    def _problem(self, loc: Loc, node: Any, message: str) -> None:
        self.problems.append((loc, node, message))

    def _count(self, loc: Loc, node: Any) -> bool:
        """Count one value built (through an alias or a merge too); False past the cap."""
        self._visited += 1
        if self._visited > _MAX_NODES:
            if self._visited == _MAX_NODES + 1:
                self._problem(loc, node, f"more than {_MAX_NODES} values once aliases are expanded")
            return False
        return True

    def _build(self, node: Any, loc: Loc) -> Any:
        self.values[loc] = node
        if not self._count(loc, node):
            return None
        if len(loc) > _MAX_DEPTH or node in self._open:
            self._problem(loc, node, "nested too deep, or a recursive alias")
            return None
        if isinstance(node, ScalarNode):
            return self._scalar(node, loc)
        if node.tag not in _COLLECTION_TAGS:
            self._problem(loc, node, f"YAML tag {node.tag!r} is not supported")
        self._open.append(node)
        try:
            if isinstance(node, SequenceNode):
                return self._sequence(node, loc)
            return self._mapping(node, loc)
        finally:
            self._open.pop()

    def _sequence(self, node: Any, loc: Loc) -> list[Any]:
        items: list[Any] = []
        values, shallow = self.values, len(loc) < _MAX_DEPTH
        for index, item in enumerate(node.value):
            at = (*loc, index)
            if (  # text, most values: kept as _build keeps it, without its calls
                item.__class__ is ScalarNode
                and item.tag == _STR_TAG
                and shallow
                and self._visited < _MAX_NODES
            ):
                values[at] = item
                self._visited += 1
                items.append(item.value)
            else:
                items.append(self._build(item, at))
        return items

    def _scalar(self, node: Any, loc: Loc) -> Any:
        if node.tag == _STR_TAG:  # most values: what SafeConstructor gives, without its dispatch
            return node.value
        if self._constructor is None:
            self._constructor = yaml.constructor.SafeConstructor()  # scalars only: no parser
        try:
            return self._constructor.construct_object(node)
        except yaml.YAMLError:
            self._problem(
                loc,
                node,
                f"YAML reads {node.tag!r} as a tag; quote a value that starts with '!', "
                'e.g. expect: "!= 0"',
            )
            return None

    def _mapping(self, node: Any, loc: Loc) -> dict[Any, Any]:
        result: dict[Any, Any] = {}
        pairs = node.value
        self._merge_keys(pairs, loc, result)  # merged keys first: explicit ones win
        first: dict[Any, Any] = {}
        keys, values, shallow = self.keys, self.values, len(loc) < _MAX_DEPTH
        for key_node, value_node in pairs:
            tag = key_node.tag
            if tag == _MERGE_TAG:
                continue
            if key_node.__class__ is not ScalarNode:
                key = None
            else:
                key = key_node.value if tag == _STR_TAG else self._scalar(key_node, loc)
                if key is None and _is_word_null(key_node):
                    key = "null"  # a key is a name: `null: violation` is the option called null
            if not isinstance(key, _KEY_TYPES):
                self._problem(loc, key_node, "a key must be a plain text value")
                continue
            if key in first:
                line = first[key].start_mark.line + 1
                self._problem(
                    (*loc, key),
                    key_node,
                    f"duplicate key {key!r} (first on line {line}); YAML would keep only the last",
                )
                continue
            first[key] = key_node
            at = (*loc, key)
            keys[at] = key_node
            if (  # text, most values: kept as _build keeps it, without its calls
                value_node.__class__ is ScalarNode
                and value_node.tag == _STR_TAG
                and shallow
                and self._visited < _MAX_NODES
            ):
                values[at] = value_node
                self._visited += 1
                result[key] = value_node.value
            else:
                result[key] = self._build(value_node, at)
        return result

    def _merge_keys(self, pairs: list[tuple[Any, Any]], loc: Loc, result: dict[Any, Any]) -> None:
        """Put the keys merged in with '<<' into ``result`` (the first mapping listed wins)."""
        for key_node, value_node in pairs:
            if key_node.tag == _MERGE_TAG:
                merged = value_node.value if isinstance(value_node, SequenceNode) else [value_node]
                for source in reversed(merged):
                    if isinstance(source, yaml.MappingNode):
                        result.update(self._merge(source, loc))
                    else:
                        self._problem(loc, source, "a merge key '<<' needs a mapping")

    def _merge(self, source: Any, loc: Loc) -> dict[Any, Any]:
        """Build a mapping merged in with '<<': counted like any value, loops and depth refused.

        Every merge expands its mapping again (as an alias does), so each one
        counts toward ``_MAX_NODES``: nine merges of nine merges of … cannot
        make a tiny file take seconds to load.
        """
        if not self._count(loc, source):
            return {}
        if len(self._open) > _MAX_DEPTH or source in self._open:
            self._problem(loc, source, "nested too deep, or a recursive alias")
            return {}
        self._open.append(source)
        try:
            return self._mapping(source, loc)
        finally:
            self._open.pop()


def _is_word_null(node: Any) -> bool:
    """Whether a key node is the plain word ``null`` (which YAML would read as no key at all)."""
    return (
        isinstance(node, yaml.ScalarNode) and not node.style and str(node.value).lower() == "null"
    )


def yaml_error(exc: yaml.MarkedYAMLError) -> AutomationError:
    """Turn a PyYAML error into an ``AutomationError`` at its mark, with a hint where one helps."""
    mark = exc.problem_mark or exc.context_mark
    message = f"not valid YAML: {exc.problem or exc.context}"
    if exc.context and exc.problem:
        message += f" ({exc.context})"
    if exc.context == "while scanning a block scalar":
        message += "; quote a value that starts with '>' or '|', e.g. expect: \"> 0\""
    elif exc.problem == "but found another document":
        message += "; one YAML document per file: list several under 'automations:'"
    return AutomationError(
        message,
        line=mark.line + 1 if mark else None,
        column=mark.column + 1 if mark else None,
    )


@dataclass(frozen=True)
class Place:
    """Where a value is in its file, and how to find a line and column inside it.

    Attributes:
        line: 1-based line where the value starts (for a ``|`` block, the
            line of the ``|``).
        column: 1-based column where it starts.
        style: the scalar's YAML style: ``|``, ``>``, ``"``, ``'`` or ``""``
            (plain), or ``""`` for a mapping or list.
        indent: a ``|`` block's indentation (its text's column 1 is at
            ``indent + 1``); 0 otherwise.
        single_line: the value is written on one line.
    """

    line: int
    column: int
    style: str = ""
    indent: int = 0
    single_line: bool = True

    def inside(self, line: int | None, column: int | None) -> tuple[int, int]:
        """Map a 1-based (line, column) in the value's text to the file's.

        Exact for a ``|`` block and for a value on one line (plain or quoted,
        assuming no escapes before the point); anything else maps to where
        the value starts.
        """
        if line is None or column is None:
            return self.line, self.column
        if self.style == "|":
            return self.line + line, self.indent + column
        if self.single_line and line == 1:
            quote = 1 if self.style in ('"', "'") else 0
            return self.line, self.column + quote + column - 1
        return self.line, self.column


PlaceFields = tuple[int, int, str, int, bool]
"""A ``Place``'s fields in order: what a load keeps per value, built into a ``Place`` when asked."""


def place(node: Any, lines: list[str] | None = None) -> Place | None:
    """Return the ``Place`` of a node, or None without one.

    ``lines`` is the file's text split in lines (``YamlTree.lines``): libyaml's
    marks carry no copy of the text, so a ``|`` block's indentation is read there.
    """
    fields = place_fields(node, lines)
    return None if fields is None else Place(*fields)


def place_fields(node: Any, lines: list[str] | None = None) -> PlaceFields | None:
    """Return the fields of the ``Place`` of a node (see ``place``), or None without one."""
    if node is None:
        return None
    start, end = node.start_mark, node.end_mark
    style = getattr(node, "style", None) or ""
    indent = 0
    if lines is None and start.buffer is not None:
        lines = start.buffer.splitlines()
    if style == "|" and lines is not None:
        for text in lines[start.line + 1 : end.line + 1]:
            if text.strip():
                indent = len(text) - len(text.lstrip(" "))
                break
    return (
        start.line + 1,
        start.column + 1,
        style if isinstance(style, str) else "",
        indent,
        start.line == end.line or (end.line == start.line + 1 and end.column == 0),
    )


def position(node: Any) -> tuple[int | None, int | None]:
    """Return the 1-based (line, column) where ``node`` starts, or (None, None)."""
    if node is None:
        return None, None
    return node.start_mark.line + 1, node.start_mark.column + 1
