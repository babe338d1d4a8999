"""A table's suggestions as one automation file: YAML written by PyYAML, comments added.

ruamel.yaml is not a dependency, so the file is emitted by ``yaml.safe_dump``
(names and values quoted as YAML needs) one part at a time, with comment lines
between the parts: a header, then the automation's keys, then each check
under the line of what was observed. The text is parsed back and must give
the same data, else ``ValueError`` (never a file that reads otherwise). The
header's last line holds the SHA-256 of everything else in the file
(``body_hash``): a file whose text no longer matches it was edited since.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

import yaml

from checks.suggest.rules import Suggestion

HASH_LINE = re.compile(r"^# lookout suggest: sha256 ([0-9a-f]{64})\n", re.M)
SCHEDULE = "0 6 * * *"
OWNER = "unassigned"
"""The owner placeholder: a team or person to set (the automation model takes any text)."""


def automation_name(source: str, table: str) -> str:
    """The automation's slug: ``SOURCE-TABLE-suggested``, other characters as ``-``, at most 64."""
    words = re.sub(r"[^a-z0-9_-]+", "-", f"{source}-{table}".lower()).strip("-_")
    return f"{words[:54].rstrip('-_') or 'table'}-suggested"


def file_name(source: str, table: str) -> str:
    """The file it is written to: its name and ``.yaml``."""
    return f"{automation_name(source, table)}.yaml"


def _comment(text: str) -> str:
    """One comment line: no line break or control character of a name can end it early."""
    return "# " + re.sub(r"[\x00-\x1f\x7f\u2028\u2029\x85]", " ", text)


def _dump(data: Any) -> str:
    return yaml.safe_dump(
        data, sort_keys=False, allow_unicode=True, width=100, default_flow_style=None
    )


def automation_data(
    source: str, table: str, suggestions: list[Suggestion], extra: dict[str, str] | None = None
) -> dict[str, Any]:
    """The automation as plain data (what the file must load as)."""
    data: dict[str, Any] = {
        "name": automation_name(source, table),
        "description": f"Checks suggested from the profile of table {table}.",
        "source": source,
        "schedule": SCHEDULE,
        "timezone": "UTC",
        "owner": OWNER,
        "severity": "medium",
        "tags": ["suggested"],
    }
    data.update(extra or {})
    data["checks"] = [s.check for s in suggestions]
    return data


def render(
    source: str,
    table: str,
    suggestions: list[Suggestion],
    header: list[str],
    extra: dict[str, str] | None = None,
    notes: list[str] | None = None,
) -> str:
    """The file's whole text: header (with its hash line), keys, and each check with its comment.

    ``header``: comment lines said first (the command, the profile's date);
    ``extra``: keys placed before ``checks`` (``goal``, ``instructions``);
    ``notes``: what was not suggested and why, a ``# note:`` line each above ``checks:``.

    Raises:
        ValueError: the text would not load back as the same data (a bug).
    """
    data = automation_data(source, table, suggestions, extra)
    head = {k: v for k, v in data.items() if k != "checks"}
    parts = [_dump(head), *(_comment(f"note: {n}") + "\n" for n in notes or []), "checks:\n"]
    for s in suggestions:
        parts.append(f"  {_comment(s.observed)}\n")
        if s.problem:
            parts.append(f"  {_comment('fails today: ' + s.problem)}\n")
        item = _dump([s.check])
        parts.append("".join(f"  {line}\n" for line in item.splitlines()))
    body = "".join(parts)
    if yaml.safe_load(body) != data:
        raise ValueError(f"the suggestions for {table} would not load back as written")
    top = "".join(_comment(line) + "\n" for line in header)
    return f"{top}# lookout suggest: sha256 {body_hash(top + body)}\n{body}"


def body_hash(text: str) -> str:
    """SHA-256 (hex) of a file's text without its hash line."""
    return hashlib.sha256(HASH_LINE.sub("", text, count=1).encode("utf-8")).hexdigest()


def edited(text: str) -> bool:
    """Whether a file's text differs from what its hash line says was written (no line: edited)."""
    found = HASH_LINE.search(text)
    return found is None or found.group(1) != body_hash(text)
