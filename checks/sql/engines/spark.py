"""What Spark SQL and Databricks SQL must not call or read, beyond every dialect's rules.

Written from Spark's SQL reference (Built-in Functions, "Run SQL on files directly",
Variable substitution) and Databricks' SQL language reference (built-in functions,
``system`` catalog). Both sqlglot dialects, ``spark`` and ``databricks``, take these
refusals (``ENGINE_MODULES``); the guard refuses commands (``SET``, ``ADD JAR``,
``CACHE``, ``REFRESH``, ``EXECUTE IMMEDIATE``, ``DECLARE``) for every dialect already.

- ``reflect``, ``java_method``, ``try_reflect`` call any static Java method on the
  server (``java.lang.System.getenv``).
- ``input_file_name``, ``input_file_block_start``, ``input_file_block_length`` tell
  where a table's files are stored.
- ``from_protobuf``/``to_protobuf`` read a descriptor file named by a path
  (``read_files``, ``read_kafka`` and the other ``read_*`` readers, ``http_request``
  are refused for every dialect).
- ``ai_*`` (``ai_query``, ``ai_gen``, ``ai_forecast``, …) and ``vector_search`` call a
  model serving endpoint or an index: a cost and a call outside the data.
- ``remote_query`` runs SQL given as text on a federated database;
  ``identifier('…')`` names a table, column or function in text.
- ``secret``, ``try_secret``, ``list_secrets`` read Databricks secrets.
- ``current_metastore``, ``current_version``, ``current_recipient``, ``is_member``,
  ``is_account_group_member`` read the workspace's own metadata.

``DENIED_SCHEMAS``: the ``system`` catalog (Databricks' audit, billing and
``system.ai.python_exec``) and ``global_temp``. ``FILE_FORMATS``: a table named
``format.`path``` is a file read directly (Spark's "Run SQL on files directly",
``spark.sql.runSQLOnFiles``), refused as ``file-read``. ``DENIED_TEXT``: ``${…}``
anywhere in the text, which Spark replaces with a setting or an environment variable
(``${env:SECRET}``) before it parses the statement (``spark.sql.variable.substitute``).
"""

from __future__ import annotations

import re

DENIED_FUNCTIONS: tuple[tuple[str, str, re.Pattern[str]], ...] = (
    ("function", "calls Java methods", re.compile(r"reflect|java_method|try_reflect")),
    (
        "function",
        "tells where a table's files are stored",
        re.compile(r"input_file_name|input_file_block_start|input_file_block_length"),
    ),
    ("file-read", "reads files or URLs", re.compile(r"from_protobuf|to_protobuf")),
    (
        "function",
        "calls a model or a service outside the data",
        re.compile(r"ai_\w+|vector_search"),
    ),
    (
        "function",
        "runs SQL or names objects given as text",
        re.compile(r"remote_query|identifier"),
    ),
    ("function", "reads secrets", re.compile(r"try_secret|list_secrets")),
    (
        "function",
        "reads the database's own metadata",
        re.compile(
            r"current_metastore|current_version|current_recipient|is_member"
            r"|is_account_group_member"
        ),
    ),
)
"""(rule, why, pattern fully matched against the lower-case name)."""

DENIED_SCHEMAS = frozenset({"system", "global_temp"})
"""Schemas and catalogs whose functions and tables a query may not name."""

FILE_FORMATS = frozenset(
    {"parquet", "csv", "json", "text", "binaryfile", "orc", "avro", "delta", "iceberg",
     "hudi", "xml", "jdbc", "libsvm", "image", "kafka", "cloudfiles"}
)  # fmt: skip
"""Spark data source names: ``parquet.`/path``` reads that file, not a table."""

DENIED_TEXT: tuple[tuple[str, str, re.Pattern[str]], ...] = (
    (
        "function",
        "${…} is not allowed: Spark replaces it with a setting or an environment variable"
        " before it reads the query",
        re.compile(r"\$\{"),
    ),
)
"""(rule, reason, pattern searched in the text that would run)."""
