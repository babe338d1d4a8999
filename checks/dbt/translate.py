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
from decimal import Decimal
from typing import Any

import sqlglot
from sqlglot import exp

from checks.dbt.conditions import Untranslatable, is_default, level_pair, levels
from checks.dbt.manifest import DataTest, Freshness, Manifest, Relation

_CORE = (None, "dbt")
_DATEPARTS = {"second": "s", "minute": "m", "hour": "h", "day": "d", "week": "w"}
_PERIODS = {"minute": "m", "hour": "h", "day": "d"}
_NOT_NAME = re.compile(r"[^A-Za-z0-9 _.-]+")
_MAX_NAME = 100
_OWN_SQL = "its SQL is its own: run it with dbt"
_DIALECTS = {"sqlserver": "tsql", "databricks": "databricks", "postgres": "postgres"}


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
        _add_filter(kind, rule.filter, manifest)
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
    _add_filter(table, test.where, manifest)
    core = test.namespace in _CORE
    if core and name == "not_null":
        body: dict[str, Any] = {"missing": {**table, "column": _column(test)}}
    elif core and name == "unique":
        keys = {"columns": [_column(test)], "nulls": "distinct", "count": "duplicate_groups"}
        body = {"duplicates": {**table, **keys}}
    elif core and name == "accepted_values":
        body = {"accepted_values": {**table, **_accepted(test)}}
    elif core and name == "relationships":
        parent = manifest.resolve(str(args.get("to", "")))
        if parent is None:
            raise Untranslatable(f"to: {args.get('to')!r} is not one model or source")
        _relation(manifest, parent.unique_id, schema)
        to = f"{parent.identifier}.{args.get('field')}"
        body = {"relationships": {**table, "column": _column(test), "to": to}}
    elif test.namespace == "dbt_utils" and name == "unique_combination_of_columns":
        columns = [str(c) for c in args.get("combination_of_columns") or []]
        keys = {"columns": columns, "nulls": "equal", "count": "duplicate_groups"}
        body = {"duplicates": {**table, **keys}}
    elif test.namespace == "dbt_utils" and name == "expression_is_true":
        return _expression(manifest, test, table)
    elif test.namespace == "dbt_utils" and name == "recency":
        return _recency(test, table)
    elif test.namespace == "dbt_utils" and name == "not_null_proportion":
        return _proportion(test, table)
    else:
        raise Untranslatable("not a test Lookout translates: run it with dbt")
    found = levels(test.severity, test.error_if, test.warn_if)
    body["expect"] = found.expect
    if found.warn is not None:
        body["warn"] = found.warn
    return body


def _column(test: DataTest) -> str:
    if not test.column:
        raise Untranslatable("no column_name")
    return test.column


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
        "column": _column(test),
        "values": values,
        "null": "allowed",
        "count": "distinct_invalid_values",
    }


def _one_row(test: DataTest) -> None:
    """A test whose failure is one row is read with the default conditions only."""
    if not (is_default(test.error_if) and is_default(test.warn_if)):
        raise Untranslatable("error_if or warn_if on a test whose failure is one row")


def _expression(manifest: Manifest, test: DataTest, table: dict[str, Any]) -> dict[str, Any]:
    expression = str(test.kwargs.get("expression") or "")
    text = f"{test.column} {expression}" if test.column else expression
    dialect = _dialect(manifest)
    condition: exp.Expr = exp.Not(this=exp.Paren(this=_condition(text, dialect, "expression")))
    if "filter" in table:
        condition = exp.and_(_condition(table["filter"], dialect, "where"), condition)
    body: dict[str, Any] = {"row_count": {**table, "filter": condition.sql(dialect=dialect)}}
    found = levels(test.severity, test.error_if, test.warn_if)
    body |= {"expect": found.expect, "allow_empty": True}
    if found.warn is not None:
        body["warn"] = found.warn
    return body


def _recency(test: DataTest, table: dict[str, Any]) -> dict[str, Any]:
    _one_row(test)
    datepart, interval = str(test.kwargs.get("datepart", "")), test.kwargs.get("interval")
    if datepart not in _DATEPARTS:
        raise Untranslatable(f"datepart {datepart!r} is not a fixed length (second to week)")
    if not isinstance(interval, int) or isinstance(interval, bool) or interval < 0:
        raise Untranslatable(f"interval {interval!r} is not a whole number of {datepart}s")
    if test.kwargs.get("ignore_time_component"):
        raise Untranslatable("ignore_time_component compares dates, not ages")
    found = level_pair(test.severity, f"<= {interval}{_DATEPARTS[datepart]}", ">= 0s")
    body: dict[str, Any] = {"freshness": {**table, "column": str(test.kwargs.get("field"))}}
    body["expect"] = found.expect
    if found.warn is not None:
        body["warn"] = found.warn
    return body


def _proportion(test: DataTest, table: dict[str, Any]) -> dict[str, Any]:
    _one_row(test)
    try:
        least = Decimal(str(test.kwargs["at_least"]))
        most = Decimal(str(test.kwargs.get("at_most", 1)))
    except (KeyError, ArithmeticError):
        raise Untranslatable("at_least and at_most are numbers") from None
    if not Decimal(0) <= least <= most <= Decimal(1):
        raise Untranslatable(f"at_least {least} and at_most {most} are not 0 ≤ least ≤ most ≤ 1")
    low, high = _percent(1 - most), _percent(1 - least)
    failing = f"<= {high}%" if low == "0" else f"between {low}% and {high}%"
    found = level_pair(test.severity, failing, "<= 100%")
    body: dict[str, Any] = {"missing": {**table, "column": _column(test)}, "expect": found.expect}
    if found.warn is not None:
        body["warn"] = found.warn
    return body


def _percent(share: Decimal) -> str:
    text = format((share * 100).normalize(), "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


def _dialect(manifest: Manifest) -> str:
    return _DIALECTS.get(manifest.adapter, manifest.adapter)


def _condition(text: str, dialect: str, setting: str) -> exp.Expr:
    if "{{" in text or "{%" in text:
        raise Untranslatable(f"{setting} holds Jinja, which only dbt renders")
    try:
        return sqlglot.parse_one(text, read=dialect or None, into=exp.Condition)
    except Exception as error:  # ParseError, TokenError, an unknown dialect
        raise Untranslatable(f"{setting} {text!r} is not one SQL condition: {error}") from None


def _add_filter(kind: dict[str, Any], where: str | None, manifest: Manifest) -> None:
    if where:
        _condition(where, _dialect(manifest), "where")
        kind["filter"] = where
