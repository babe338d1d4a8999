"""The ``sources:`` section: DuckDB files and tables, and SQLAlchemy databases."""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal

from pydantic import ByteSize, Field

from checks.settings.strict import Strict


class TableFile(Strict):
    """A CSV or Parquet file loaded into a DuckDB source as a table.

    ``path`` may be a file path, or ``package:DIST/inner/path`` for a file
    shipped inside an installed Python package. A ``.zip`` holding one CSV is
    unpacked into the cache first.
    """

    path: str
    null_strings: list[str] = Field(default_factory=lambda: ["NA", ""])


class DuckDBSource(Strict):
    """A DuckDB source: an existing database file and/or files loaded as tables.

    Files are copied once into a DuckDB file under ``cache_dir`` (rebuilt when a
    file changes) so that queries run with external access off.
    """

    MEANT: ClassVar[dict[str, str]] = {"path": "database", "file": "database"}
    """Keys written for ``database`` (``checks.settings.unknown_keys``)."""

    type: Literal["duckdb"]
    database: str | None = None
    tables: dict[str, str | TableFile] = Field(default_factory=dict)


class SQLAlchemySource(Strict):
    """Any database SQLAlchemy reaches: PostgreSQL, SQLite, MySQL.

    ``schema_`` limits the catalog to one schema (``schema`` in YAML);
    ``tables`` optionally limits it further to the names listed. ``max_bytes_billed``
    is the cost cap of an engine that bills by bytes scanned (BigQuery), in bytes
    (``10 GB``, ``1 TiB`` or a number).
    """

    type: Literal["sqlalchemy"]
    url: str
    schema_: str | None = Field(default=None, alias="schema")
    tables: list[str] | None = None
    max_bytes_billed: ByteSize | None = Field(default=None, gt=0)


SourceConfig = Annotated[DuckDBSource | SQLAlchemySource, Field(discriminator="type")]
