"""The shop on SQLite: the same tables and values, in a file opened read-only.

SQLite has no TIMESTAMP, TIMESTAMP WITH TIME ZONE, DATE or DECIMAL storage: the columns
keep the declared type names (which the catalog reports), and their values are stored as
SQLite stores them — the date-times as their ISO texts, the decimals as numbers (NUMERIC
affinity: ``10.50`` becomes the double 10.5, ``-1.00`` the integer -1). ``tiny`` and
``nearly_all`` are tables here, counted to a million once by a recursive CTE.
"""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import pytest

from tests.checks.declared.shop import TABLES, ShopOpener, sqlalchemy_opener

VIEWS = """
CREATE TABLE tiny AS
  WITH RECURSIVE r(g) AS (SELECT 0 UNION ALL SELECT g + 1 FROM r WHERE g < 999999)
  SELECT g AS id, CASE WHEN g < 3 THEN NULL ELSE 1 END AS v FROM r;
CREATE TABLE nearly_all AS
  SELECT id, CASE WHEN id < 999999 THEN NULL ELSE 1 END AS v FROM tiny;
"""
"""``tiny`` and ``nearly_all`` with the other engines' million rows, stored: SQLite would
compute a view's recursive CTE again for every count the catalog and the checks take."""

_TYPED_LITERAL = re.compile(r"\b(?:TIMESTAMP WITH TIME ZONE|TIMESTAMP|DATE) '")


def build_sqlite(path: Path) -> Path:
    """Write the shop's tables and views into a new SQLite file at ``path``.

    The typed literals of ``TABLES`` (``TIMESTAMP '2024-01-01 10:00:00'``), which SQLite
    does not parse, are written as their texts; everything else is the same SQL.
    """
    with sqlite3.connect(path) as conn:
        conn.executescript(_TYPED_LITERAL.sub("'", TABLES) + VIEWS)
    conn.close()
    return path


@pytest.fixture(scope="session")
def shop_sqlite_opener(tmp_path_factory: pytest.TempPathFactory) -> ShopOpener:
    """Opens the shop on SQLite (``tests.checks.declared.shop.SHOP_ENGINES``)."""
    path = build_sqlite(tmp_path_factory.mktemp("shop-sqlite") / "shop.db")
    return sqlalchemy_opener(f"sqlite:///{path}")
