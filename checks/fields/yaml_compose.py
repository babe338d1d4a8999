"""YAML text composed into PyYAML nodes (with their marks), by libyaml when it can.

Files are composed by libyaml (``yaml.CSafeLoader``, ~25 times faster than the
pure-Python parser), whose nodes carry the same marks (line and column). When
libyaml refuses a file, it is composed again by PyYAML's pure-Python
``SafeLoader``, so every error message and position is PyYAML's.
libyaml's composer calls back into Python three times per node (the tag
resolver and its path hooks): ``_Composer`` answers the first from a cache and
the other two with C callables that do nothing, as PyYAML's do without path
resolvers (SafeLoader has none).
"""

from __future__ import annotations

import functools
from typing import Any

import yaml

from checks.errors import AutomationError
from checks.fields.yaml_messages import yaml_error

_RESOLVER: Any = yaml.resolver.Resolver()  # SafeLoader's implicit tags (null, bool, int, …)
_RESOLVED_KEPT = 4096  # scalars whose tag is kept: keys and short values repeat across files


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


def compose(text: str) -> Any:
    """Compose one YAML document into its root node (None for an empty document).

    Raises:
        AutomationError: (without a path) the text is not YAML, with PyYAML's
            message and position, and a hint where one helps.

    """
    try:
        return yaml.compose(text, Loader=_Composer)
    except (yaml.YAMLError, RecursionError):
        return _compose_slowly(text)


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
