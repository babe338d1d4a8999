"""What BigQuery's own SQL must not call, beyond what the guard refuses everywhere.

Written from BigQuery's GoogleSQL reference (federated queries, BigQuery ML and
AI functions, vector search, system variables, scripting, ``EXPORT DATA`` and ``LOAD
DATA``). What the guard already refuses in every dialect is not repeated: ``EXPORT
DATA``, ``LOAD DATA``, ``DECLARE``, ``SET``, ``BEGIN … END`` blocks (more than one
statement), ``CALL``, ``EXECUTE IMMEDIATE``, every table function other than
``UNNEST`` (``ML.PREDICT``, ``AI.GENERATE_TABLE``, ``VECTOR_SEARCH``, ``APPENDS``,
``GAP_FILL``), ``SESSION_USER()``, a schema-qualified call (``ML.GENERATE_TEXT``,
``AI.GENERATE``, ``KEYS.*``, ``AEAD.*``, ``OBJ.*``), every name outside the source's
dataset (``region-us.INFORMATION_SCHEMA.JOBS`` and the other jobs views: what other
queries ran, and who ran them) and ``INFORMATION_SCHEMA``.

Here: ``EXTERNAL_QUERY`` (SQL run on a Cloud SQL or Spanner database through a
connection), ``EXTERNAL_OBJECT_TRANSFORM``, the unqualified AI functions
(``AI_GENERATE``, … — sqlglot reads ``AI.GENERATE`` as one), ``VECTOR_SEARCH`` and
the ML/AI schemas as owners of a call, named so the reason is clear; and ``@@``
system variables (``@@project_id``, ``@@session_id``, ``@@current_job_id``,
``@@script.*``: they tell the project, the session and the job).
"""

from __future__ import annotations

import re

from sqlglot import exp

from checks.errors import QueryRejected

DENIED_FUNCTIONS: tuple[tuple[str, str, re.Pattern[str]], ...] = (
    (
        "function",
        "runs SQL on another database through a connection (a federated query)",
        re.compile(r"external_query|external_object_transform"),
    ),
    (
        "function",
        "calls a paid model (BigQuery ML, Vertex AI)",
        re.compile(r"ai_\w+|ml_\w+"),
    ),
    ("function", "searches a vector index over whole tables", re.compile(r"vector_search")),
)
"""(rule, why, pattern) per refused BigQuery function, fully matched in lower case."""

DENIED_SCHEMAS = frozenset({"ml", "ai", "keys", "aead", "obj"})
"""BigQuery's function namespaces that call models or handle keys: a call they own is refused."""


def check(tree: exp.Expr) -> None:
    """Refuse ``@@`` system variables (sqlglot reads ``@@name`` as a parameter of a parameter).

    Raises:
        QueryRejected: ``function``, naming the variable.

    """
    for node in tree.find_all(exp.Parameter):
        if isinstance(node.this, exp.Parameter):
            name = node.this.this.sql(dialect="bigquery")
            raise QueryRejected(
                "function",
                f"system variable @@{name} is not allowed: it reads the session's own metadata",
            )
