"""A source's catalog as the checks read it: its data sets and their columns."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Column:
    """One column of a data set.

    Attributes:
        name: the column's name as the database stores it.
        type: the database's own type name (``BIGINT``, ``NUMERIC(10, 2)``,
            ``TIMESTAMP WITH TIME ZONE``).
        nullable: whether the schema lets it hold NULL (no NOT NULL
            constraint); None when the source cannot tell.
    """

    name: str
    type: str
    nullable: bool | None = None


@dataclass(frozen=True)
class ForeignKeyConstraint:
    """A single-column foreign key a catalog declares: ``table.column`` → ``to_table.to_column``."""

    table: str
    column: str
    to_table: str
    to_column: str


@dataclass(frozen=True)
class DataSet:
    """A table or view a source exposes.

    Attributes:
        name: its name as the database stores it.
        columns: its columns, in order.
        row_count: its rows as the engine's statistics estimate them when the
            catalog was read (PostgreSQL's ``pg_class.reltuples``, DuckDB's
            ``duckdb_tables().estimated_size``), never counted to list it; None
            where the engine keeps no such figure (a view, SQLite).
        row_count_estimated: ``row_count`` is an estimate, not a count.
    """

    name: str
    columns: tuple[Column, ...]
    row_count: int | None
    row_count_estimated: bool = False
