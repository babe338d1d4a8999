"""A ``schema`` check's ``changes``: the table's columns and types against the last run's.

Each run records the columns it saw (``recorded``: the table, the dialect and
``[name, type]`` in catalog order) in the check's result; the store keeps it
with the check (``checks.store.recorded_schemas``) and the next run reads the
newest one back (``RecordedSchemas``). ``compare`` names each change:

- ``column surprise added``, ``column x removed`` (a column is its exact
  name: a rename, or a change of case, is one removed and one added: nothing
  in a catalog proves a rename);
- ``amount: integer → text``, the types as the catalog names them, when they
  are not one type in the source's dialect (``checks.sql.types.same_type``:
  PostgreSQL's ``int4`` and ``integer`` are one; ``integer`` and ``bigint``
  are two). On ClickHouse ``Nullable(T)`` is part of the type (whether the
  column takes NULL): ``amount: Nullable(Int32) → Int32`` is a change;
  ``LowCardinality(T)`` is only how values are stored, and no change.

A column that moved is no change. ``apply`` judges it, after the kind's own
judgement (``columns`` and ``expect``): a failed or errored check stays so;
with no earlier schema (the first run, a check moved to another table) or no
store to read one from it is **not evaluated** ("first run: schema recorded"),
since nothing was compared, but the schema is recorded for the next run; a
change is ``failed`` under ``forbid`` and ``warned`` under ``warn``; no change
leaves the kind's outcome (``passed``).
"""

from __future__ import annotations

from typing import Any, Protocol

from checks.kinds.base import Kind
from checks.kinds.schema import Schema
from checks.report import CheckOutcome, CheckResult
from checks.sql.catalog import Column
from checks.sql.types import declared_type, same_type

SHOWN = 20
"""At most this many changes are named in a check's reason ("and 3 more")."""

FIRST_RUN = "first run: schema recorded"
"""The reason of a check with no earlier schema to compare with."""

NO_STORE = "no store to read the last run's schema from: nothing compared"
"""The reason of a check run without a store (``lookout eval``)."""


class RecordedSchemas(Protocol):
    """Reads the schema a check recorded in its newest finished run before this one."""

    def __call__(self, check: str) -> dict[str, Any] | None:
        """The ``recorded`` mapping, or None when no earlier run recorded one."""
        ...


def compares(spec: Kind) -> bool:
    """Whether a check's kind compares its table's schema with the last run's."""
    return isinstance(spec, Schema) and spec.changes is not None


def recorded(table: str, dialect: str, columns: list[Column]) -> dict[str, Any]:
    """What a run records: ``{"table", "dialect", "columns": [[name, type], …]}``.

    A type is the one the table declares (``checks.sql.types.declared_type``):
    on ClickHouse a column that takes NULL is ``Nullable(T)``.
    """
    return {
        "table": table,
        "dialect": dialect,
        "columns": [[c.name, declared_type(c.type, c.nullable, dialect)] for c in columns],
    }


def compare(
    previous: dict[str, Any], current: dict[str, Any]
) -> tuple[list[str], list[str], list[str]]:
    """The changes from ``previous`` to ``current`` (``recorded`` mappings), in words.

    Returns:
        (added columns, in the table's order; removed ones, in the earlier
        order; changed types), each change in words; the types are compared
        in the current dialect.
    """
    dialect = str(current["dialect"])
    before = {str(name): str(kind) for name, kind in previous.get("columns", [])}
    now = {str(name): str(kind) for name, kind in current["columns"]}
    added = [f"column {name} added" for name in now if name not in before]
    removed = [f"column {name} removed" for name in before if name not in now]
    changed = [
        f"{name}: {before[name]} → {kind}"
        for name, kind in now.items()
        if name in before and not same_type(before[name], kind, dialect)
    ]
    return added, removed, changed


def apply(
    result: CheckResult,
    spec: Kind,
    current: dict[str, Any],
    schemas: RecordedSchemas | None,
) -> None:
    """Judge a ``schema`` check's ``changes`` in place (the rules are in the module docstring).

    Args:
        result: the check as its kind judged it (``columns``), with its metrics.
        spec: the check's kind; nothing happens when it has no ``changes``.
        current: the columns seen now (``recorded``); kept in ``result.recorded_schema``.
        schemas: the store's earlier schemas, or None when the run has no store.
    """
    if not isinstance(spec, Schema) or spec.changes is None:
        return
    if result.outcome is CheckOutcome.ERROR:
        return
    if spec.columns is None:  # the catalog is compared, not rows: an empty table has a schema
        result.outcome, result.reason = CheckOutcome.PASSED, None
    result.recorded_schema = current
    if schemas is None:
        _not_compared(result, NO_STORE)
        return
    previous = schemas(result.name)
    if previous is None:
        _not_compared(result, FIRST_RUN)
        return
    if previous.get("table") != current["table"]:
        _not_compared(result, f"first run on table {current['table']}: schema recorded")
        return
    added, removed, changed = compare(previous, current)
    found = added + removed + changed
    result.metrics.update(
        columns=len(current["columns"]),
        columns_added=len(added),
        columns_removed=len(removed),
        types_changed=len(changed),
        changes=len(found),
    )
    if spec.columns is None:
        result.value = len(found)
    if not found:
        return
    shown = "; ".join(found[:SHOWN])
    if len(found) > SHOWN:
        shown += f"; and {len(found) - SHOWN} more"
    result.reason = "; ".join(part for part in (result.reason, shown) if part)
    if result.outcome is CheckOutcome.FAILED:
        return
    result.outcome = CheckOutcome.FAILED if spec.changes == "forbid" else CheckOutcome.WARNED


def _not_compared(result: CheckResult, why: str) -> None:
    """Nothing compared: not evaluated, unless the check failed on its ``columns`` already."""
    if result.outcome is CheckOutcome.FAILED:
        result.reason = "; ".join(part for part in (result.reason, why) if part)
        return
    result.outcome = CheckOutcome.NOT_EVALUATED
    result.value = None
    result.reason = why
