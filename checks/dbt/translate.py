"""Each dbt test as one Lookout check that judges exactly as ``dbt test`` does.

The SQL of each test, read from dbt-adapters' ``global_project/macros/generic_test_sql/``
and dbt-utils' ``macros/generic_tests/``, and the kind that counts the same rows:

- ``not_null``: ``where col is null``: ``missing`` (NULL rows).
- ``unique``: ``where col is not null group by col having count(*) > 1``:
  ``duplicates`` with ``nulls: distinct``, ``count: duplicate_groups``.
- ``accepted_values``: ``group by col`` then ``value_field not in (…)``, where a
  NULL is never ``not in``: ``accepted_values`` with ``null: allowed``,
  ``count: distinct_invalid_values``.
- ``relationships``: child rows ``where col is not null`` left-joined to the
  parent, unmatched: ``relationships`` (orphan rows, NULL keys skipped).
- ``dbt_utils.unique_combination_of_columns``: ``group by cols having count(*) > 1``,
  where GROUP BY puts NULLs together: ``duplicates`` with ``nulls: equal``,
  ``count: duplicate_groups``.
- ``dbt_utils.expression_is_true``: ``where not(expr)`` (a NULL is not counted):
  ``row_count`` over ``filter: NOT (expr)``, ``expect: == 0``, ``allow_empty``.
- ``dbt_utils.recency``: ``max(field) < now - interval`` or NULL: ``freshness``,
  ``expect: <= interval`` (``second`` to ``week``; a month or a year is not a
  fixed length, and ``ignore_time_component`` compares dates: not translated).
- ``dbt_utils.not_null_proportion``: ``not_null_proportion < at_least or > at_most``:
  ``missing`` with ``expect`` a percent between 1 − at_most and 1 − at_least.
- a source's ``freshness``: ``freshness`` with ``expect: <= error_after``,
  ``warn: <= warn_after`` (dbt's ``exceeded`` is ``age > threshold``).

A test's ``where:`` config becomes ``filter:``; severity, ``error_if`` and
``warn_if`` become ``expect`` and ``warn`` (``checks.dbt.conditions``). A test
that cannot be judged exactly is ``Untranslated``, with the reason, never left out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from checks.dbt.conditions import Untranslatable, levels
from checks.dbt.manifest import DataTest, Freshness, Manifest, Relation
from checks.dbt.utils_tests import column_of, expression_is_true, not_null_proportion, recency
from checks.dbt.where import add_filter

_CORE = (None, "dbt")
_PERIODS = {"minute": "m", "hour": "h", "day": "d"}
_NOT_NAME = re.compile(r"[^A-Za-z0-9 _.-]+")
_MAX_NAME = 100
_OWN_SQL = "its SQL is its own: run it with dbt"


@dataclass(frozen=True)
class Translated:
    """One dbt test (or a source's freshness) as one check on ``relation``."""

    unique_id: str
    relation: Relation
    check: dict[str, Any]
    owner: str | None
    tags: tuple[str, ...]


@dataclass(frozen=True)
class Untranslated:
    """A dbt test Lookout does not judge, with what it is and why."""

    unique_id: str
    what: str
    reason: str
    relation_id: str | None

    @property
    def line(self) -> str:
        """``test.shop.x (dbt_utils.at_least_one): not a test Lookout translates``."""
        return f"{self.unique_id} ({self.what}): {self.reason}"


def translate_test(manifest: Manifest, test: DataTest, schema: str) -> Translated | Untranslated:
    """``test`` as a check on its relation, which must be in ``schema``; else why not."""
    if test.test_name is None:  # a singular test: listed beside the one relation it reads
        reads = test.depends_on[0] if len(test.depends_on) == 1 else None
        return Untranslated(test.unique_id, test.qualified_name, _OWN_SQL, reads)
    try:
        relation = _relation(manifest, test.relation_id, schema)
        _plain(test)
        body = _kind(manifest, test, relation, schema)
    except Untranslatable as why:
        return Untranslated(test.unique_id, test.qualified_name, str(why), test.relation_id)
    check = {"name": check_name(test.name, test.unique_id), **body}
    return Translated(
        test.unique_id,
        relation,
        check,
        test.owner or relation.owner,
        tuple(sorted(set(relation.tags) | set(test.tags))),
    )


def check_name(name: str, unique_id: str) -> str:
    """A dbt test's name as a check name (``checks.fields.rules.CHECK_NAME``).

    dbt's generic test names are letters, digits and ``_`` already; anything
    else becomes ``_``, and a name over 100 characters keeps its first 89 and
    the test's unique-id hash, so that it stays unique.
    """
    cleaned = _NOT_NAME.sub("_", name).lstrip("_ .-") or "dbt_test"
    if len(cleaned) <= _MAX_NAME:
        return cleaned
    return f"{cleaned[: _MAX_NAME - 11]}_{unique_id.rsplit('.', 1)[-1][:10]}"


def translate_freshness(
    manifest: Manifest, rule: Freshness, schema: str
) -> Translated | Untranslated | None:
    """A source table's ``freshness`` as a ``freshness`` check; None when it has none."""
    if rule.warn_after is None and rule.error_after is None:
        return None
    what = "source freshness"
    try:
        relation = _relation(manifest, rule.relation_id, schema)
        if rule.loaded_at_query:
            raise Untranslatable("loaded_at_query is SQL of its own")
        if not rule.loaded_at_field:
            raise Untranslatable("no loaded_at_field")
        kind: dict[str, Any] = {"table": relation.identifier, "column": rule.loaded_at_field}
        add_filter(kind, rule.filter, manifest)
        warn = _period(rule.warn_after) if rule.warn_after else None
        expect = _period(rule.error_after) if rule.error_after else ">= 0s"
    except Untranslatable as why:
        return Untranslated(rule.relation_id, what, str(why), rule.relation_id)
    check: dict[str, Any] = {"name": f"freshness {relation.name}", "freshness": kind}
    check["expect"] = expect
    if warn is not None and warn != expect:
        check["warn"] = warn
    return Translated(rule.relation_id, relation, check, relation.owner, relation.tags)


def _period(threshold: tuple[int, str]) -> str:
    count, period = threshold
    if period not in _PERIODS:
        raise Untranslatable(f"period {period!r} is not minute, hour or day")
    return f"<= {count}{_PERIODS[period]}"


def _relation(manifest: Manifest, relation_id: str | None, schema: str) -> Relation:
    relation = manifest.relations.get(relation_id or "")
    if relation is None:
        raise Untranslatable("not attached to one model, seed, snapshot or source")
    if relation.schema != schema:
        raise Untranslatable(
            f"{relation.relation_name} is in schema {relation.schema}, the source reads {schema}:"
            f" import again with --schema {relation.schema} and that schema's source"
        )
    return relation


def _plain(test: DataTest) -> None:
    if test.fail_calc.replace(" ", "").lower() != "count(*)":
        raise Untranslatable(f"fail_calc {test.fail_calc!r} counts otherwise than rows")
    if test.limit is not None:
        raise Untranslatable(f"limit {test.limit} caps the failures dbt counts")
    for key in ("group_by_columns",):
        if test.kwargs.get(key):
            raise Untranslatable(f"{key} judges each group apart")


def _kind(manifest: Manifest, test: DataTest, relation: Relation, schema: str) -> dict[str, Any]:
    """The check's kind, ``expect`` and ``warn`` for a generic test (module docstring)."""
    args, name = test.kwargs, test.test_name
    table: dict[str, Any] = {"table": relation.identifier}
    add_filter(table, test.where, manifest)
    core = test.namespace in _CORE
    if core and name == "not_null":
        body: dict[str, Any] = {"missing": {**table, "column": column_of(test)}}
    elif core and name == "unique":
        keys = {"columns": [column_of(test)], "nulls": "distinct", "count": "duplicate_groups"}
        body = {"duplicates": {**table, **keys}}
    elif core and name == "accepted_values":
        body = {"accepted_values": {**table, **_accepted(test)}}
    elif core and name == "relationships":
        parent = manifest.resolve(str(args.get("to", "")))
        if parent is None:
            raise Untranslatable(f"to: {args.get('to')!r} is not one model or source")
        _relation(manifest, parent.unique_id, schema)
        to = f"{parent.identifier}.{args.get('field')}"
        body = {"relationships": {**table, "column": column_of(test), "to": to}}
    elif test.namespace == "dbt_utils" and name == "unique_combination_of_columns":
        columns = [str(c) for c in args.get("combination_of_columns") or []]
        keys = {"columns": columns, "nulls": "equal", "count": "duplicate_groups"}
        body = {"duplicates": {**table, **keys}}
    elif test.namespace == "dbt_utils" and name == "expression_is_true":
        return expression_is_true(manifest, test, table)
    elif test.namespace == "dbt_utils" and name == "recency":
        return recency(test, table)
    elif test.namespace == "dbt_utils" and name == "not_null_proportion":
        return not_null_proportion(test, table)
    else:
        raise Untranslatable("not a test Lookout translates: run it with dbt")
    found = levels(test.severity, test.error_if, test.warn_if)
    body["expect"] = found.expect
    if found.warn is not None:
        body["warn"] = found.warn
    return body


def _accepted(test: DataTest) -> dict[str, Any]:
    values = list(test.kwargs.get("values") or [])
    if not values:
        raise Untranslatable("no values")
    if test.kwargs.get("quote", True) is False:
        if not all(isinstance(v, int | float) and not isinstance(v, bool) for v in values):
            raise Untranslatable("quote: false with values that are SQL, not numbers")
    else:  # dbt quotes each ('1'); the kind writes each as the column's type takes it
        values = [str(v) if isinstance(v, bool) or v is None else v for v in values]
    return {
        "column": column_of(test),
        "values": values,
        "null": "allowed",
        "count": "distinct_invalid_values",
    }
