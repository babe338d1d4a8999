"""A source URL's password written in the config file as plain text: an error.

A password belongs in the environment, read through ``${NAME}``
(``checks.settings.config``), not in a file that is committed, copied and
shown in reviews. The rule does not ask git whether the file is tracked: a file
not committed yet usually is soon, and a deployed service has no repository to
ask. A source that must keep one literally (a throwaway local database) says
so with ``allow_plaintext_password: true``.

The rule reads the file's values as written, before ``${NAME}`` is expanded, and
never shows the password it found.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

_USERINFO_PASSWORD = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://[^/?#@:]*:([^/?#@]*)@")
_QUERY_PASSWORD = re.compile(r"(?i)[?&](?:password|passwd|pwd)=([^&#]*)")
ALLOW_KEY = "allow_plaintext_password"


def plaintext_password(url: str) -> bool:
    """Whether ``url`` as written holds a password not read from ``${NAME}``.

    ``postgresql://u:secret@h/db`` and ``…?password=secret`` do;
    ``postgresql://u:${PG_PASSWORD}@h/db``, ``postgresql://u@h/db`` and an empty
    password do not. A password partly written as ``${NAME}`` counts as read from
    the environment.
    """
    found = [m.group(1) for m in (_USERINFO_PASSWORD.match(url), _QUERY_PASSWORD.search(url)) if m]
    return any(password and "${" not in password for password in found)


def password_problems(raw: Mapping[str, Any]) -> list[tuple[tuple[str, str, str], str]]:
    """Each source of the file's raw ``sources:`` whose ``url`` holds a plain-text password.

    Returns:
        ``(("sources", NAME, "url"), message)`` per such source, in file order; the
        message says how to write it instead and never holds the password.

    """
    sources = raw.get("sources")
    if not isinstance(sources, Mapping):
        return []
    found = []
    for name, config in sources.items():
        if not isinstance(config, Mapping) or config.get(ALLOW_KEY) is True:
            continue
        url = config.get("url")
        if isinstance(url, str) and plaintext_password(url):
            found.append((("sources", str(name), "url"), _message(str(name))))
    return found


def _message(name: str) -> str:
    variable = re.sub(r"[^A-Z0-9]+", "_", name.upper()).strip("_") or "SOURCE"
    return (
        "the URL holds a password in plain text: write it as ${NAME} and set NAME in the"
        f" environment (user:${{{variable}_PASSWORD}}@host), or set {ALLOW_KEY}: true"
        " for this source"
    )
