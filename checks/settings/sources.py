"""The ``sources:`` section: DuckDB files and tables, SQLAlchemy databases, and Spark."""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal

from pydantic import Field, field_validator

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
    ``tables`` optionally limits it further to the names listed.
    """

    type: Literal["sqlalchemy"]
    url: str
    schema_: str | None = Field(default=None, alias="schema")
    tables: list[str] | None = None


class SparkSource(Strict):
    """A Spark session: a Spark Connect server (``remote``) or a local one (``master``).

    ``remote`` is a Spark Connect URL (``sc://host:15002``, the protocol
    Databricks Connect speaks); without it a session runs in this process on
    ``master`` (default ``local[1]``; its JVM starts once per process).
    ``database`` is the one database (schema) whose tables the catalog lists
    (default ``default``); ``tables`` maps a name to a Parquet, CSV (with a
    header) or JSON-lines file or glob, registered as a temporary view (paths as
    the session's driver sees them; the format from the extension).
    """

    MEANT: ClassVar[dict[str, str]] = {"url": "remote", "schema": "database"}
    """Keys written for ``remote`` and ``database`` (``checks.settings.unknown_keys``)."""

    type: Literal["spark"]
    remote: str | None = None
    master: str = "local[1]"
    database: str | None = None
    tables: dict[str, str] = Field(default_factory=dict)

    @field_validator("remote")
    @classmethod
    def _connect_url(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith("sc://"):
            raise ValueError("expected a Spark Connect URL, sc://host:15002")
        return value


SourceConfig = Annotated[DuckDBSource | SQLAlchemySource | SparkSource, Field(discriminator="type")]
