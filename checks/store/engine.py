"""Opening a store: its engine, its migrations, and writes retried while it is briefly away.

``make_engine`` builds the engine for a store URL (SQLite with its pragmas,
PostgreSQL through psycopg); ``migrate`` applies the Alembic migrations, one
process at a time, and ``at_head`` tells, with one query and without Alembic,
whether there is anything to apply. ``retry_writes`` retries a write while the
store is only briefly unavailable (``transient``).
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable
from importlib.resources import files
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

import tenacity
from sqlalchemy import (
    Engine,
    create_engine,
    event,
    text,
)
from sqlalchemy.engine import make_url
from sqlalchemy.exc import (
    ArgumentError,
    DBAPIError,
    DisconnectionError,
    NoSuchModuleError,
    OperationalError,
    SQLAlchemyError,
)

from checks.errors import StoreError, StoreURLError, first_line
from checks.settings.config import redact

log = logging.getLogger("lookout.store")

STORE_RETRY_S = 60.0
"""How long a write is retried while the store is unavailable, in seconds (then it raises)."""

MAX_OVERFLOW = 10
"""Connections opened beyond a PostgreSQL engine's pool at a peak (SQLAlchemy's default)."""

MIGRATION_LOCK = 0x4C4F4F4B  # "LOOK": the PostgreSQL advisory lock key migrations hold

P = ParamSpec("P")
R = TypeVar("R")


def transient(error: BaseException) -> bool:
    """Whether ``error`` says the store is briefly unavailable, so the write may be retried.

    SQLite's "database is locked" / "busy" and PostgreSQL's lost or refused
    connections (a restart, a failover) are ``OperationalError`` or an
    invalidated connection; a constraint or a bad statement is not.
    """
    if isinstance(error, OperationalError):
        return True
    return isinstance(error, DBAPIError) and bool(error.connection_invalidated)


def retry_writes(call: Callable[P, R]) -> Callable[P, R]:
    """Retry ``call`` with exponential backoff (0.1 s to 5 s) on ``transient`` errors.

    Gives up after ``STORE_RETRY_S`` seconds and raises the last error (tenacity).
    """

    def warn(state: tenacity.RetryCallState) -> None:
        error = state.outcome.exception() if state.outcome else None
        log.warning("store unavailable (%s); retrying %s", first_line(error), call.__name__)

    retrying = tenacity.retry(
        retry=tenacity.retry_if_exception(transient),
        wait=tenacity.wait_exponential(multiplier=0.1, max=5),
        stop=tenacity.stop_after_delay(STORE_RETRY_S),
        before_sleep=warn,
        reraise=True,
    )
    return retrying(call)


SQLITE_BUSY_TIMEOUT_MS = 10_000
"""How long one SQLite statement waits on another writer's lock before it fails (then retried)."""


def _sqlite_pragmas(dbapi_conn: Any, _record: Any) -> None:
    cursor = dbapi_conn.cursor()
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute(f"PRAGMA busy_timeout={int(SQLITE_BUSY_TIMEOUT_MS)}")
    cursor.close()


def make_engine(url: str, *, pool_size: int | None = None) -> Engine:
    """Create the engine for a store URL; a SQLite file's folder is created when missing.

    ``pool_size`` is how many PostgreSQL connections the engine keeps open for
    reuse (SQLAlchemy's default, 5, when None); up to ``MAX_OVERFLOW`` more
    are opened at peaks and closed once returned. A process whose threads use
    the store at once should keep one per thread. SQLite ignores it.

    Raises:
        StoreURLError: the URL cannot be parsed, or names a database or driver
            SQLAlchemy does not have.
        StoreError: a SQLite file's folder is missing and cannot be created.
    """
    try:
        parsed = make_url(url)
    except Exception as exc:
        raise StoreURLError(f"store URL is not a database URL: {redact(str(exc), [url])}") from None
    if parsed.get_backend_name() == "sqlite":
        if parsed.database and parsed.database != ":memory:":
            folder = Path(parsed.database).parent
            try:
                folder.mkdir(parents=True, exist_ok=True)
            except OSError as exc:  # a file in the way, a read-only folder
                raise StoreError(
                    f"cannot create the store's folder {folder}: {exc.strerror or exc}"
                ) from None
        engine = create_engine(parsed, connect_args={"timeout": SQLITE_BUSY_TIMEOUT_MS / 1000})
        event.listen(engine, "connect", _sqlite_pragmas)
        return engine
    if parsed.drivername == "postgresql":
        parsed = parsed.set(drivername="postgresql+psycopg")
    try:
        sizes = {} if pool_size is None else {"pool_size": pool_size, "max_overflow": MAX_OVERFLOW}
        engine = create_engine(parsed, **sizes)
    except (ArgumentError, NoSuchModuleError, ImportError) as exc:
        shown = redact(parsed.render_as_string(hide_password=True), [])
        raise StoreURLError(
            f"store URL {shown} is not a database SQLAlchemy can use: {redact(str(exc), [])}"
        ) from None
    _ping_when_idle(engine)
    return engine


IDLE_PING_S = 2.0
"""Seconds a pooled connection may sit unused and still be handed out without a ping."""


def _ping_when_idle(engine: Engine) -> None:
    """Ping a pooled connection before reuse only when it sat idle past ``IDLE_PING_S``.

    SQLAlchemy's ``pool_pre_ping`` pings on every checkout: a round trip per
    transaction, 12 per agent run, about an eighth of a run's CPU. A connection
    returned moments ago is alive but for a restart in those moments; then its
    statement fails, SQLAlchemy renews the whole pool, and the writes retry
    (``retry_writes``). A dead connection found by the ping is replaced: the
    checkout event raises ``DisconnectionError`` and the pool connects again
    (SQLAlchemy, "Disconnect Handling - Pessimistic", custom ping).
    """
    dialect = engine.dialect

    @event.listens_for(engine, "checkin")
    def _returned(dbapi_connection: Any, record: Any) -> None:
        record.info["idle_since"] = time.monotonic()

    @event.listens_for(engine, "checkout")
    def _handed_out(dbapi_connection: Any, record: Any, proxy: Any) -> None:
        since = record.info.get("idle_since")
        if since is None or time.monotonic() - since <= IDLE_PING_S:
            return  # new, or returned moments ago
        try:
            dialect.do_ping(dbapi_connection)
        except dialect.loaded_dbapi.Error as exc:
            raise DisconnectionError(f"the store's connection was lost: {exc}") from exc


def head_revision() -> str:
    """Return the newest migration's revision id, read from the file names (no Alembic).

    Migrations form one line, each file ``versions/NNNN_name.py`` with
    ``revision = "NNNN"`` (a test holds every file to it), so the head is the
    highest ``NNNN``.
    """
    folder = files("checks.store") / "migrations" / "versions"
    found = [
        m.group(1) for p in folder.iterdir() if (m := re.fullmatch(r"(\d{4})_\w+\.py", p.name))
    ]
    return max(found)


def at_head(engine: Engine) -> bool:
    """Whether the database's ``alembic_version`` is the newest revision (False if no table)."""
    try:
        with engine.connect() as conn:
            versions = [
                row[0] for row in conn.execute(text("SELECT version_num FROM alembic_version"))
            ]
    except SQLAlchemyError:
        return False
    return versions == [head_revision()]


def migrate(engine: Engine) -> None:
    """Apply every Alembic migration to ``engine`` (idempotent), one process at a time.

    On PostgreSQL the migrating transaction first takes an advisory lock
    (``pg_advisory_xact_lock``, released at commit), so two processes opening
    a fresh store at once both succeed: the second waits, then finds it up to
    date. SQLite takes its write lock at the first statement (``BEGIN
    IMMEDIATE``), to the same effect.
    """
    from alembic import command  # Alembic is loaded only when there is something to apply
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(files("checks.store") / "migrations"))
    with engine.begin() as conn:
        if engine.dialect.name == "postgresql":
            conn.exec_driver_sql(f"SELECT pg_advisory_xact_lock({MIGRATION_LOCK})")
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, "head")  # one line of migrations: a branch fails loudly
