"""A Spark source on a local session (``master: local[1]``): its own JVM, in a child process.

The child starts the session as a user's ``lookout run`` would (the JVM ends with it), so
this test process keeps only the Spark Connect server of the shared suite.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pyspark
import pytest

from tests.paths import ROOT

pytestmark = pytest.mark.slow

CHILD = """
import datetime as dt, json, os
from checks.errors import QueryTimeout
from checks.settings.limits import Limits
from checks.settings.sources import SparkSource
from checks.sources.spark_source import SparkQuerySource
config = SparkSource(type="spark", master="local[1]")
with SparkQuerySource("local", config, Limits()) as source:
    rows = source.query(
        "SELECT CAST('2024-01-09 21:00:00' AS TIMESTAMP) AS tz,"
        " CAST('2024-01-09 19:00:00' AS TIMESTAMP_NTZ) AS naive, current_timezone() AS zone"
    ).rows
    try:
        source.query("SELECT count(*) FROM range(100000000000)", timeout_s=3)
        timed_out = ""
    except QueryTimeout as error:
        timed_out = str(error)
    print(json.dumps({
        "version": source.engine_version(),
        "rows": [[v.isoformat() if isinstance(v, dt.datetime) else v for v in r] for r in rows],
        "timed_out": timed_out,
        "catalog": [d.name for d in source.catalog()],
    }))
"""


def test_a_local_session_is_utc_and_interrupted_at_its_limit() -> None:
    # The process's zone is not UTC. A Spark Connect session opened earlier in this test
    # process sets SPARK_CONNECT_MODE_ENABLED, which would make the child's builder a
    # Connect client: the child starts from an environment without it.
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("SPARK_CONNECT_MODE_ENABLED", "SPARK_REMOTE")
    }
    env["TZ"] = "America/New_York"
    done = subprocess.run(
        [sys.executable, "-c", CHILD],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    said = json.loads(done.stdout.strip().splitlines()[-1])
    assert said == {
        "version": f"Spark {pyspark.__version__}",
        "rows": [["2024-01-09T21:00:00+00:00", "2024-01-09T19:00:00", "UTC"]],
        "timed_out": "the query ran past its time limit of 3 s",
        "catalog": [],
    }
