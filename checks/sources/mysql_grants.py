"""The grants that let a MySQL or MariaDB role write, read from ``SHOW GRANTS``.

``SHOW GRANTS`` (no ``FOR``) lists what the session's account holds: its own grants,
those of its enabled role and MariaDB's ``PUBLIC`` (which the ``information_schema``
privilege tables leave out). Every privilege but the few that only read or watch is a
way to write or change the server: ``INSERT``, ``FILE`` (``SELECT … INTO OUTFILE``),
``EXECUTE`` (a routine runs with its definer's rights), ``GRANT OPTION``, the ``*_ADMIN``
privileges, ``ALL PRIVILEGES``. Sources: MySQL 8.0 reference, "Privileges Provided by
MySQL" and "SHOW GRANTS Statement"; MariaDB knowledge base, "GRANT" and "SHOW GRANTS".
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import sqlalchemy as sa

READ_ONLY_PRIVILEGES = frozenset(
    {"SELECT", "SHOW VIEW", "SHOW DATABASES", "USAGE", "REFERENCES", "PROCESS", "LOCK TABLES",
     "REPLICATION CLIENT", "REPLICATION SLAVE", "BINLOG MONITOR", "SLAVE MONITOR",
     "REPLICA MONITOR", "SHOW CREATE ROUTINE", "SHOW_ROUTINE"}
)  # fmt: skip
"""Privileges that read or watch but change nothing (a column list aside: ``SELECT (a)``)."""

SHOWN_OBJECTS = 5
"""Objects named per privilege in a warning; the rest are counted."""

_GRANT = re.compile(
    r"GRANT (?P<privileges>.+?) ON (?:(?:TABLE|FUNCTION|PROCEDURE|PACKAGE(?: BODY)?) )?"
    r"(?P<on>\S+) TO (?P<to>\S+)(?P<rest>.*)",
    re.DOTALL,
)


def mysql_write_warnings(conn: sa.Connection) -> list[str]:
    """One sentence per privilege the session's account holds beyond reading.

    ``role reader@% holds INSERT on shop.orders, test.* (through PUBLIC)``; the objects
    are those of the ``GRANT`` lines, backticks removed.
    """
    import sqlalchemy as sa

    account = str(conn.execute(sa.text("SELECT CURRENT_USER()")).scalar_one())
    lines = [str(row[0]) for row in conn.execute(sa.text("SHOW GRANTS"))]
    held: dict[str, list[str]] = {}
    for privilege, target in write_grants(lines, account):
        held.setdefault(privilege, [])
        if target not in held[privilege]:
            held[privilege].append(target)
    return [_sentence(account, privilege, targets) for privilege, targets in held.items()]


def write_grants(lines: list[str], account: str) -> list[tuple[str, str]]:
    """Each (privilege, object) of ``SHOW GRANTS`` ``lines`` that writes, in order.

    ``account`` is ``CURRENT_USER()`` (``reader@127.0.0.1``); a line granted to another
    grantee (a role, ``PUBLIC``) names it: ``test.* (through PUBLIC)``. Lines granting a
    role or a proxy hold no privilege of their own and are skipped.
    """
    found: list[tuple[str, str]] = []
    for line in lines:
        match = _GRANT.fullmatch(line.strip())
        if match is None or match["privileges"].upper().startswith("PROXY"):
            continue
        target = _unquote(match["on"])
        grantee = _unquote(match["to"])
        if grantee != account:
            target = f"{target} (through {grantee})"
        for privilege in _privileges(match["privileges"]):
            if privilege not in READ_ONLY_PRIVILEGES:
                found.append((privilege, target))
        if "WITH GRANT OPTION" in match["rest"].upper():
            found.append(("GRANT OPTION", target))
    return found


def _privileges(text: str) -> list[str]:
    """``SELECT (`a`, `b`), UPDATE`` → ``["SELECT", "UPDATE"]``: names, column lists dropped."""
    names, depth, current = [], 0, ""
    for char in text:
        depth += (char == "(") - (char == ")")
        if char == "," and depth == 0:
            names.append(current)
            current = ""
        else:
            current += char
    names.append(current)
    return [re.sub(r"\s*\(.*\)\s*$", "", n, flags=re.DOTALL).strip().upper() for n in names]


def _unquote(name: str) -> str:
    """```shop`.`orders``` → ``shop.orders``; ```reader`@`%``` → ``reader@%``."""
    return re.sub(r"[`']", "", name)


def _sentence(account: str, privilege: str, targets: list[str]) -> str:
    shown = ", ".join(targets[:SHOWN_OBJECTS])
    more = f" and {len(targets) - SHOWN_OBJECTS} more" if len(targets) > SHOWN_OBJECTS else ""
    return f"role {account} holds {privilege} on {shown}{more}"
