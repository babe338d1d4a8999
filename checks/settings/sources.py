"""The ``sources:`` section: DuckDB files and tables, and SQLAlchemy databases."""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal

from pydantic import Field, model_validator

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

    path: str | None = None
    format: LakeFormat | None = None
    null_strings: list[str] = Field(default_factory=lambda: ["NA", ""])
    catalog: str | None = None
    catalog_name: str = "default"
    table: str | None = None

    @model_validator(mode="after")
    def _shape(self) -> TableFile:
        given = self.model_fields_set
        catalog_keys = [k for k in ("catalog", "catalog_name", "table") if k in given]
        if self.format == "iceberg":
            if self.path is not None and catalog_keys:
                raise ValueError(
                    "an Iceberg table takes path (its metadata file) or catalog and table, not both"
                )
            if self.path is None and (self.catalog is None or self.table is None):
                raise ValueError(
                    "an Iceberg table needs catalog (a SQL catalog URI) and table"
                    " (namespace.name), or path (its metadata file)"
                )
        else:
            if catalog_keys:
                raise ValueError(f"{catalog_keys[0]} applies to format: iceberg only")
            if self.path is None:
                raise ValueError("path is required (a file, a glob or a Delta table's folder)")
        if "null_strings" in given and self.format not in (None, "csv"):
            raise ValueError("null_strings applies to CSV files only")
        return self


class DuckDBSource(Strict):
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


class SQLAlchemySource(Strict):
    """Any database SQLAlchemy reaches: PostgreSQL, SQLite, MySQL.

    ``schema_`` limits the catalog to one schema (``schema`` in YAML);
    ``tables`` optionally limits it further to the names listed.
    """

    type: Literal["sqlalchemy"]
    url: str
    schema_: str | None = Field(default=None, alias="schema")
    tables: list[str] | None = None


SourceConfig = Annotated[DuckDBSource | SQLAlchemySource, Field(discriminator="type")]
