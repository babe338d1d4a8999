"""Each distinct check validated once per process: the same written check, the same ``Check``.

A large catalog repeats its checks (automations made from one template, the
same ``missing`` over every table's key), and a ``Check`` is immutable, so the
automations writing the same check share one. A check is known by the
``repr`` of its data as read from YAML, which tells apart every value that
could validate differently (``1`` and ``1.0`` and ``true``, text and a date,
the order of keys). A check that does not validate alone is left as written:
the automation's own validation reports it, with its place, as before.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from checks.automation.check import Check

_KEPT = 4096  # distinct checks kept; all dropped when full (safe across threads)
_known: dict[str, Check] = {}


def validated_checks(written: Any) -> Any:
    """``checks`` as written, with each check that validates alone replaced by its ``Check``.

    Anything that is not a list is returned as it is (the automation's
    validation says what is wrong with it); so is each item that is not a
    mapping, or that does not validate.
    """
    if not isinstance(written, list):
        return written
    return [_validated(item) if isinstance(item, dict) else item for item in written]


def _validated(item: dict[Any, Any]) -> Check | dict[Any, Any]:
    key = repr(item)
    found = _known.get(key)
    if found is not None:
        return found
    try:
        found = Check.model_validate(item)
    except ValidationError:
        return item
    if len(_known) >= _KEPT:
        _known.clear()
    _known[key] = found
    return found
