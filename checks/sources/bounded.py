"""A catalog connection whose every statement ends in bounded time, even on a silent server.

The catalog (tables, columns, the statistics' row counts, the guard's facts) is read through
SQLAlchemy's inspector, outside the query path's two-stage limit
(``checks.sources.postgres_query``). ``statement_timeout`` is the server's own
limit: a server that has gone silent (a dead peer, a black-holed network)
never applies it, and a read blocked on its socket waited forever, holding the
source's catalog lock, so every later run of the source waited too. Here each
statement on the connection arms the process watchdog (``checks.sources.watchdog``)
before it runs and disarms it after: past ``Limits.kill_after_s`` of the query
limit, the socket is shut and the read fails, and the connection is thrown away.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import sqlalchemy as sa

from checks.settings.limits import Limits
from checks.sources.postgres_query import shut
from checks.sources.watchdog import after


def bound_pings(engine: sa.Engine, limits: Limits) -> None:
    """Bound the pool's ping of a pooled PostgreSQL connection as its statements are.

    SQLAlchemy's ``pool_pre_ping`` runs the dialect's ``do_ping`` before any
    connection event, so a pooled connection to a server gone silent hung at
    checkout; the ping's read is shut past the same kill time.
    """
    if engine.dialect.name != "postgresql":
        return
    limit_s = limits.kill_after_s(limits.query_timeout_s)
    ping = engine.dialect.do_ping

    def bounded_ping(dbapi_connection: Any) -> bool:
        with after(limit_s, lambda: shut(dbapi_connection)):
            return bool(ping(dbapi_connection))

    engine.dialect.do_ping = bounded_ping  # type: ignore[method-assign]


@contextlib.contextmanager
def bounded_connection(engine: sa.Engine, limits: Limits) -> Iterator[sa.Connection]:
    """Yield a connection of ``engine`` whose statements each end by the query limit's kill time.

    Only PostgreSQL's sockets are shut (psycopg's); other engines' connections
    are yielded as they are (SQLite is local; MySQL has its own read timeout).
    A statement cut short raises the driver's error, as SQLAlchemy's
    ``OperationalError``; the connection is then invalidated, never pooled again.
    """
    with engine.connect() as conn:
        driver = conn.connection.driver_connection
        if engine.dialect.name != "postgresql" or driver is None:
            yield conn
            return
        limit_s = limits.kill_after_s(limits.query_timeout_s)
        armed: list[contextlib.AbstractContextManager[None]] = []

        def disarm(*_: Any) -> None:
            while armed:
                armed.pop().__exit__(None, None, None)

        def arm(*_: Any) -> None:
            disarm()
            guard = after(limit_s, lambda: shut(driver))
            guard.__enter__()
            armed.append(guard)

        sa.event.listen(conn, "before_cursor_execute", arm)
        sa.event.listen(conn, "after_cursor_execute", disarm)
        try:
            yield conn
        except sa.exc.SQLAlchemyError:
            conn.invalidate()
            raise
        finally:
            disarm()
