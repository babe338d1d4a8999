"""YAML read as plain data while keeping the line and column behind every value.

Used by ``checks.automation.loader`` so that every error points at the node it
is about. Built on the nodes of ``checks.fields.yaml_compose`` (libyaml's,
with their marks); duplicate keys, which PyYAML silently resolves to the last
value, are reported as problems. A key written as the plain word ``null`` is
the name ``null`` (the option of ``accepted_values`` and ``range``), not
YAML's null. A value that is not what its tag says (an unquoted
``2024-13-45``, ``!!int x``) is a problem at that value, never an exception.
"""

from __future__ import annotations

from typing import Any

import yaml
from yaml.nodes import ScalarNode, SequenceNode

from checks.errors import AutomationError
from checks.fields.yaml_compose import compose
from checks.fields.yaml_messages import not_of_its_type, unknown_tag

Loc = tuple[Any, ...]  # a location in the YAML data: keys and list indexes

_MERGE_TAG = "tag:yaml.org,2002:merge"
_STR_TAG = "tag:yaml.org,2002:str"
_COLLECTION_TAGS = ("tag:yaml.org,2002:map", "tag:yaml.org,2002:seq")
_MAX_NODES = 20_000  # stops alias bombs ("billion laughs")
_MAX_DEPTH = 64
_KEY_TYPES = (str, int, float)  # bool is an int


class YamlTree:
    """Plain data built from one YAML document, keeping the node behind every location.

    Built from composed nodes rather than ``safe_load`` so that each value
    keeps its line and column, and so that a duplicate key, which PyYAML
    would silently resolve to the last value, is found. Merge keys (``<<``)
    and aliases are followed; every value they build, each merged mapping
    included, counts toward ``_MAX_NODES``, past which the build stops
    (``complete`` is False) and only the problems found so far stand.
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
        # False once the cap on values stopped the build: ``data`` is then not the file's, and
        # only ``problems`` may be reported (every value past the cap would be missing).
        self.complete = True
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
        root = compose(text)
        if root is None:
            raise AutomationError(
                "the file is empty; expected an automation or 'automations:' with a list"
            )
        tree = cls()
        tree.text = text
        try:
            tree.data = tree._build(root, ())
        except _TooManyValues:
            tree.complete = False
        return tree

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

    def _count(self, loc: Loc, node: Any) -> None:
        """Count one value built (through an alias or a merge too).

        Raises:
            _TooManyValues: past the cap, once its problem is recorded.

        """
        self._visited += 1
        if self._visited > _MAX_NODES:
            self._problem(loc, node, f"more than {_MAX_NODES} values once aliases are expanded")
            raise _TooManyValues

    def _build(self, node: Any, loc: Loc) -> Any:
        self.values[loc] = node
        if (  # text, most values: what the general path below gives, without its calls
            node.__class__ is ScalarNode
            and node.tag == _STR_TAG
            and len(loc) <= _MAX_DEPTH
            and self._visited < _MAX_NODES
        ):
            self._visited += 1
            return node.value
        self._count(loc, node)
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
                return [self._build(item, (*loc, index)) for index, item in enumerate(node.value)]
            return self._mapping(node, loc)
        finally:
            self._open.pop()

    def _scalar(self, node: Any, loc: Loc) -> Any:
        if node.tag == _STR_TAG:  # what SafeConstructor gives, without its dispatch
            return node.value
        if self._constructor is None:
            self._constructor = yaml.constructor.SafeConstructor()  # scalars only: no parser
        try:
            return self._constructor.construct_object(node)
        except yaml.YAMLError:
            self._problem(loc, node, unknown_tag(node.tag))
        except (ValueError, KeyError, AttributeError, TypeError) as exc:
            # SafeConstructor's scalar constructors raise these for a value that is not what
            # its tag says (int('x'), a 13th month): a problem here, not a failed load.
            self._problem(loc, node, not_of_its_type(node.value, node.tag, exc))
        return None

    def _mapping(self, node: Any, loc: Loc) -> dict[Any, Any]:
        result: dict[Any, Any] = {}
        pairs = node.value
        self._merge_keys(pairs, loc, result)  # merged keys first: explicit ones win
        first: dict[Any, Any] = {}
        keys = self.keys
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
        self._count(loc, source)
        if len(self._open) > _MAX_DEPTH or source in self._open:
            self._problem(loc, source, "nested too deep, or a recursive alias")
            return {}
        self._open.append(source)
        try:
            return self._mapping(source, loc)
        finally:
            self._open.pop()


class _TooManyValues(Exception):
    """The file expands to more than ``_MAX_NODES`` values: its build stops (``complete``)."""


def _is_word_null(node: Any) -> bool:
    """Whether a key node is the plain word ``null`` (which YAML would read as no key at all)."""
    return (
        isinstance(node, yaml.ScalarNode) and not node.style and str(node.value).lower() == "null"
    )
