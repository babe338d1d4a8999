"""SQLite's read-only recipe, through the standard library's ``sqlite3``.

The file is opened with ``mode=ro`` (a missing file is an error, never a new empty
database); during a query an authorizer allows only reads, a progress handler enforces
the time limit and no value may be longer than an eighth of ``Limits.query_memory``
(``checks.sources.sqlite_query``). The driver itself refuses more than one statement.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from checks.errors import SourceError
from checks.sources.base import missing_file
from checks.sources.recipes.base import Recipe
from checks.sources.sqlite_query import run_sqlite

if TYPE_CHECKING:
    from sqlalchemy.engine import URL

    from checks.settings.limits import Limits
    from checks.sources.definitions import Kind
    from checks.sources.fingerprint import Finish
    from checks.sources.result import QueryResult


class SQLiteRecipe(Recipe):
    """A SQLite file, opened read-only."""

    label = "SQLite"
    dialect = "sqlite"
    read_only = "the file is opened read-only (mode=ro), an authorizer allows only reads"
    definitions: ClassVar[tuple[tuple[Kind, str], ...]] = (
        ("view", "SELECT name, sql FROM sqlite_master WHERE type = 'view'"),
    )

    def engine_args(self, name: str, url: URL, limits: Limits) -> tuple[URL, dict[str, Any]]:
        """The file as a read-only URI; a missing file is an error, not a new database.

        Raises:
            SourceError: the file does not exist (or no file is named).

        """
        database = url.database or ""
        if url.query.get("uri") not in ("true", "1"):
            if not database or database == ":memory:" or not Path(database).is_file():
                why = missing_file(Path(database)) if database else "does not exist"
                raise SourceError(f"source {name}: SQLite file {database or '(none)'} {why}")
            database = f"file:{Path(database).resolve()}"
        url = url.set(database=database).update_query_dict({"mode": "ro", "uri": "true"})
        lite: dict[str, Any] = {"check_same_thread": False}
        if "timeout" not in url.query:  # how long to wait on another process's lock on the file
            lite["timeout"] = limits.connect_timeout_s
        return url, {"connect_args": lite}

    def run(
        self,
        conn: Any,
        sql: str,
        timeout_s: float,
        finish: Finish,
        *,
        limits: Limits,
        schema: str | None,
    ) -> QueryResult:
        """One query under the read-only authorizer and the progress handler."""
        return run_sqlite(conn, sql, timeout_s, finish, limits=limits)

    def version(self, conn: Any) -> str:
        """``SQLite 3.x.y`` (the library this Python links)."""
        import sqlite3

        return f"SQLite {sqlite3.sqlite_version}"

    def is_timeout(self, error: BaseException) -> bool:
        """The progress handler's interrupt."""
        return type(error).__name__ == "OperationalError" and "interrupted" in str(error)
