"""Data sources Lookout reads, always read-only (docs/design.md, Reading data safely).

``open_source`` turns a source's settings into a ``Source``: a DuckDB file (or
Parquet, CSV and JSON files, Delta and Iceberg tables loaded into one), any
database SQLAlchemy reaches, ClickHouse (a server, or chdb on local data), or a Spark
session (``checks.sources.spark_source``). Every
``Source.query`` passes the SQL guard, a read-only connection and the limits.

The names below are imported on first use (PEP 562), so that a DuckDB query
process (``checks.sources.query_process``), which imports this package first,
does not pay for SQLAlchemy and the settings it never uses.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from checks.settings.config import Settings
    from checks.settings.sources import (
        ClickHouseSource,
        DuckDBSource,
        SparkSource,
        SQLAlchemySource,
    )
    from checks.sources.base import Source
    from checks.sources.duckdb_source import DuckDBQuerySource
    from checks.sources.result import Column, DataSet, JSONValue, QueryResult
    from checks.sources.sql_source import SQLQuerySource

__all__ = [
    "Column",
    "DataSet",
    "DuckDBQuerySource",
    "JSONValue",
    "QueryResult",
    "SQLQuerySource",
    "Source",
    "dialect_of",
    "open_source",
]

_WHERE = {
    "Column": "checks.sources.result",
    "DataSet": "checks.sources.result",
    "JSONValue": "checks.sources.result",
    "QueryResult": "checks.sources.result",
    "Source": "checks.sources.base",
    "DuckDBQuerySource": "checks.sources.duckdb_source",
    "SQLQuerySource": "checks.sources.sql_source",
}


def __getattr__(name: str) -> Any:
    """Import a re-exported name on first use."""
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


def dialect_of(config: DuckDBSource | SQLAlchemySource | ClickHouseSource | SparkSource) -> str:
    """The sqlglot dialect a source's queries are written in, without opening it.

    Raises:
        SourceError: the URL is not a SQLAlchemy URL, or names an unsupported database.

    """
    from checks.settings.sources import ClickHouseSource, DuckDBSource, SparkSource

    if isinstance(config, DuckDBSource):
        return "duckdb"
    if isinstance(config, ClickHouseSource):
        return "clickhouse"
    if isinstance(config, SparkSource):
        return "spark"
    # SQLAlchemy only for a SQLAlchemy source: validating DuckDB sources never imports it
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    from checks.errors import SourceConfigError, SourceError
    from checks.sources.recipes import DIALECTS
    from checks.sources.source_config import unknown_engine

    try:
        backend = make_url(config.url).get_backend_name()
    except ArgumentError:
        raise SourceError("the url is not a valid SQLAlchemy URL") from None
    if backend not in DIALECTS:
        why = unknown_engine(config.url, DIALECTS) or f"unsupported database {backend!r}"
        raise SourceConfigError(why)
    return DIALECTS[backend]


def open_source(
    name: str,
    config: DuckDBSource | SQLAlchemySource | ClickHouseSource | SparkSource,
    settings: Settings,
) -> Source:
    """Open the source ``name`` described by ``config``, with ``settings.limits``.

    A DuckDB source with ``tables`` is built into ``settings.cache_dir`` first
    (once; rebuilt when a file changes). Close the source when done (it is a
    context manager).

    Raises:
        SourceError: a file is missing, the database cannot be opened or
            reached, or the config is incomplete. Messages never hold passwords.

    """
    from checks.errors import SourceError
    from checks.settings.sources import (
        ClickHouseSource,
        DuckDBSource,
        SparkSource,
        SQLAlchemySource,
    )

    # Each kind's module only when it is opened: a DuckDB source's query process then
    # starts before this process has imported SQLAlchemy (and sqlglot), not after.
    if isinstance(config, DuckDBSource):
        from checks.sources.duckdb_source import open_duckdb

        return open_duckdb(name, config, settings.cache_dir, settings.limits)
    if isinstance(config, SQLAlchemySource):
        from checks.sources.source_config import place_in
        from checks.sources.sql_source import SQLQuerySource

        return SQLQuerySource(name, config, settings.limits, place_in(settings, name))
    if isinstance(config, ClickHouseSource):
        from checks.sources.clickhouse_source import ClickHouseQuerySource

        return ClickHouseQuerySource(name, config, settings.limits)
    if isinstance(config, SparkSource):  # pyspark only for a Spark source
        from checks.sources.spark_source import SparkQuerySource

        return SparkQuerySource(name, config, settings.limits)
    raise SourceError(f"source {name}: unknown source type {type(config).__name__}")
