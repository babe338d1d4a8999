"""What SQL Server's own T-SQL must not call or say, beyond what the guard refuses everywhere.

Written from Microsoft's Transact-SQL reference (learn.microsoft.com/sql/t-sql):

- "Rowset functions": ``OPENROWSET`` (a file with ``BULK``, or another server through
  an OLE DB provider), ``OPENDATASOURCE`` and ``OPENQUERY`` (another server: a
  linked server runs the text it is given), ``OPENXML`` (a document the session
  prepared with ``sp_xml_preparedocument``); the trace, audit and log readers
  ``fn_get_audit_file``, ``fn_xe_file_target_read_file``, ``fn_trace_gettable``
  (files on the server) and ``fn_dblog``, ``fn_dump_dblog``, ``fn_virtualfilestats``;
- "Metadata functions", "Security functions" and "System functions":
  ``SERVERPROPERTY``, ``DB_NAME``, ``OBJECT_ID``, ``HOST_NAME``, ``SUSER_NAME``,
  ``HAS_PERMS_BY_NAME``, ``SESSION_CONTEXT``, ``CONTEXT_INFO``, … and the
  cryptographic functions, which read the database's keys (``DECRYPTBYKEY``, …);
- "Configuration functions" and "System statistical functions": every ``@@``
  variable (``@@VERSION``, ``@@SERVERNAME``, ``@@SPID``, …), and a ``@`` variable
  (one query cannot declare it);
- "Table hints": ``WITH (UPDLOCK)``, ``XLOCK``, ``TABLOCKX``, ``HOLDLOCK``, … take
  locks that block other sessions' writes; ``NOLOCK`` reads uncommitted rows. The
  recipe sets the isolation level itself, so every table hint is refused; so are
  query hints (``OPTION (…)``, e.g. ``QUERYTRACEON``) and, being the same node in
  sqlglot, ``FOR XML`` and ``FOR JSON`` (``DENIED_NODES``).

``xp_*`` and ``sp_*`` procedures, ``EXEC``, ``DECLARE``, ``SELECT … INTO`` and
``NEXT VALUE FOR`` are refused in every dialect; ``WAITFOR`` and ``BULK INSERT`` do
not parse as a query. Names with three or four parts (another database:
``master.dbo.sysdatabases``; a linked server: ``srv.db.dbo.t``) are refused by the
guard itself, and so are ``sys.*`` and ``INFORMATION_SCHEMA.*``; ``DENIED_SCHEMAS``
adds the system databases, should one be written as a schema.
"""

from __future__ import annotations

import re

from sqlglot import exp

DENIED_FUNCTIONS: tuple[tuple[str, str, re.Pattern[str]], ...] = (
    (
        "file-read",
        "reads files, the server's logs or other servers",
        re.compile(
            r"openrowset|opendatasource|openquery|fn_get_audit_file|fn_xe_file_target_read_file"
            r"|fn_trace_gettable|fn_trace_getinfo|fn_dblog|fn_dump_dblog|fn_virtualfilestats"
            r"|fn_servershareddrives"
        ),
    ),
    ("function", "reads a document the session prepared", re.compile(r"openxml")),
    (
        "function",
        "reads the database's own metadata",
        re.compile(
            r"serverproperty|databasepropertyex|databaseproperty|connectionproperty"
            r"|\w+property(ex)?|db_name|db_id|host_name|host_id|app_name|suser_\w+|user_name"
            r"|user_id|schema_name|schema_id|object_name|object_id|object_schema_name"
            r"|object_definition|col_name|col_length|type_name|type_id|file_name|file_id"
            r"|file_idex|filegroup_name|filegroup_id|is_member|is_rolemember|is_srvrolemember"
            r"|has_perms_by_name|has_dbaccess|permissions|original_login|original_db_name"
            r"|session_context|context_info|current_request_id|current_transaction_id"
            r"|ident_current|ident_incr|ident_seed|scope_identity|stats_date|pwdcompare"
            r"|pwdencrypt|fn_my_permissions|fn_builtin_permissions|fn_listextendedproperty"
        ),
    ),
    (
        "function",
        "reads the database's keys",
        re.compile(
            r"decryptby\w+|encryptby\w+|signby\w+|verifysignedby\w+|is_objectsigned|key_guid"
            r"|key_id|key_name|cert_id|certencoded|certprivatekey|asymkey_id|symkeyproperty"
        ),
    ),
)
DENIED_SCHEMAS = frozenset({"master", "msdb", "model", "tempdb", "sys"})
DENIED_NODES: tuple[tuple[tuple[type[exp.Expr], ...], str, str], ...] = (
    (
        (exp.Parameter,),
        "function",
        "is a variable: an @@ one reads the server's own state, and one query cannot"
        " declare an @ one",
    ),
    (
        (exp.WithTableHint,),
        "locking",
        "is a table hint: Lookout sets how a read locks (READ COMMITTED, with a lock timeout)",
    ),
    # OPTION (…)'s query hints; FOR XML's and FOR JSON's options are the same node.
    ((exp.QueryOption,), "locking", "is a query hint or a FOR XML or FOR JSON option"),
)
