"""A Spark or Databricks source without its driver says which extra to install."""

from __future__ import annotations

import subprocess
import sys

SPARK = """
import sys
sys.modules["pyspark"] = None  # as if pyspark were not installed
from checks.errors import SourceError
from checks.settings.limits import Limits
from checks.settings.sources import SparkSource
from checks.sources.spark_source import SparkQuerySource
try:
    SparkQuerySource("lake", SparkSource(type="spark", remote="sc://h:15002"), Limits())
except SourceError as error:
    print(error)
"""

DATABRICKS = """
import sys
for name in ("databricks", "databricks.sql", "databricks.sqlalchemy"):
    sys.modules[name] = None  # as if databricks-sql-connector were not installed
from checks.errors import SourceError
from checks.settings.limits import Limits
from checks.settings.sources import SQLAlchemySource
from checks.sources.sql_source import SQLQuerySource
url = "databricks://token:dapi-secret@adb-1.net?http_path=/sql/1.0/warehouses/a"
try:
    SQLQuerySource("lake", SQLAlchemySource(type="sqlalchemy", url=url), Limits())
except SourceError as error:
    print(error)
"""


def said(code: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    return done.stdout.strip()


def test_spark_without_pyspark_names_the_extra() -> None:
    assert said(SPARK) == "source lake: Spark needs pyspark: pip install 'lookout[spark]'"


def test_databricks_without_its_connector_names_the_extra() -> None:
    assert said(DATABRICKS) == (
        "source lake: cannot use"
        " databricks://token:***@adb-1.net?http_path=%2Fsql%2F1.0%2Fwarehouses%2Fa:"
        " its database driver is not installed (import of databricks.sqlalchemy halted;"
        " None in sys.modules); pip install 'lookout[databricks]'"
    )
