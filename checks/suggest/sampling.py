"""How a large table is sampled for its profile, per engine.

A table whose catalog estimate is above ``SAMPLE_ABOVE`` rows is profiled on
about ``SAMPLE_ROWS`` of its rows. Engines with a row-level sampling clause get
it as a sqlglot ``TableSample`` (DuckDB and PostgreSQL ``TABLESAMPLE
BERNOULLI``, Snowflake ``SAMPLE BERNOULLI``, Spark ``TABLESAMPLE (p PERCENT)``,
BigQuery ``TABLESAMPLE SYSTEM``: blocks, its only method). The others
(SQLite, MySQL/MariaDB, ClickHouse, whose ``SAMPLE`` needs a sampling key the
table may lack) read the first ``SAMPLE_ROWS`` rows the engine returns, which
is not random: the profile says so (``Sample.how``).
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp

SAMPLE_ABOVE = 2_000_000
"""Tables estimated above this many rows are profiled on a sample."""
SAMPLE_ROWS = 500_000
"""About how many rows a sample holds."""

_METHOD = {"duckdb": "BERNOULLI", "postgres": "BERNOULLI", "snowflake": "BERNOULLI"}
_PERCENT_ONLY = frozenset({"spark", "databricks"})
_BLOCKS = frozenset({"bigquery"})


@dataclass(frozen=True)
class Sample:
    """How a table's profile read its rows.

    Attributes:
        percent: the share sampled (0 < p <= 100); 100 when the whole table was read.
        how: in words, for the profile's comments ("a 10 % BERNOULLI sample").
    """

    percent: float
    how: str

    @property
    def whole(self) -> bool:
        """Whether the whole table was read."""
        return self.percent >= 100


def plan(estimated_rows: int | None, sample_above: int = SAMPLE_ABOVE) -> float:
    """The percent of a table to read for its profile (100: all of it).

    Above ``sample_above`` rows: about ``SAMPLE_ROWS`` of them, or half the
    table when ``sample_above`` is set below that (tests sample small tables).
    """
    if estimated_rows is None or estimated_rows <= sample_above:
        return 100.0
    wanted = min(SAMPLE_ROWS, estimated_rows // 2)
    return max(0.01, round(100 * wanted / estimated_rows, 2))


def sampled_table(
    table: exp.Table, percent: float, dialect: str, estimated_rows: int
) -> tuple[exp.Expr, Sample]:
    """``table`` as the profile reads it: whole, or sampled the way ``dialect`` can.

    Returns the FROM expression (the table, the table with its ``TableSample``,
    or a ``(SELECT * FROM table LIMIT n)`` subquery) and how it samples.
    """
    if percent >= 100:
        return table, Sample(100.0, "every row")
    shown = f"{percent:g} %"
    if dialect in _METHOD or dialect in _PERCENT_ONLY or dialect in _BLOCKS:
        method = "SYSTEM" if dialect in _BLOCKS else _METHOD.get(dialect)
        sample = exp.TableSample(
            method=exp.var(method) if method else None,
            percent=exp.Literal.number(percent),
        )
        how = f"a {shown} {method} sample" if method else f"a {shown} sample"
        sampled = table.copy()
        sampled.set("sample", sample)
        return sampled, Sample(percent, how)
    wanted = max(1, int(estimated_rows * percent / 100))
    first = exp.select("*").from_(table.copy()).limit(wanted).subquery("sampled")
    return first, Sample(percent, f"the first {wanted:,} rows the engine returned")
