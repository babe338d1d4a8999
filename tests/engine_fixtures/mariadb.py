"""A private MariaDB server for the tests, started once per test session and stopped after.

``mariadb_server`` makes a data directory with ``mariadb-install-db --no-defaults``
and starts ``mariadbd --no-defaults`` on a free port of 127.0.0.1 (its own socket,
nothing of the machine's server or its config read), waits until it accepts
connections, and stops it at the end of the session. It makes two roles on the
``shop`` database: ``reader`` (``SELECT`` only: what a Lookout source should be given)
and ``builder`` (every privilege there: what the tests write the data with). The shop
tables (``tests.checks.declared.shop``) are built on it by ``shop_mariadb``.

Without Debian's ``mariadb-server`` binaries (``mariadb-install-db``, ``mariadbd``) the
tests that need the server are skipped, saying so.
"""

from __future__ import annotations

import contextlib
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

_SBIN = "/usr/sbin:/usr/bin:/sbin:/bin"
SERVER_ZONE = "+05:00"
"""The server's own default zone: not UTC, so a session Lookout did not pin shows it."""
_START_S = 60.0  # at most, for the server to accept connections on a busy 2-core machine


@dataclass(frozen=True)
class MariaDBServer:
    """A running private server.

    Attributes:
        port: its TCP port on 127.0.0.1.
        version: what ``SELECT version()`` says (``10.11.19-MariaDB-0+deb12u1``).
    """

    port: int
    version: str

    def url(self, user: str, database: str = "shop", driver: str = "mariadb+pymysql") -> str:
        """A SQLAlchemy URL for ``user`` (no password) on ``database``."""
        return f"{driver}://{user}@127.0.0.1:{self.port}/{database}"

    def connect(self, user: str = "root", database: str | None = None) -> object:
        """A PyMySQL connection (autocommit) as ``user``."""
        import pymysql

        return pymysql.connect(
            host="127.0.0.1",
            port=self.port,
            user=user,
            database=database,
            autocommit=True,
            connect_timeout=5,
        )


def _binary(name: str) -> str | None:
    return shutil.which(name) or shutil.which(name, path=_SBIN)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_ready(process: subprocess.Popen[bytes], port: int, log: Path) -> str:
    import pymysql

    deadline = time.monotonic() + _START_S
    while True:
        if process.poll() is not None:
            raise RuntimeError(f"mariadbd exited ({process.returncode}): {log.read_text()[-2000:]}")
        try:
            conn = pymysql.connect(host="127.0.0.1", port=port, user="root", connect_timeout=2)
        except pymysql.err.OperationalError:
            if time.monotonic() > deadline:
                why = f"mariadbd did not accept connections in {_START_S:g} s"
                raise RuntimeError(why) from None
            time.sleep(0.1)
            continue
        with contextlib.closing(conn), conn.cursor() as cur:
            cur.execute("SELECT version()")
            row = cur.fetchone()
            return str(row[0]) if row else ""


_ROLES = """
CREATE DATABASE shop CHARACTER SET utf8mb4 COLLATE utf8mb4_bin;
CREATE USER 'reader'@'127.0.0.1';
GRANT SELECT, SHOW VIEW ON shop.* TO 'reader'@'127.0.0.1';
CREATE USER 'builder'@'127.0.0.1';
GRANT ALL PRIVILEGES ON shop.* TO 'builder'@'127.0.0.1';
"""
"""The shop's database (case-sensitive text, as in DuckDB and PostgreSQL) and its two roles.

``--skip-test-db`` leaves out the ``test`` databases, and with them the write privileges
``mariadb-install-db`` would grant every account (``PUBLIC``) there: ``reader`` holds
nothing that writes."""


@pytest.fixture(scope="session")
def mariadb_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MariaDBServer]:
    """A private MariaDB server of this test session (``MariaDBServer``), stopped at its end."""
    install, server = _binary("mariadb-install-db"), _binary("mariadbd")
    if install is None or server is None:
        pytest.skip("MariaDB is not installed here (Debian's mariadb-server: mariadbd)")
    pytest.importorskip("pymysql", reason="PyMySQL is not installed: pip install 'lookout[mysql]'")
    folder = tmp_path_factory.mktemp("mariadb")
    data, log = folder / "data", folder / "mariadbd.log"
    subprocess.run(
        [install, "--no-defaults", "--user=root", f"--datadir={data}", "--skip-test-db",
         "--auth-root-authentication-method=normal"],
        check=True, capture_output=True, timeout=120,
    )  # fmt: skip
    port = _free_port()
    process = subprocess.Popen(
        [server, "--no-defaults", "--user=root", f"--datadir={data}", f"--port={port}",
         "--bind-address=127.0.0.1", f"--socket={folder / 'mariadbd.sock'}",
         f"--pid-file={folder / 'mariadbd.pid'}", f"--log-error={log}", "--skip-name-resolve",
         "--innodb-buffer-pool-size=32M", "--innodb-flush-log-at-trx-commit=0",
         "--skip-log-bin", "--performance-schema=OFF", f"--default-time-zone={SERVER_ZONE}"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        version = _wait_ready(process, port, log)
        found = MariaDBServer(port, version)
        admin = found.connect()
        with contextlib.closing(admin), admin.cursor() as cur:  # type: ignore[attr-defined]
            for statement in filter(str.strip, _ROLES.split(";")):
                cur.execute(statement)
        yield found
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.fixture(scope="session")
def shop_mariadb(mariadb_server: MariaDBServer) -> str:
    """The shop tables on the private MariaDB server; its URL for the read-only role."""
    from tests.checks.declared.shop import build_mariadb

    build_mariadb(mariadb_server.connect("builder", "shop"))
    return mariadb_server.url("reader")


@pytest.fixture(scope="session")
def shop_mariadb_opener(shop_mariadb: str) -> object:
    """Opens the shop on MariaDB, as the read-only role (``SHOP_ENGINES``)."""
    from tests.checks.declared.shop import sqlalchemy_opener

    return sqlalchemy_opener(shop_mariadb)
