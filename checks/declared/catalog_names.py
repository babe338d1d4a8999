"""A typed check's names read against its source's catalog, and its ``filter:`` as one condition.

A table or column is found by its exact name, else by the one name that
differs from it only in case; a name not found is refused with the closest
one (``did_you_mean``). ``checks.declared.scope_sql`` builds its queries on
what these return.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlglot
from sqlglot import exp

from checks.errors import CheckDefinitionError
from checks.fields.rules import did_you_mean
from checks.sources.base import Column, DataSet
from checks.sql.catalog_check import condition_error, row_condition_problem


def parse_filter(text: str, dialect: str, at: str) -> exp.Expr:
    """Parse a ``filter:`` as one SQL condition in ``dialect``.

    Raises:
        CheckDefinitionError: it is not one condition, or not one on each row (an
            aggregate, a window function, a query parameter: ``row_condition_problem``).

    """
    try:
        condition = sqlglot.parse_one(text, read=dialect, into=exp.Condition)
    except Exception as error:  # ParseError, TokenError: fail closed
        raise CheckDefinitionError(condition_error(error), field=at) from None
    not_per_row = row_condition_problem(condition, dialect)
    if not_per_row is not None:
        raise CheckDefinitionError(not_per_row, field=at)
    return condition


def resolve_table(name: str, catalog: Sequence[DataSet], at: str) -> DataSet:
    """Return the data set ``name`` (exact, else the one differing only in case).

    Raises:
        CheckDefinitionError: no such data set, with the closest name.

    """
    exact = [d for d in catalog if d.name == name]
    folded = [d for d in catalog if d.name.lower() == name.lower()]
    found = exact or (folded if len(folded) == 1 else [])
    if not found:
        hint = did_you_mean(name, [d.name for d in catalog])
        raise CheckDefinitionError(f"no table {name!r} in this source{hint}", field=at)
    return found[0]


def resolve_column(data_set: DataSet, name: str, at: str) -> Column:
    """Return the column ``name`` of ``data_set`` (exact, else differing only in case).

    Raises:
        CheckDefinitionError: no such column, with the closest name.

    """
    exact = [c for c in data_set.columns if c.name == name]
    folded = [c for c in data_set.columns if c.name.lower() == name.lower()]
    found = exact or (folded if len(folded) == 1 else [])
    if not found:
        hint = did_you_mean(name, [c.name for c in data_set.columns])
        raise CheckDefinitionError(f"no column {name!r} in {data_set.name}{hint}", field=at)
    return found[0]
