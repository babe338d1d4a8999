"""What the database itself says may be called and cast to: the guard allows only that.

Part of the SQL guard (``checks.sql.guard``, layer 1 of reading data safely,
docs/design.md, Reading data safely). A deny list can only name what is known to be unsafe; this
module lets the guard allow only what is known to be safe instead, from facts
a source reads from its own database once, with its catalog (``SourceFacts``):

- a function called without a schema must be a built-in the database marks as
  safe or a function of the source's own schema: on PostgreSQL one whose every
  overload is ``IMMUTABLE`` or ``STABLE`` (``pg_proc.provolatile``) and takes
  and returns no catalog reference (``oid``, ``regclass`` and the other
  ``reg*`` types); on DuckDB one without side effects
  (``duckdb_functions().has_side_effects``). A few volatile built-ins that
  only read a clock or a random generator stay allowed (``HARMLESS_VOLATILE``).
  The guard's deny list still applies on top (``current_setting`` is stable);
- a function qualified with a schema (``hidden.get_secret()``) must be of the
  source's schema; in DuckDB ``x.upper()`` on a column that is not a schema
  name is a method call and is checked as ``upper(x)``;
- a cast may not name a catalog type (``::regclass``, ``::regnamespace``,
  ``::regrole``, …: each turns numbers or names into the catalog's objects), a
  type of another schema (``NULL::hidden.secret``), nor a user-defined type the
  source does not own (a table's row type counts only for its data sets).

Without facts (SQLite, MySQL) the rules that need none still hold: catalog
types, other schemas' types and functions (except DuckDB method calls).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from sqlglot import exp

from checks.errors import QueryRejected

HARMLESS_VOLATILE = frozenset(
    {"random", "random_normal", "clock_timestamp", "timeofday", "gen_random_uuid", "uuid",
     "uuidv4", "uuidv7", "error"}
)  # fmt: skip
"""Volatile built-ins allowed anyway: they read a clock or a random generator, nothing else."""

CATALOG_TYPES = frozenset(
    {"regclass", "regcollation", "regconfig", "regdictionary", "regnamespace", "regoper",
     "regoperator", "regproc", "regprocedure", "regrole", "regtype", "xid", "xid8", "cid", "tid"}
)  # fmt: skip
"""PostgreSQL object-identifier types (the reg* aliases of ``oid`` and row identifiers)."""


@dataclass(frozen=True)
class SourceFacts:
    """What one database allows, read by the source once with its catalog.

    Attributes:
        functions: lower-case names of the functions that may be called
            without a schema: safe built-ins and the source schema's own.
        types: lower-case names of the types a value may be cast to besides
            sqlglot's known types: built-in and the source schema's own
            (row types of tables are added from the data sets by the guard).
        schemas: lower-case names of every schema of the database, to tell
            ``schema.f()`` from a DuckDB method call ``column.f()``.
        refused: (lower-case name, why) of the source schema's own functions
            taken out of ``functions`` (``checks.sources.definitions``: they read
            a table the source does not offer); a tuple, so the facts hash.

    """

    functions: frozenset[str]
    types: frozenset[str]
    schemas: frozenset[str]
    refused: tuple[tuple[str, str], ...] = ()


def check_call(
    node: exp.Func,
    name: str,
    *,
    dialect: str,
    schema: str | None,
    facts: SourceFacts | None,
) -> None:
    """Refuse a call of a function that is not known to be safe here.

    ``node`` is the call, ``name`` its lower-case name (``function_name``).
    Only calls sqlglot does not model (``exp.Anonymous``) reach the database
    under their own name, so only they are looked up in ``facts``.

    Raises:
        QueryRejected: rule ``schema`` (a function of another schema) or
            ``function`` (not a safe built-in nor the source schema's).

    """
    dot = node.parent if isinstance(node.parent, exp.Dot) else None
    if dot is not None and dot.expression is node:
        owner = dot.this
        if isinstance(owner, exp.Dot):
            raise QueryRejected(
                "schema", f"{dot.sql(dialect=dialect)}: catalog-qualified calls are not allowed"
            )
        owner_name = owner.name if isinstance(owner, (exp.Identifier, exp.Column)) else ""
        own = {"main", "public"} if schema is None else {schema.lower()}
        if owner_name.lower() not in own and not _method_call(owner_name, dialect, facts):
            raise QueryRejected(
                "schema",
                f"{owner_name}.{name}() is not allowed: only built-ins and functions of schema"
                f" {schema or 'main'} may be called",
            )
    if facts is None or not isinstance(node, exp.Anonymous):
        return
    why = dict(facts.refused).get(name)
    if why is not None:
        raise QueryRejected("function", f"function {name}() is not allowed: {why}")
    if name not in facts.functions:
        raise QueryRejected(
            "function",
            f"function {name}() is not allowed: it is neither a built-in this database marks"
            f" as free of side effects nor a function of schema {schema or 'main'}",
        )


def _method_call(owner: str, dialect: str, facts: SourceFacts | None) -> bool:
    """DuckDB reads ``x.f()`` as ``f(x)`` when ``x`` is not a schema of the database."""
    if dialect != "duckdb" or not owner:
        return False
    return facts is None or owner.lower() not in facts.schemas


def check_types(
    tree: exp.Expr,
    *,
    dialect: str,
    schema: str | None,
    facts: SourceFacts | None,
    allowed_tables: Collection[str],
) -> None:
    """Refuse casts (and any other type reference) to catalog types or types not of the source.

    Raises:
        QueryRejected: rule ``system-catalog`` (an object-identifier type),
            ``schema`` (a type of another schema) or ``type`` (a user-defined
            type the source does not own).

    """
    own = {"main", "public"} if schema is None else {schema.lower()}
    rows = {name.lower() for name in allowed_tables}
    for node in tree.find_all(exp.ObjectIdentifier):
        identifier = node.name.lower()
        if identifier != "oid":
            raise QueryRejected(
                "system-catalog",
                f"type {identifier} is not allowed: it reads the database's catalog",
            )
    for data_type in tree.find_all(exp.DataType):
        if data_type.this != exp.DataType.Type.USERDEFINED:
            continue
        kind: object = data_type.args.get("kind")
        shown = kind.sql(dialect=dialect) if isinstance(kind, exp.Expr) else str(kind)
        if isinstance(kind, exp.Dot):
            parts = [kind.this.sql(dialect=dialect), kind.expression.name]
        elif isinstance(kind, exp.Expr):
            parts = [kind.name]
        else:  # sqlglot keeps some dialects' user-defined type names as text: a.b
            parts = str(kind).split(".")
        if len(parts) > 1 and (len(parts) > 2 or parts[0].strip('"').lower() not in own):
            raise QueryRejected(
                "schema", f"type {shown} is not allowed: it is not of schema {schema or 'main'}"
            )
        name = parts[-1].strip('"').lower()
        if name in CATALOG_TYPES:
            raise QueryRejected(
                "system-catalog", f"type {name} is not allowed: it reads the database's catalog"
            )
        if facts is not None and name not in facts.types and name not in rows:
            raise QueryRejected(
                "type", f"type {shown} is not allowed: it is not a type of this source"
            )
