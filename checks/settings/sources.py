"""The ``sources:`` section: DuckDB files and tables, SQLAlchemy databases, ClickHouse, Spark."""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal

from pydantic import ByteSize, Field, ValidationInfo, field_validator, model_validator

from checks.settings.monitor import Monitor
from checks.settings.strict import Strict

LakeFormat = Literal["parquet", "csv", "json", "delta", "iceberg"]
"""How a table's data is read: files (``parquet``, ``csv``, ``json``), or a lake table."""

FILE_FORMATS = ("parquet", "csv", "json")
"""The formats read from files (a path or a glob); the others are lake tables."""


class TableFile(Strict):
    """One table of a DuckDB source: a file, a glob of files, a Delta or an Iceberg table.

    ``path`` may be a file path, a glob (``data/events/*.parquet``, ``**`` for
    any depth), or ``package:DIST/inner/path`` for a file shipped inside an
    installed Python package. A ``.zip`` holding one file is unpacked into the
    cache first. ``format`` is taken from the file name when not given
    (``.parquet``/``.pq``; ``.csv``/``.tsv``/``.txt``, gzipped or not;
    ``.json``/``.jsonl``/``.ndjson``, gzipped or not).

    ``format: delta`` reads the Delta table in the folder ``path``;
    ``format: iceberg`` the Iceberg table ``table`` (``namespace.name``) of the
    pyiceberg SQL catalog at the SQLAlchemy URI ``catalog`` (its
    ``catalog_name``, ``default`` unless set), or the one whose metadata file
    is ``path`` (a ``….metadata.json``: that snapshot, for good).
    ``null_strings`` applies to CSV files only.
    """

    # format first: each key's rule reads it, and its error is at that key (file:line)
    format: LakeFormat | None = None
    path: str | None = Field(default=None, validate_default=True)
    null_strings: list[str] = Field(default_factory=lambda: ["NA", ""])
    catalog: str | None = None
    catalog_name: str = "default"
    table: str | None = Field(default=None, validate_default=True)

    @field_validator("path")
    @classmethod
    def _path(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is None and info.data.get("format") != "iceberg":
            raise ValueError("path is required (a file, a glob or a Delta table's folder)")
        return value

    @field_validator("null_strings")
    @classmethod
    def _null_strings(cls, value: list[str], info: ValidationInfo) -> list[str]:
        if info.data.get("format") not in (None, "csv"):  # runs only when it is written
            raise ValueError("null_strings applies to CSV files only")
        return value

    @field_validator("catalog", "catalog_name")
    @classmethod
    def _catalog(cls, value: str, info: ValidationInfo) -> str:  # runs only when written
        _iceberg_only(str(info.field_name), info)
        if info.data.get("path") is not None:
            raise ValueError(_NOT_BOTH)
        return value

    @field_validator("table")
    @classmethod
    def _table(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is not None:
            _iceberg_only("table", info)
        if info.data.get("format") == "iceberg":
            if info.data.get("path") is None and (info.data.get("catalog") is None or not value):
                raise ValueError(
                    "an Iceberg table needs catalog (a SQL catalog URI) and table"
                    " (namespace.name), or path (its metadata file)"
                )
            if info.data.get("path") is not None and value is not None:
                raise ValueError(_NOT_BOTH)
        return value


_NOT_BOTH = "an Iceberg table takes path (its metadata file) or catalog and table, not both"


def _iceberg_only(key: str, info: ValidationInfo) -> None:
    if info.data.get("format") != "iceberg":
        raise ValueError(f"{key} applies to format: iceberg only")


class ScanCap(Strict):
    """What every source type takes: ``max_bytes``, the most a run may read from it.

    A size in bytes, or with a unit as pydantic's ``ByteSize`` reads it (case
    ignored): ``KB``/``MB``/``GB``/``TB`` are powers of 1000, ``KiB``/``MiB``/``GiB``/``TiB``
    powers of 1024 (``10GB``, ``1.5 GiB``, ``500000``). Before a run, the
    declared checks' statements are estimated (``Source.estimate_scan``); over
    the cap, no query runs and the run ends in error (docs/sources.md, max_bytes).
    ``monitor`` watches its tables without automation files (``checks.settings.monitor``).
    """

    max_bytes: ByteSize | None = Field(default=None, gt=0)
    monitor: Monitor | None = None


class DuckDBSource(ScanCap):
    """A DuckDB source: an existing database file and/or files and lake tables loaded as tables.

    They are copied once into a DuckDB file under ``cache_dir`` (rebuilt when a
    file changes, a glob matches other files, or a Delta or Iceberg table has a
    new version) so that queries run with external access off.
    """

    MEANT: ClassVar[dict[str, str]] = {"path": "database", "file": "database"}
    """Keys written for ``database`` (``checks.settings.unknown_keys``)."""

    type: Literal["duckdb"]
    database: str | None = None
    tables: dict[str, str | TableFile] = Field(default_factory=dict)


class SQLAlchemySource(ScanCap):
    """Any database SQLAlchemy reaches: PostgreSQL, SQLite, MySQL.

    ``schema_`` limits the catalog to one schema (``schema`` in YAML);
    ``tables`` optionally limits it further to the names listed.
    ``allow_plaintext_password`` lets the file hold the URL's password as written
    (``checks.settings.passwords``); by default it must come from ``${NAME}``.
    ``cost_cap`` is the most one query may cost, in the engine's own unit, where the
    engine has such a cap (docs/engines.md: Trino's bytes scanned, ``"10GB"``; SQL
    Server's query governor cost, ``300``); an engine without one refuses it.
    ``max_bytes_billed`` is the cost cap of an engine that bills by bytes scanned (BigQuery),
    in bytes (``10 GB``, ``1 TiB`` or a number).
    """

    type: Literal["sqlalchemy"]
    url: str
    allow_plaintext_password: bool = False
    schema_: str | None = Field(default=None, alias="schema")
    tables: list[str] | None = None
    cost_cap: int | str | None = None
    max_bytes_billed: ByteSize | None = Field(default=None, gt=0)


class ClickHouseSource(ScanCap):
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
    monitor: Monitor | None = None

    @field_validator("remote")
    @classmethod
    def _connect_url(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith("sc://"):
            raise ValueError("expected a Spark Connect URL, sc://host:15002")
        return value


SourceConfig = Annotated[
    DuckDBSource | SQLAlchemySource | ClickHouseSource | SparkSource,
    Field(discriminator="type"),
]
