"""The shop on Spark: one Spark Connect server (one JVM) for the whole test session.

``spark_connect_url`` starts Spark's own ``SparkConnectServer`` (shipped in the pyspark
wheel) with ``spark-submit`` on ``local[1]``, small (1 GB driver, no UI, one shuffle
partition), on a free port of 127.0.0.1; ``shop_spark_opener`` writes the shop's tables
(``tests.checks.declared.shop.TABLES``, read as PostgreSQL SQL and written by sqlglot in
Spark's: ``TIMESTAMP`` becomes ``TIMESTAMP_NTZ``, ``TIMESTAMP WITH TIME ZONE`` Spark's
``TIMESTAMP``, the same UTC instants) and views (Spark's ``range()``) into its
``default`` database, and opens sources on it through ``remote: sc://…``.
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlglot
from sqlglot import exp

from checks.settings.limits import Limits
from checks.settings.sources import SparkSource
from checks.sources import Source

SERVER_CONF = {
    "spark.driver.memory": "1g",
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.shuffle.partitions": "1",
    "spark.connect.grpc.binding.address": "127.0.0.1",
}
START_TIMEOUT_S = 300

SPARK_VIEWS = """
CREATE VIEW tiny AS
  SELECT id, CASE WHEN id < 3 THEN NULL ELSE 1 END AS v FROM range(1000000);
CREATE VIEW nearly_all AS
  SELECT id, CASE WHEN id < 999999 THEN NULL ELSE 1 END AS v FROM range(1000000);
"""
"""The shop's views in Spark (``range`` names its column ``id``)."""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _listening(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(0.5)
        return sock.connect_ex(("127.0.0.1", port)) == 0


def spark_tables() -> list[str]:
    """The shop's tables as Spark statements: a timestamp without zone is ``TIMESTAMP_NTZ``."""
    from tests.checks.declared.shop import TABLES

    statements = []
    for tree in sqlglot.parse(TABLES, read="postgres"):
        if tree is None:
            continue
        for node in tree.find_all(exp.DataType):
            if node.this == exp.DType.TIMESTAMP:
                node.set("this", exp.DType.TIMESTAMPNTZ)
        statements.append(tree.sql(dialect="spark"))
    return statements + [s for s in SPARK_VIEWS.split(";") if s.strip()]


@pytest.fixture(scope="session")
def spark_connect_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A Spark Connect server of this test session; yields its ``sc://127.0.0.1:PORT``."""
    pytest.importorskip("pyspark", reason="pip install 'lookout[spark]'")
    import pyspark

    home = Path(pyspark.__file__).parent
    folder = tmp_path_factory.mktemp("spark")
    port = _free_port()
    conf = {
        **SERVER_CONF,
        "spark.connect.grpc.binding.port": str(port),
        "spark.sql.warehouse.dir": str(folder / "warehouse"),
    }
    command = [str(home / "bin" / "spark-submit"), "--master", "local[1]"]
    for key, value in conf.items():
        command += ["--conf", f"{key}={value}"]
    command += ["--class", "org.apache.spark.sql.connect.service.SparkConnectServer"]
    log = (folder / "server.log").open("wb")
    env = {**os.environ, "SPARK_HOME": str(home), "SPARK_LOCAL_IP": "127.0.0.1"}
    server = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=folder)
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while not _listening(port):
            if server.poll() is not None or time.monotonic() > deadline:
                tail = (folder / "server.log").read_text(errors="replace")[-2000:]
                raise RuntimeError(f"the Spark Connect server did not start:\n{tail}")
            time.sleep(0.5)
        yield f"sc://127.0.0.1:{port}"
    finally:
        server.terminate()
        try:
            server.wait(30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        log.close()


@pytest.fixture(scope="session")
def shop_spark_opener(spark_connect_url: str) -> object:
    """Opens the shop on Spark (``tests.checks.declared.shop.SHOP_ENGINES``)."""
    from pyspark.sql import SparkSession

    from checks.sources.spark_source import release

    session = SparkSession.builder.remote(spark_connect_url).create()
    try:
        session.conf.set("spark.sql.session.timeZone", "UTC")
        for statement in spark_tables():
            session.sql(statement).collect()
    finally:
        release(session)

    def opener(limits: Limits) -> Source:
        from checks.sources.spark_source import SparkQuerySource

        return SparkQuerySource("shop", SparkSource(type="spark", remote=spark_connect_url), limits)

    return opener
