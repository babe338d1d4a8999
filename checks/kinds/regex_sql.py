r"""A whole-value regular-expression match and a length in characters, in each engine's SQL.

``full_match(value, pattern, dialect)`` is true when the pattern matches all of
the value, written with the engine's own function (its documentation) and its
own end anchor, since ``$`` also matches before a final newline in PCRE2, ICU,
Java and Python:

============================ ============================================= =========
dialect                      term                                          flavour
============================ ============================================= =========
duckdb                       ``regexp_full_match(v, 'p')``                 RE2
postgres, redshift           ``v ~ '^(p)$'``                               ARE/POSIX
mysql (MySQL 8, MariaDB)     ``REGEXP_INSTR(v, '(?-i)^(p)\z') > 0``        ICU/PCRE2
sqlite                       ``v REGEXP '^(p)\Z'`` (Lookout's ``regexp``)  Python
spark, databricks            ``v RLIKE '^(p)\z'``                          Java
trino                        ``regexp_like(v, '^(p)\z')``                  Java
clickhouse                   ``match(v, '^(p)$')``                         RE2
snowflake                    ``REGEXP_LIKE(v, '^(p)$')``                   POSIX ERE
bigquery                     ``REGEXP_CONTAINS(v, '^(p)$')``               RE2
tsql (SQL Server 2025)       ``REGEXP_LIKE(v, '^(p)$')``                   RE2
============================ ============================================= =========

MySQL and MariaDB match as the column's collation compares, ignoring case
under a ``_ci`` collation: ``(?-i)`` makes the match case-sensitive, as it is
everywhere else. ``REGEXP_INSTR`` is the function both have (MariaDB has no
``REGEXP_LIKE``, and sqlglot writes MySQL's ``REGEXP`` operator as it). The
pattern is a sqlglot string literal: each dialect escapes its backslashes.

``char_length`` counts characters, not bytes: ``CHAR_LENGTH`` on MySQL,
``lengthUTF8`` on ClickHouse, and ``LEN(v + 'x') - 1`` on SQL Server, whose
``LEN`` drops trailing spaces.
"""

from __future__ import annotations

from sqlglot import exp

_END = {
    "mysql": "\\z",
    "sqlite": "\\Z",
    "spark": "\\z",
    "databricks": "\\z",
    "trino": "\\z",
}
"""Each dialect's end of the text where ``$`` may also match before a final newline."""


def anchored(pattern: str, dialect: str) -> str:
    """``pattern`` as the dialect's function must be given it to match the whole value."""
    if dialect == "duckdb":
        return pattern  # regexp_full_match anchors both ends itself
    text = f"^({pattern}){_END.get(dialect, '$')}"
    return f"(?-i){text}" if dialect == "mysql" else text


def full_match(value: exp.Expr, pattern: str, dialect: str) -> exp.Expr:
    """A condition: ``pattern`` matches all of ``value`` (NULL when ``value`` is NULL)."""
    literal = exp.Literal.string(anchored(pattern, dialect))
    if dialect == "duckdb":
        return exp.Anonymous(this="regexp_full_match", expressions=[value.copy(), literal])
    if dialect == "mysql":
        found = exp.Anonymous(this="REGEXP_INSTR", expressions=[value.copy(), literal])
        return exp.GT(this=found, expression=exp.Literal.number(0))
    if dialect == "clickhouse":
        return exp.Anonymous(this="match", expressions=[value.copy(), literal])
    return exp.RegexpLike(this=value.copy(), expression=literal)


def char_length(value: exp.Expr, dialect: str) -> exp.Expr:
    """The number of characters of ``value`` (trailing spaces counted) in the dialect."""
    if dialect == "clickhouse":
        return exp.Anonymous(this="lengthUTF8", expressions=[value.copy()])
    if dialect == "tsql":
        padded = exp.Add(this=value.copy(), expression=exp.Literal.string("x"))
        length = exp.Length(this=padded)
        return exp.Sub(this=length, expression=exp.Literal.number(1))
    return exp.Length(this=value.copy())
