"""The ``sources:`` section: DuckDB files and tables, SQLAlchemy databases, ClickHouse."""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal

from pydantic import ByteSize, Field, model_validator

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


class ClickHouseSource(Strict):
    """ClickHouse: a server through clickhouse-connect (``url``) or chdb on local data.

    Exactly one of ``url`` (``clickhouse://user:${PW}@host:8123/db``; ``clickhouses://``
    for HTTPS), ``path`` (a chdb data folder) and ``tables`` (name -> a Parquet or CSV
    file, loaded into an in-memory chdb table when the source opens). ``database`` is the database
    whose tables are the data sets (default: the URL's, else ``default``).
    ``max_rows_to_read`` and ``max_bytes_to_read`` cap what one query may read
    (ClickHouse's settings of those names; docs/engines.md, ClickHouse).
    """

    MEANT: ClassVar[dict[str, str]] = {"file": "path", "folder": "path", "dsn": "url"}
    """Keys written for ``path`` or ``url`` (``checks.settings.unknown_keys``)."""

    type: Literal["clickhouse"]
    url: str | None = None
    path: str | None = None
    tables: dict[str, str | TableFile] = Field(default_factory=dict)
    database: str | None = None
    max_rows_to_read: int | None = Field(default=None, ge=1)
    max_bytes_to_read: ByteSize | None = Field(default=None, ge=1)

    @model_validator(mode="after")
    def _one_place(self) -> ClickHouseSource:
        given = [key for key in ("url", "path", "tables") if getattr(self, key)]
        if len(given) != 1:
            said = " and ".join(given) if given else "none of them"
            raise ValueError(
                "set one of url (a ClickHouse server), path (a chdb data folder) and"
                f" tables (files loaded into chdb), not {said}"
            )
        return self


SourceConfig = Annotated[
    DuckDBSource | SQLAlchemySource | ClickHouseSource, Field(discriminator="type")
]
