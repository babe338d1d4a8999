"""Translated dbt tests as automation files: one per relation, owner and tags.

The checks of one relation go in one automation, ``dbt-<relation>`` (a model's
name, a source's ``source.table``, as a slug); a test whose ``meta.owner`` or
tags differ from its relation's goes in an automation of its own for them
(``dbt-orders-statuses``), so each automation's owner and tags are those of
every check in it. Each file starts with comments naming the manifest, the
dbt relation, the dbt test behind each check, and every test of the relation
that was not translated, with the reason.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml

from checks.dbt.manifest import Manifest, Relation
from checks.dbt.translate import Translated, Untranslated

_NOT_SLUG = re.compile(r"[^a-z0-9_-]+")
_CONTROL = re.compile(r"[\x00-\x1f\x7f\u2028\u2029\x85]")  # would end a comment line
MAX_NAME = 64  # checks.fields.rules.SLUG


@dataclass
class AutomationFile:
    """One automation to write: its name, relation, owner, tags and checks."""

    name: str
    relation: Relation
    owner: str | None
    tags: tuple[str, ...]
    checks: list[Translated] = field(default_factory=list)
    untranslated: list[Untranslated] = field(default_factory=list)

    @property
    def file_name(self) -> str:
        """``dbt-orders.yaml``."""
        return f"{self.name}.yaml"


def slug_of(text: str) -> str:
    """``text`` as an automation name: lowercase, other characters as ``-``, 64 at most."""
    cleaned = _NOT_SLUG.sub("-", text.lower()).strip("-_") or "dbt"
    return cleaned[:MAX_NAME].rstrip("-_")


def group(translated: list[Translated], untranslated: list[Untranslated]) -> list[AutomationFile]:
    """The automations the checks make (module docstring), in relation order, names unique."""
    keyed: dict[tuple[str, str | None, tuple[str, ...]], list[Translated]] = defaultdict(list)
    for item in translated:
        keyed[(item.relation.unique_id, item.owner, item.tags)].append(item)
    files: list[AutomationFile] = []
    taken: set[str] = set()
    for (_, owner, tags), items in sorted(keyed.items(), key=_order):
        relation = items[0].relation
        own = owner == relation.owner and tags == relation.tags
        extra = [] if own else [t for t in tags if t not in relation.tags] or [owner or "other"]
        name = _unique(slug_of("-".join(["dbt", relation.name.replace(".", "-"), *extra])), taken)
        files.append(AutomationFile(name, relation, owner, tags, _named_once(items)))
    first: dict[str, AutomationFile] = {}
    for automation in files:
        first.setdefault(automation.relation.unique_id, automation)
    for left in untranslated:
        if left.relation_id in first:
            first[left.relation_id].untranslated.append(left)
    return files


def _named_once(items: list[Translated]) -> list[Translated]:
    """The checks with names unique in their automation (a repeat gets ``_2``, ``_3``…)."""
    seen: set[str] = set()
    named = []
    for item in items:
        name, number = item.check["name"], 2
        while name in seen:
            name, number = f"{item.check['name'][:96]}_{number}", number + 1
        seen.add(name)
        named.append(replace(item, check={**item.check, "name": name}))
    return named


def _order(entry: tuple[tuple[str, str | None, tuple[str, ...]], list[Translated]]) -> Any:
    (relation_id, owner, tags), items = entry
    own = owner == items[0].relation.owner and tags == items[0].relation.tags
    return (relation_id, not own, owner or "", tags)


def _unique(name: str, taken: set[str]) -> str:
    candidate, number = name, 2
    while candidate in taken:
        suffix = f"-{number}"
        candidate, number = name[: MAX_NAME - len(suffix)] + suffix, number + 1
    taken.add(candidate)
    return candidate


def render(automation: AutomationFile, manifest: Manifest, source: str) -> str:
    """The automation's YAML text, its comments first."""
    relation = automation.relation
    lines = [
        f"# Imported by lookout dbt import from {manifest.path}",
        f"# (dbt {manifest.dbt_version}, manifest v12). Import again rather than edit.",
        f"# dbt {relation.resource} {relation.name}: relation {relation.relation_name}",
        "# Checks and their dbt tests:",
        *(f"#   {c.check['name']}: {c.unique_id}" for c in automation.checks),
    ]
    if automation.untranslated:
        lines.append("# Not translated (run them with dbt):")
        lines.extend(f"#   {u.line}" for u in automation.untranslated)
    document: dict[str, Any] = {
        "name": automation.name,
        "description": f"dbt tests of {relation.resource} {relation.name}"
        f" ({relation.relation_name}).",
        "source": source,
    }
    if automation.owner:
        document["owner"] = automation.owner
    document["tags"] = ["dbt", *[t for t in automation.tags if t != "dbt"]]
    document["checks"] = [c.check for c in automation.checks]
    text = yaml.safe_dump(document, sort_keys=False, allow_unicode=True, width=100)
    return "\n".join(_CONTROL.sub(_escaped, line) for line in lines) + "\n" + text


def _escaped(found: re.Match[str]) -> str:
    return repr(found.group())[1:-1]


def write(files: list[AutomationFile], manifest: Manifest, source: str, out: Path) -> list[Path]:
    """Write each automation to ``out`` (made if missing; same-named files replaced)."""
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for automation in files:
        path = out / automation.file_name
        path.write_text(render(automation, manifest, source), encoding="utf-8")
        written.append(path)
    return written
