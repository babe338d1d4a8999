"""SQL type names as the catalogs write them, read with sqlglot, and their families.

Catalogs spell types their own way (DuckDB ``DECIMAL(10,2)``, ``TIMESTAMP WITH
TIME ZONE``; PostgreSQL through SQLAlchemy ``NUMERIC(10, 2)``, ``DOUBLE
PRECISION``). ``family`` reads a name with ``sqlglot.exp.DataType.build`` in
the source's dialect and names its family, the words a ``schema`` check
accepts (``checks.kinds.schema.TYPE_FAMILIES``).
"""

from __future__ import annotations

import functools

from sqlglot import exp
from sqlglot.expressions.datatypes import DType

_T = DType
_FAMILIES: tuple[tuple[str, frozenset[DType]], ...] = (
    ("integer", frozenset(exp.DataType.INTEGER_TYPES) - {_T.BIT}),
    ("float", frozenset(exp.DataType.FLOAT_TYPES) | {_T.UDOUBLE}),
    ("decimal", frozenset(exp.DataType.REAL_TYPES) - exp.DataType.FLOAT_TYPES - {_T.UDOUBLE}),
    ("text", frozenset(exp.DataType.TEXT_TYPES)),
    ("boolean", frozenset({_T.BOOLEAN})),
    ("date", frozenset({_T.DATE, _T.DATE32})),
    (
        "timestamp",
        frozenset(
            {_T.TIMESTAMP, _T.TIMESTAMP_S, _T.TIMESTAMP_MS, _T.TIMESTAMP_NS, _T.TIMESTAMPNTZ}
            | {_T.DATETIME, _T.DATETIME2, _T.DATETIME64, _T.SMALLDATETIME}
        ),
    ),
    ("timestamptz", frozenset({_T.TIMESTAMPTZ, _T.TIMESTAMPLTZ})),
    ("time", frozenset({_T.TIME, _T.TIMETZ})),
    ("interval", frozenset({_T.INTERVAL})),
    ("json", frozenset({_T.JSON, _T.JSONB})),
    ("uuid", frozenset({_T.UUID})),
    ("binary", frozenset(exp.DataType.BINARY_TYPES)),
)
NUMBER_FAMILIES = frozenset({"integer", "float", "decimal"})
TEMPORAL_FAMILIES = frozenset({"date", "timestamp", "timestamptz"})


@functools.lru_cache(maxsize=4096)
def parse_type(name: str, dialect: str) -> exp.DataType | None:
    """Return the type ``name`` as sqlglot reads it in ``dialect``; None when it cannot."""
    try:
        built = exp.DataType.build(name, dialect=dialect)
    except Exception:  # sqlglot raises several kinds for a name it cannot read
        return None
    return None if built.this == _T.USERDEFINED else built


def family(name: str, dialect: str) -> str | None:
    """Return the family of a catalog's type name (``integer``, ``text``, …), or None."""
    built = parse_type(name, dialect)
    if built is None:
        return None
    if dialect == "snowflake" and _whole_number(built):
        return "integer"
    for word, members in _FAMILIES:
        if built.this in members:
            return word
    return None


def _whole_number(built: exp.DataType) -> bool:
    """Snowflake's integers: ``NUMBER(p, 0)``, which INTEGER, BIGINT, … are stored as.

    Source: Snowflake's documentation, Numeric data types (INT, INTEGER, BIGINT, …
    are synonymous with NUMBER(38, 0)).
    """
    if built.this not in (_T.DECIMAL, _T.BIGDECIMAL):
        return False
    sizes = built.expressions
    return len(sizes) == 2 and sizes[1].sql() == "0"


def matches(found: str, wanted: str, dialect: str) -> bool:
    """Whether a column of type ``found`` is what a ``schema`` check wants.

    ``wanted`` is a family (``TYPE_FAMILIES``: ``any``, ``number`` and the
    families of ``family``) or an exact SQL type, compared as sqlglot writes
    both in ``dialect`` (``decimal(10,2)`` equals ``NUMERIC(10, 2)`` in
    PostgreSQL). A name sqlglot cannot read is compared as text, ignoring
    case and spaces.
    """
    word = wanted.strip().lower()
    if word == "any":
        return True
    have = family(found, dialect)
    if word == "number":
        return have in NUMBER_FAMILIES
    if word in {w for w, _ in _FAMILIES}:
        return have == word
    return same_type(found, wanted, dialect)


def declared_type(name: str, nullable: bool | None, dialect: str) -> str:
    """A column's type as its table declares it, from a catalog's type and NULL rule.

    ClickHouse's NULL rule is part of the type: a column that takes NULL is
    ``Nullable(T)`` (ClickHouse's documentation, Nullable(T)), which its
    source's catalog keeps as ``T`` with ``nullable`` True. Elsewhere NOT NULL
    is a constraint, not the type: ``name`` is returned as it is.
    """
    if dialect == "clickhouse" and nullable:
        return f"Nullable({name})"
    return name


def same_type(left: str, right: str, dialect: str) -> bool:
    """Whether two type names are one type in ``dialect``: its synonyms are the same type.

    Both are written as sqlglot writes them in ``dialect`` (PostgreSQL's
    ``int4`` and ``integer``, ``NUMERIC(10, 2)`` and ``decimal(10,2)`` are one
    type; ``integer`` and ``bigint`` are two). A name sqlglot cannot read is
    compared as text, ignoring case and spaces.
    """
    return normal_type(left, dialect) == normal_type(right, dialect)


def normal_type(name: str, dialect: str) -> str:
    """A type name as sqlglot writes it in ``dialect`` (else lowercased, without spaces)."""
    built = parse_type(name, dialect)
    if built is None:
        return "".join(name.lower().split())
    return built.sql(dialect=dialect)
