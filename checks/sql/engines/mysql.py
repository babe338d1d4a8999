"""What MySQL's and MariaDB's own SQL must not call, beyond what every dialect refuses.

``checks.sql.denied`` already refuses, in every dialect, what these engines share with
others: ``LOAD_FILE`` (file-read), ``SLEEP``, ``BENCHMARK``, ``GET_LOCK``,
``RELEASE_LOCK``, ``RELEASE_ALL_LOCKS``, ``IS_FREE_LOCK``, ``IS_USED_LOCK``,
``MASTER_POS_WAIT``, ``NEXTVAL``/``SETVAL``/``LASTVAL`` (MariaDB sequences),
``sys_exec``-style UDFs (``sys_*``), ``VERSION``, ``USER``, ``DATABASE``, ``mysql_*``,
``@@`` system variables, ``SELECT … INTO`` (``INTO OUTFILE``/``INTO DUMPFILE`` do not
even parse in sqlglot's MySQL dialect: a parse error), ``FOR UPDATE``/``LOCK IN SHARE
MODE``, and tables of ``mysql``, ``sys``, ``performance_schema`` and
``information_schema``. Here: the rest the manuals mark as waiting on replication,
reading or changing session state, or telling about the server.

Sources: MySQL 8.0 reference, "Information Functions", "Locking Functions",
"Functions Used with Global Transaction Identifiers (GTIDs)", "Miscellaneous
Functions" (``UUID``: a time-based UUID whose node is the host's MAC address,
``UUID_SHORT``: the server id and start time, with a global counter incremented),
"Encryption and Compression Functions" (``DES_ENCRYPT``: the server's
``--des-key-file``), "User-Defined Variables"; MariaDB knowledge base, "Information
Functions", "MASTER_GTID_WAIT", "WSREP Functions" (Galera), "BINLOG_GTID_POS".
"""

from __future__ import annotations

import re

from sqlglot import exp

DENIED_FUNCTIONS: tuple[tuple[str, str, re.Pattern[str]], ...] = (
    (
        "function",
        "waits on replication (the session blocks until a replica catches up)",
        re.compile(
            r"source_pos_wait|master_gtid_wait|wait_for_executed_gtid_set"
            r"|wait_until_sql_thread_after_gtids|wsrep_\w+"
        ),
    ),
    (
        "function",
        "reads or sets the session's state",
        re.compile(r"last_insert_id|found_rows|row_count"),
    ),
    (
        "function",
        "reads the database's own metadata",
        re.compile(
            r"connection_id|ps_current_thread_id|ps_thread_id|icu_version|binlog_gtid_pos"
            r"|uuid|uuid_short"
        ),
    ),
    (
        "function",
        "uses the server's key file",
        re.compile(r"des_encrypt|des_decrypt"),
    ),
    (
        "function",
        "runs a user-defined function installed on the server",
        re.compile(r"lib_mysqludf_\w+"),
    ),
)
"""(rule, why, pattern): a call whose lower-case name fully matches is refused."""

DENIED_NODES: tuple[tuple[tuple[type[exp.Expr], ...], str, str], ...] = (
    (
        (exp.Parameter,),
        "function",
        "reads or sets a user variable (session state that outlives the query; := assigns one)",
    ),
)
"""(node types, rule, why): a node of these types anywhere in the tree is refused."""

DENIED_SCHEMAS = ("mysql", "sys", "performance_schema", "information_schema")
"""The system schemas: the grants, the server's state, the catalog."""
