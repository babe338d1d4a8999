"""What Amazon Redshift's own SQL must not call, beyond what the guard refuses everywhere.

Written from the Amazon Redshift Database Developer Guide: "System information
functions" (``current_user_id``, ``current_aws_account``, ``current_namespace``,
``current_session_arn``, ``default_iam_role``, ``get_mounted_role``,
``has_assumerole_privilege``, ``last_user_query_id``, ``slice_num``,
``role_is_member_of``, ``user_is_member_of``; the ``pg_*`` ones, ``has_*_privilege``,
``current_user`` and ``version`` are refused in every dialect) and "Naming UDFs"
(Redshift reserves the ``f_`` prefix for user-defined functions, so that no
built-in ever has it: a scalar UDF may be Python or call an AWS Lambda function,
code outside SQL that the guard cannot see, and is refused by that name).

``UNLOAD`` (writes to S3) is read as a command and ``COPY`` as a write by the guard
itself; the system tables and views (``STL_*``, ``STV_*``, ``SVL_*``, ``SVV_*``,
``SYS_*``, ``PG_*``) are not the source's data sets, so naming one is refused as an
unknown table (``pg_*`` and ``pg_catalog.…`` as a system catalog). A table of an
external schema (Spectrum, a federated PostgreSQL or MySQL database) is read only
when that schema is the source's own ``schema``: otherwise it is another schema.
"""

from __future__ import annotations

import re

DENIED_FUNCTIONS: tuple[tuple[str, str, re.Pattern[str]], ...] = (
    (
        "function",
        "is a user-defined function (Redshift names them f_…): a Python or Lambda UDF"
        " runs code outside SQL",
        re.compile(r"f_\w+"),
    ),
    (
        "function",
        "reads the database's own metadata",
        re.compile(
            r"current_user_id|current_aws_account|current_namespace|current_session_arn"
            r"|default_iam_role|get_mounted_role|has_assumerole_privilege|last_user_query_id"
            r"|slice_num|role_is_member_of|user_is_member_of"
        ),
    ),
)
