"""Every typed check kind, by its YAML key: one line per kind, in the order the README lists them.

A check holds ``sql`` or exactly one of these keys (``checks.automation.model``);
every part of a kind (its SQL, judgement, words, column rules) is reached
through ``KINDS``, never by naming the kind. Adding a kind is one module in
``checks/kinds/`` and one ``register`` line here (docs/adding-a-check-kind.md).
"""

from __future__ import annotations

from checks.kinds.accepted_values import AcceptedValues
from checks.kinds.aggregate import Aggregate
from checks.kinds.base import Kind
from checks.kinds.compare import Compare
from checks.kinds.duplicates import Duplicates
from checks.kinds.freshness import Freshness
from checks.kinds.missing import Missing
from checks.kinds.range import Range
from checks.kinds.relationships import Relationships
from checks.kinds.row_count import RowCount
from checks.kinds.schema import Schema
from checks.kinds.validity import Validity

KINDS: dict[str, type[Kind]] = {}
"""Every typed kind by its YAML key."""


def register(kind: type[Kind]) -> type[Kind]:
    """Add ``kind`` under its YAML key (``kind.KIND``); returns it (usable as a decorator).

    Raises:
        ValueError: the key is empty, ``sql``, or taken by another kind.
    """
    key = kind.KIND
    if not key or key == "sql" or KINDS.get(key, kind) is not kind:
        raise ValueError(f"a kind needs its own YAML key (got {key!r})")
    KINDS[key] = kind
    return kind


def over_kinds() -> tuple[str, ...]:
    """The kinds that take ``over:``: their metrics are counts, 0 over a bucket with no rows."""
    return tuple(key for key, kind in KINDS.items() if kind.OVER)


register(RowCount)
register(Missing)
register(Duplicates)
register(AcceptedValues)
register(Relationships)
register(Freshness)
register(Range)
register(Validity)
register(Aggregate)
register(Schema)
register(Compare)
