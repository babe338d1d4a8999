"""An aggregate of one column in each engine's SQL: exact, sample statistics, NULLs ignored.

``term(function, value, dialect, level)`` is one aggregate over the scope's
rows, or None where the engine has no exact aggregate for it (then
``ranked_percentile`` computes it from the rows' order). Every function here
is exact; none is the engine's approximate one:

=================== ===============================================================
function            SQL
=================== ===============================================================
avg, sum, min, max  ``AVG``, ``SUM``, ``MIN``, ``MAX``
count_distinct      ``COUNT(DISTINCT v)`` (ClickHouse: ``uniqExact``, its default)
stddev, variance    the sample's (n - 1): ``STDDEV_SAMP``/``VAR_SAMP`` (ClickHouse
                    ``stddevSamp``/``varSamp``, SQL Server ``STDEV``/``VAR``; SQLite:
                    the functions Lookout registers, ``checks.sources.sqlite_functions``);
                    MySQL's and MariaDB's of the values as doubles (MariaDB keeps 6
                    decimals of a DECIMAL's)
median, percentile  continuous, interpolated between the two nearest values (R7,
                    as ``PERCENTILE_CONT``): DuckDB ``quantile_cont``; PostgreSQL,
                    Snowflake, Redshift ``PERCENTILE_CONT(p) WITHIN GROUP (ORDER BY v)``;
                    Spark, Databricks ``percentile``; ClickHouse
                    ``quantileExactInclusive`` (not ``quantile``, which samples),
                    of the values as doubles;
                    MySQL, MariaDB, SQLite, BigQuery, Trino, SQL Server: their own
                    statement, ``ranked_percentile``
=================== ===============================================================
"""

from __future__ import annotations

from sqlglot import exp

from checks.kinds.sql_terms import count

RANKED = frozenset({"mysql", "sqlite", "bigquery", "trino", "tsql"})
"""Dialects without an exact percentile aggregate: ``ranked_percentile`` computes it.

MySQL has none; MariaDB's ``PERCENTILE_CONT`` and SQL Server's and BigQuery's are
window functions only; Trino has only ``approx_percentile``; SQLite has none."""

_SAMPLE = {
    "stddev": {
        "tsql": "STDEV",
        "clickhouse": "stddevSamp",
        "sqlite": "stddev_samp",
        "snowflake": "STDDEV",  # the sample's there, as sqlglot writes STDDEV_SAMP back
    },
    "variance": {"tsql": "VAR", "clickhouse": "varSamp", "sqlite": "var_samp"},
}


def term(function: str, value: exp.Expr, dialect: str, level: float | None) -> exp.Expr | None:
    """``function`` of ``value`` as one aggregate in ``dialect``, or None (``RANKED``).

    ``level`` is the percentile's fraction (0.5 for the median).
    """
    ref = value.copy()
    if function == "avg":
        return exp.Avg(this=ref)
    if function == "sum":
        return exp.Sum(this=ref)
    if function == "min":
        return exp.Min(this=ref)
    if function == "max":
        return exp.Max(this=ref)
    if function == "count_distinct":
        return count(exp.Distinct(expressions=[ref]))
    if function in _SAMPLE:
        if dialect == "mysql":  # MariaDB gives a DECIMAL's deviation in 6 decimals
            ref = exp.cast(ref, "DOUBLE")
        own = _SAMPLE[function].get(dialect)
        if own is not None:
            return exp.Anonymous(this=own, expressions=[ref])
        return exp.StddevSamp(this=ref) if function == "stddev" else exp.Variance(this=ref)
    assert level is not None  # median and percentile
    return _percentile(ref, dialect, level)


def _percentile(ref: exp.Expr, dialect: str, level: float) -> exp.Expr | None:
    p = exp.Literal.number(repr(level))
    if dialect in RANKED:
        return None
    if dialect == "duckdb":  # a DECIMAL's quantile_cont keeps its scale: 82.092 would be 82.09
        as_double = exp.cast(ref, "DOUBLE")
        return exp.Anonymous(this="quantile_cont", expressions=[as_double, p])
    if dialect in ("spark", "databricks"):
        return exp.Quantile(this=ref, quantile=p)  # percentile(v, p): exact
    if dialect == "clickhouse":
        as_float = exp.cast(ref, "DOUBLE")  # it takes no Decimal
        return exp.ParameterizedAgg(
            this="quantileExactInclusive", expressions=[p], params=[as_float]
        )
    ordered = exp.Order(expressions=[exp.Ordered(this=ref)])
    return exp.WithinGroup(this=exp.PercentileCont(this=p), expression=ordered)


def ranked_percentile(
    inner: exp.Select, value: str, level: float, dialect: str, name: str
) -> list[exp.Expr]:
    """The percentile of the rows of ``inner`` as one aggregate over them, and its counts.

    ``inner`` must project the value as ``value``, its rank among the non-NULL values
    as ``rn`` (``ROW_NUMBER() OVER (PARTITION BY v IS NULL ORDER BY v)``) and
    ``h = (COUNT(v) OVER () - 1) * level + 1``, the 1-based position of the percentile.
    Returns the outer projections over ``inner AS s``: the value at ``FLOOR(h)``
    plus ``h``'s fraction of the step to the next (R7, as ``PERCENTILE_CONT``).
    """
    col = exp.column(value, table="s", quoted=True)
    h = exp.column("h", table="s")
    rn = exp.column("rn", table="s")
    # SQLite may lack FLOOR (a build option); h is positive, so a cast truncates to it
    low = exp.cast(h.copy(), "INT") if dialect == "sqlite" else exp.Floor(this=h.copy())
    at_low = exp.Max(this=exp.Case().when(exp.EQ(this=rn.copy(), expression=low), col.copy()))
    next_rank = exp.Add(this=low.copy(), expression=exp.Literal.number(1))
    at_next = exp.Max(
        this=exp.Case().when(exp.EQ(this=rn.copy(), expression=next_rank), col.copy())
    )
    fraction = exp.Max(this=exp.Sub(this=h.copy(), expression=low.copy()))
    step = exp.Sub(this=exp.Coalesce(this=at_next, expressions=[at_low.copy()]), expression=at_low)
    found = exp.Add(
        this=at_low.copy(), expression=exp.Mul(this=fraction, expression=exp.paren(step))
    )
    return [exp.alias_(found, name)]


def ranked_inner(ref: exp.Expr, value: str, level: float) -> list[exp.Expr]:
    """The projections ``ranked_percentile``'s ``inner`` needs over the scope's rows."""
    nulls_apart = exp.Case().when(
        exp.Is(this=ref.copy(), expression=exp.Null()), exp.Literal.number(1)
    )
    nulls_apart = nulls_apart.else_(exp.Literal.number(0))
    rank = exp.Window(
        this=exp.RowNumber(),
        partition_by=[nulls_apart],
        order=exp.Order(expressions=[exp.Ordered(this=ref.copy())]),
    )
    values = exp.Window(this=count(ref.copy()), over="OVER")
    position = exp.Add(
        this=exp.Mul(
            this=exp.paren(exp.Sub(this=values, expression=exp.Literal.number(1))),
            expression=exp.Literal.number(repr(level)),
        ),
        expression=exp.Literal.number(1),
    )
    return [
        exp.alias_(ref.copy(), value, quoted=True),
        exp.alias_(rank, "rn"),
        exp.alias_(position, "h"),
    ]
