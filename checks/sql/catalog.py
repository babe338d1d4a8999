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
class DataSet:
    """A table or view a source exposes; ``row_count`` is exact at catalog time."""

    name: str
    columns: tuple[Column, ...]
    row_count: int
