"""What the guard refuses by name: node types, function name patterns, metadata calls.

``checks.sql.guard`` walks a statement's tree and refuses any node of
``DENIED_NODES`` and any call whose lower-case name fully matches a pattern of
``DENIED_FUNCTIONS`` (unless in ``ALLOWED_FUNCTIONS``), with the rule and the
reason given here. Sources: docs/design.md, Reading data safely; sqlglot 30's expression classes
(``dir(sqlglot.exp)``); the DuckDB and PostgreSQL function lists.
"""

from __future__ import annotations

import re

from sqlglot import exp

# Node types refused anywhere in the tree, with the rule they break.
DENIED_NODES: tuple[tuple[tuple[type[exp.Expr], ...], str], ...] = (
    ((exp.DML, exp.Insert, exp.Update, exp.Delete, exp.Merge, exp.Copy, exp.LoadData), "write"),
    ((exp.DDL, exp.Create, exp.Drop, exp.Alter, exp.TruncateTable, exp.Grant, exp.Revoke,
      exp.Comment, exp.Analyze, exp.Refresh, exp.Cache, exp.Uncache, exp.Undrop, exp.SwapTable),
     "ddl"),
    ((exp.Transaction, exp.Commit, exp.Rollback), "transaction"),
    ((exp.Command, exp.Set, exp.SetItem, exp.Pragma, exp.Attach, exp.Detach, exp.Install, exp.Use,
      exp.Show, exp.Describe, exp.Summarize, exp.Export, exp.Put, exp.Get, exp.Kill,
      exp.LockingStatement, exp.Declare, exp.Execute, exp.Block, exp.IfBlock, exp.WhileBlock,
      exp.StoredProcedure, exp.Return),
     "command"),
    ((exp.Into,), "select-into"),
    ((exp.Lock,), "locking"),
)  # fmt: skip

# Function names (lower case, full match), checked in order: (rule, why, pattern).
DENIED_FUNCTIONS: tuple[tuple[str, str, re.Pattern[str]], ...] = (
    (
        "file-read",
        "reads files or URLs",
        re.compile(
            r"read_\w*|\w+_scan|glob|sniff_csv|parquet_\w+|iceberg_\w+|delta_\w+|st_read\w*"
            r"|load_file|readfile|writefile|lo_\w+|pg_read_\w+|pg_ls_\w+|pg_stat_file"
            r"|pg_file_\w+|http_\w+|\w+_attach|to_file"
        ),
    ),
    (
        # Functions whose argument is SQL (or a table, schema or cursor named in
        # text) that the database parses and runs itself, out of the guard's
        # sight: PostgreSQL ts_stat(sqlquery text), ts_rewrite(query, select
        # text), query_to_xml*(query text), cursor_to_xml*, table_to_xml*,
        # schema_to_xml*, database_to_xml*, dblink*, tablefunc's crosstab and
        # connectby, xml2's xpath_table, pgRouting's pgr_* (all take SQL text),
        # Citus run_command_on_*; DuckDB query, query_table, json_serialize_sql,
        # json_deserialize_sql, json_serialize_plan (binds and optimises the
        # text, so current_setting() is constant-folded), json_execute_serialized_sql.
        "function",
        "runs SQL given as text",
        re.compile(
            r"query|query_table|dblink\w*|\w+_to_xml\w*|\w+_to_xmlschema|ts_stat|ts_rewrite"
            r"|json_execute_serialized_sql|json_serialize_sql|json_deserialize_sql"
            r"|json_serialize_plan|crosstab\d*|connectby|xpath_table|pgr_\w+|run_command_on_\w+"
            r"|exec|execute|sp_\w+|xp_\w+|postgres_\w+|mysql_\w+|sqlite_\w+|ducklake_\w+"
        ),
    ),
    (
        "function",
        "reads settings or the environment",
        re.compile(
            r"getenv|getvariable|current_setting|set_config|duckdb_\w+|pragma_\w+|which_secret"
            r"|secret|get_block_size"
        ),
    ),
    (
        # Stable functions that tell what is outside the data: the server, the
        # session, other relations' comments and privileges, the catalog.
        "function",
        "reads the database's own metadata",
        re.compile(
            r"version|inet_\w+|obj_description|col_description|shobj_description|format_type"
            r"|has_\w+_privilege|to_reg\w+|current_query\w*|current_database|current_catalog"
            r"|current_schemas?|current_role|current_user|session_user|system_user|user"
            r"|row_security_active|\w+_is_visible|current_connection_id|current_transaction_id"
            r"|stats|currtid\w*|acldefault|aclexplode|makeaclitem"
        ),
    ),
    (
        "function",
        "has side effects",
        re.compile(
            r"\w*sleep\w*|pg_\w+|benchmark|nextval|setval|currval|lastval|next_value_for|setseed"
            r"|txid_\w+|checkpoint|force_checkpoint|get_lock|release_lock|release_all_locks"
            r"|is_free_lock|is_used_lock|master_pos_wait|load_extension|system|shell|sys_\w+"
            r"|enable_\w+|disable_\w+|truncate_duckdb_logs|write_log"
        ),
    ),
)
ALLOWED_FUNCTIONS = frozenset({"pg_typeof"})
# Typed nodes sqlglot makes of calls that read the database's own metadata.
METADATA_NODES = tuple(
    getattr(exp, name)
    for name in ("CurrentVersion", "CurrentDatabase", "CurrentUser", "CurrentSchema",
                 "CurrentRole", "CurrentCatalog", "SessionUser", "CurrentSchemas")
    if hasattr(exp, name)
)  # fmt: skip
# SQL-standard functions called without parentheses, which sqlglot reads as a bare column
# (``SELECT user``): in PostgreSQL an unquoted one is always the function (its docs,
# "System Information Functions"; a column so named must be quoted).
KEYWORD_FUNCTIONS = frozenset(
    {"user", "current_role", "current_user", "session_user", "system_user",
     "current_catalog", "current_schema"}
)  # fmt: skip
KEYWORD_FUNCTION_DIALECTS = frozenset({"postgres"})
# Only names that cannot be mistaken for a column: ``temp.round(1)`` is a method call.
SYSTEM_FUNCTION_SCHEMAS = frozenset(
    {"information_schema", "pg_catalog", "pg_toast", "performance_schema"}
)
