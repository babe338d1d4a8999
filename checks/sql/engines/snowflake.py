"""What Snowflake's own SQL must not call, beyond what the guard refuses everywhere.

Written from Snowflake's SQL reference (System functions, Context functions, File
functions, Table functions, Cortex AI functions). What the guard already refuses in
every dialect is not repeated: stages (``FROM @stage``, ``@%table``, ``@~``: not a table
of the source), ``GET``, ``PUT``, ``LIST``, ``COPY INTO``, ``CALL``, ``EXECUTE
IMMEDIATE``, every ``TABLE(…)`` table function (``GENERATOR``, whose row count is a
warehouse's bill; ``INFER_SCHEMA``, ``VALIDATE``, ``FLATTEN``), ``RESULT_SCAN`` (another
query's result), catalog-qualified names (the ``SNOWFLAKE`` database's
``ACCOUNT_USAGE`` views, ``SNOWFLAKE.CORTEX.…``) and ``INFORMATION_SCHEMA``.

Here: ``SYSTEM$…`` functions (they cancel queries, read the account's settings and
lineage, call out of Snowflake), the file functions that read or hand out staged files,
the context functions that tell the account, warehouse, session, client and earlier
queries, the Cortex AI functions (``AI_COMPLETE``, ``AI_CLASSIFY``, …: each call is a paid model's
inference), and the
``SNOWFLAKE`` database as the owner of a call.

External functions (a remote service called per row) and other user-defined
functions cannot be told from a name: the role's grants decide which it may call
(docs/engines.md, Snowflake).
"""

from __future__ import annotations

import re

DENIED_FUNCTIONS: tuple[tuple[str, str, re.Pattern[str]], ...] = (
    (
        "function",
        "is a Snowflake system function (SYSTEM$…: it acts on the account, its queries"
        " or its settings)",
        re.compile(r"system\$\w+"),
    ),
    (
        "file-read",
        "reads staged files or hands out their URLs",
        re.compile(
            r"get_presigned_url|build_scoped_file_url|build_stage_file_url|get_stage_location"
            r"|get_relative_path|get_absolute_path|infer_schema|validate|validate_pipe_load"
            r"|to_file|fl_\w+"
        ),
    ),
    (
        "function",
        "reads the database's own metadata",
        re.compile(
            r"current_account\w*|current_organization\w*|current_region|current_warehouse"
            r"|current_session|current_client|current_ip_address|current_statement"
            r"|current_transaction|current_available_roles|current_secondary_roles"
            r"|current_role_type|last_query_id|last_transaction|invoker_\w+"
            r"|is_\w*role_in_session|is_granted_to_invoker_role|all_user_names|get_ddl"
            r"|get_lineage|policy_context|extract_semantic_categories"
        ),
    ),
    (
        "function",
        "calls a paid AI model (Snowflake Cortex)",
        re.compile(r"ai_\w+"),
    ),
)
"""(rule, why, pattern) per refused Snowflake function, fully matched in lower case."""

DENIED_SCHEMAS = frozenset(
    {"snowflake", "account_usage", "organization_usage", "reader_account_usage", "cortex"}
)
"""The ``SNOWFLAKE`` database and its schemas: a call they own is refused."""
