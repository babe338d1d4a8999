"""The source's own functions, macros and views: used only when they read its own data sets.

A function, macro or view written in the source's own schema runs SQL that the
guard never sees: ``SELECT employee_ssn()`` reads ``payroll`` through a SQL
function, ``SELECT * FROM staff_v`` through a view, although ``tables:`` leaves
``payroll`` out. So each definition the database holds (a PostgreSQL SQL
function's body, a DuckDB macro's, a view's query) is read with the catalog and
parsed: one that reads a table the source does not offer, or that does not
parse, is taken out — the function from what the guard allows to be called
(``checks.sql.facts``), the view from the catalog — and the source logs it once.
Procedural functions (PL/pgSQL and the like) are never allowed (``facts``).
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from checks.sql.catalog import DataSet

if TYPE_CHECKING:  # sqlglot, under checks.sql, only once a definition is read
    from checks.sql.facts import SourceFacts

log = logging.getLogger("lookout.sources")

Kind = Literal["function", "view"]


@dataclass(frozen=True)
class Definition:
    """One function, macro or view of the source's own schema, and the SQL it runs.

    Attributes:
        kind: ``function`` (a SQL function or a macro) or ``view``.
        name: its name as the database has it.
        sql: its body or query, as the database keeps it.
    """

    kind: Kind
    name: str
    sql: str


def outside(
    definition: Definition, offered: frozenset[str], dialect: str, schema: str
) -> list[str] | None:
    """The tables a definition reads that the source does not offer, or None when it reads none.

    ``offered`` holds the source's data sets' names folded as ``dialect`` folds
    them; a table qualified with another schema than ``schema`` is never offered.
    A body that does not parse reads ``["(a body that does not parse)"]``: what it
    reads is unknown, so it is refused.
    """
    import sqlglot
    from sqlglot import exp

    from checks.sql.tables import fold, tables_read

    try:
        trees = [t for t in sqlglot.parse(definition.sql, read=dialect) if t is not None]
    except sqlglot.errors.SqlglotError:
        return ["(a body that does not parse)"]
    # SQLite and DuckDB keep a view as its CREATE VIEW statement: its query is what it reads
    trees = [t.expression if isinstance(t, exp.Create) and t.expression else t for t in trees]
    missing: set[str] = set()
    for tree in trees:
        elsewhere = set()
        for table in tree.find_all(exp.Table):
            qualifier = table.args.get("catalog") or table.args.get("db")
            if qualifier is not None and qualifier.name.lower() != schema.lower():
                missing.add(table.sql(dialect=dialect))  # another schema's: never offered
                elsewhere.add(table.name)
        read = [n for n in tables_read(tree, dialect) if n not in elsewhere]
        missing.update(n for n in read if fold(n, dialect) not in offered)
    return sorted(missing) or None


def confine(
    data_sets: Sequence[DataSet],
    facts: SourceFacts | None,
    definitions: Sequence[Definition],
    *,
    source: str,
    dialect: str,
    schema: str,
) -> tuple[list[DataSet], SourceFacts | None]:
    """Take out the functions and views that read what the source does not offer.

    Returns:
        The data sets without such views, and the facts without such functions.
    """
    if not definitions:
        return list(data_sets), facts
    from checks.sql.tables import fold

    views = {d.name for d in definitions if d.kind == "view"}
    offered = frozenset(fold(d.name, dialect) for d in data_sets if d.name not in views)
    # a view over other offered views is fine: add the views that read only tables
    clean_views = {
        d.name
        for d in definitions
        if d.kind == "view" and outside(d, offered, dialect, schema) is None
    }
    offered |= frozenset(fold(name, dialect) for name in clean_views)
    dropped_views: set[str] = set()
    dropped_functions: dict[str, str] = {}
    for definition in definitions:
        if definition.kind == "view" and definition.name in clean_views:
            continue
        reads = outside(definition, offered, dialect, schema)
        if reads is None:
            continue
        why = f"it reads {', '.join(reads)}, which the source does not offer"
        if definition.kind == "view":
            dropped_views.add(definition.name)
        else:
            dropped_functions[definition.name.lower()] = why
        log.warning(
            "source %s: %s %s reads %s, which the source does not offer: it is not used",
            source,
            definition.kind,
            definition.name,
            ", ".join(reads),
        )
    kept = [d for d in data_sets if d.name not in dropped_views]
    if facts is not None and dropped_functions:
        facts = dataclasses.replace(
            facts,
            functions=facts.functions - frozenset(dropped_functions),
            refused=(*facts.refused, *sorted(dropped_functions.items())),
        )
    return kept, facts
