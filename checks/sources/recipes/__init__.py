"""The read-only recipe of each engine Lookout reaches through SQLAlchemy, by backend.

``recipe_for`` gives the ``Recipe`` (``checks.sources.recipes.base``) of a SQLAlchemy
backend name (``make_url(url).get_backend_name()``); each engine's module is imported
only when a source of it opens. ``BACKENDS`` is the registry: one line per engine.
"""

from __future__ import annotations

import importlib
from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from checks.sources.recipes.base import Recipe

BACKENDS: dict[str, tuple[str, str]] = {
    "postgresql": ("postgres", "checks.sources.recipes.postgres:PostgresRecipe"),
    "sqlite": ("sqlite", "checks.sources.recipes.sqlite:SQLiteRecipe"),
    "mysql": ("mysql", "checks.sources.recipes.mysql:MySQLRecipe"),
    "mariadb": ("mysql", "checks.sources.recipes.mysql:MySQLRecipe"),
    "trino": ("trino", "checks.sources.recipes.trino:TrinoRecipe"),
    "redshift": ("redshift", "checks.sources.recipes.redshift:RedshiftRecipe"),
    "mssql": ("tsql", "checks.sources.recipes.sqlserver:SQLServerRecipe"),
    "snowflake": ("snowflake", "checks.sources.recipes.snowflake:SnowflakeRecipe"),
    "bigquery": ("bigquery", "checks.sources.recipes.bigquery:BigQueryRecipe"),
    "databricks": ("databricks", "checks.sources.recipes.databricks:DatabricksRecipe"),
}
"""SQLAlchemy backend name -> (sqlglot dialect, ``module:Recipe`` class)."""

DIALECTS = {backend: dialect for backend, (dialect, _) in BACKENDS.items()}
"""SQLAlchemy backend name -> the sqlglot dialect of its queries."""


def supported() -> str:
    """The backends a URL may name, in words: ``mariadb, mysql, postgresql, sqlite``."""
    return ", ".join(sorted(BACKENDS))


@cache
def recipe_for(backend: str) -> Recipe:
    """The recipe of SQLAlchemy ``backend``.

    Raises:
        KeyError: an unsupported backend (check ``DIALECTS`` first).

    """
    module, _, name = BACKENDS[backend][1].partition(":")
    recipe: Recipe = getattr(importlib.import_module(module), name)()
    return recipe
