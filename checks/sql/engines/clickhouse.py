"""What ClickHouse's own SQL may not call, from ClickHouse's documentation.

Sources: ClickHouse docs, "Table Functions" (each reader of files, URLs, object stores,
other servers and other databases; ``merge`` reads tables chosen by a regular expression,
``input`` the request's body, ``executable`` runs a script), "Dictionaries" (``dictGet``
and its family read a dictionary by a name in a string, whose source may be another
server, a file or a script: never a data set the guard can check; ``joinGet`` likewise
reads a Join table by name), "Other functions" (``sleep``, ``sleepEachRow``, the server's
host, ports, uptime, macros, settings and certificate, ``hasColumnInTable``), "Functions
for Working with URLs" are plain string functions and stay allowed. ``system`` and
``information_schema`` are refused as schemas for tables everywhere
(``checks.sql.tables``) and for functions here. ``currentUser`` and the other metadata
calls are refused as the SQL standard's ``current_user`` is in every dialect.

A query's own ``SETTINGS`` clause is refused too (``check``): under a profile with
``readonly=2`` it could lift the limits each query is sent with (``max_execution_time=0``),
and a subquery's ``SETTINGS`` is applied even under ``readonly=1``. ``FORMAT`` is refused:
the result's format is the driver's.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

from sqlglot import exp

from checks.errors import QueryRejected

DENIED_FUNCTIONS: tuple[tuple[str, str, re.Pattern[str]], ...] = (
    (
        "file-read",
        "reads files or URLs",
        re.compile(
            r"url|urlcluster|file|filecluster|s3|s3cluster|gcs|oss|cosn|azureblobstorage\w*"
            r"|hdfs|hdfscluster|iceberg\w*|deltalake\w*|hudi\w*|paimon\w*|input|filesystem\w*"
            r"|catboostevaluate|modelevaluate|arrowflight|ytsaurus\w*"
        ),
    ),
    (
        "function",
        "reads another server or database",
        re.compile(
            r"remote|remotesecure|cluster|clusterallreplicas|mysql|postgresql|jdbc|odbc|mongodb"
            r"|redis|sqlite|merge|mergetree\w+|dictionary|dict\w+|joinget\w*|prometheusquery\w*"
        ),
    ),
    (
        "function",
        "reads the database's own metadata",
        re.compile(
            r"currentuser|currentdatabase|currentschemas|currentprofiles|currentroles"
            r"|enabledroles|defaultroles|currentquery\w*|getsetting\w*|getmacro|fqdn|hostname"
            r"|uptime|tcpport|getserverport|serveruuid|buildid|revision|displayname|shardnum"
            r"|shardcount|queryid|initialquery\w*|getclienthttpheader|hascolumnintable"
            r"|showcertificate|getoskernelversion|zookeepersessionuptime|globalvariable"
            r"|connectionid|connection_id|getmaxtablenamelengthfordatabase|address\w+|demangle"
            r"|transactionid|transactionlatestsnapshot|transactionoldestsnapshot"
        ),
    ),
    (
        "function",
        "has side effects",
        re.compile(r"sleep|sleepeachrow|executable\w*|__\w+"),
    ),
)
"""(rule, why, pattern): a call whose lower-case name fully matches is refused."""

DENIED_SCHEMAS = frozenset({"system", "information_schema"})
"""Schemas whose functions and tables a query may not name (``system.one``, …)."""


def check(tree: exp.Expr) -> None:
    """Refuse a query's own ``SETTINGS`` or ``FORMAT`` clause, anywhere in the tree.

    Raises:
        QueryRejected: rule ``command``.

    """
    for node in tree.walk():
        if not isinstance(node, exp.Query):
            continue
        if node.args.get("settings"):
            raise QueryRejected(
                "command", "SETTINGS is not allowed: each query runs with Lookout's own settings"
            )
        if node.args.get("format"):
            raise QueryRejected("command", "FORMAT is not allowed: the driver reads the result")


def kind_sql(tree: exp.Expr) -> exp.Expr:
    """A typed kind's query as ClickHouse runs it with SQL's answers.

    ClickHouse does not run a correlated subquery inside an aggregate's argument
    ("Correlated subqueries in aggregate function argument are not supported"), which is
    where ``relationships`` counts its orphans: ``EXISTS (SELECT 1 FROM p WHERE p.k =
    t.c)`` becomes ``t.c IN (SELECT p.k FROM p)``. The two agree wherever the kinds use
    it, after ``t.c IS NOT NULL``: ClickHouse's ``IN`` skips the NULLs of its set
    (``transform_null_in=0``, the default), so a NULL parent key matches nothing in
    either form. Any other ``EXISTS`` is left as written. A number literal a double
    cannot hold becomes an exact decimal (``_exact_decimal``).
    """

    def rewrite(node: exp.Expr) -> exp.Expr:
        if not isinstance(node, exp.Exists) or not isinstance(node.this, exp.Select):
            return node
        inner = node.this
        where = inner.args.get("where")
        from_ = inner.args.get("from_")
        if where is None or from_ is None or inner.args.get("joins") or len(inner.expressions) != 1:
            return node
        match = where.this
        if not isinstance(match, exp.EQ):
            return node
        own = from_.this.alias_or_name
        left, right = match.this, match.expression
        if not (isinstance(left, exp.Column) and isinstance(right, exp.Column)):
            return node
        if right.table == own and left.table != own:
            left, right = right, left
        if left.table != own or right.table == own:
            return node
        keys = exp.select(left.copy()).from_(from_.this.copy())
        return exp.In(this=right.copy(), query=exp.Subquery(this=keys))

    return tree.transform(rewrite).transform(_exact_decimal)


def _exact_decimal(node: exp.Expr) -> exp.Expr:
    """A number literal a double cannot hold, as ``toDecimal128('text', scale)``.

    ClickHouse reads every literal with a fraction as ``Float64`` ("Literals"), so a
    bound such as ``12345678901234567890.1234567889`` would compare as the double next to
    it; as a decimal it compares exactly (a float or integer column compares with a
    decimal too). Literals of at most 38 digits only: ``Decimal128``'s precision.
    """
    if not isinstance(node, exp.Literal) or node.is_string:
        return node
    text = node.name
    try:
        exact = Decimal(text)
    except InvalidOperation:
        return node
    digits = exact.as_tuple()
    scale = -int(digits.exponent) if isinstance(digits.exponent, int) else 0
    if scale <= 0 or len(digits.digits) > 38 or Decimal(repr(float(exact))) == exact:
        return node
    return exp.Anonymous(
        this="toDecimal128",
        expressions=[exp.Literal.string(text), exp.Literal.number(scale)],
    )
