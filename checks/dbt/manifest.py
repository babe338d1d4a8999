"""A dbt project's ``manifest.json``: its relations, its data tests and its sources' freshness.

The file is validated by dbt-artifacts-parser against the manifest schema it
declares; only v12 (https://schemas.getdbt.com/dbt/manifest/v12.json, written
by dbt 1.8 to 1.11) is read, since the fields below are read as v12 names them.
What the importer needs is then read into small frozen records, so the rest of
``checks/dbt/`` never sees the parser's models:

- ``Relation``: a model, seed, snapshot or source table, by its unique id, with
  the relation dbt builds or reads (database, schema, alias or identifier), its
  ``meta.owner`` and tags.
- ``DataTest``: a test node: its generic test (name, namespace, arguments) or
  none (a singular test), the relation it is attached to, and its config
  (severity, ``warn_if``, ``error_if``, ``where``, ``fail_calc``, ``limit``).
- ``Freshness``: a source table's ``loaded_at_field`` and ``freshness``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from checks.errors import ConfigError

SCHEMA_V12 = "https://schemas.getdbt.com/dbt/manifest/v12.json"
_RELATION_NODES = ("model", "seed", "snapshot")
_REF = re.compile(r"""\bref\(\s*['"]([^'"]+)['"]\s*(?:,\s*['"]([^'"]+)['"]\s*)?[,)]""")
_UNION_MEMBER = re.compile(r"[A-Z][A-Za-z]*\d*")  # dbt-artifacts-parser's Nodes4, Sources
_SOURCE = re.compile(r"""\bsource\(\s*['"]([^'"]+)['"]\s*,\s*['"]([^'"]+)['"]\s*\)""")


@dataclass(frozen=True)
class Relation:
    """A table dbt builds (model, seed, snapshot) or reads (a source table).

    ``name`` is the model's name, or ``source_name.table`` for a source table;
    ``identifier`` is the relation's own name (a model's alias, a source's
    identifier), the table Lookout reads.
    """

    unique_id: str
    resource: str
    name: str
    database: str | None
    schema: str
    identifier: str
    owner: str | None
    tags: tuple[str, ...]

    @property
    def relation_name(self) -> str:
        """``database.schema.identifier`` as dbt names it, without quotes."""
        return ".".join(p for p in (self.database, self.schema, self.identifier) if p)


@dataclass(frozen=True)
class DataTest:
    """One test node: a generic test's name and arguments, or a singular test (no name)."""

    unique_id: str
    name: str
    test_name: str | None
    namespace: str | None
    kwargs: dict[str, Any]
    column: str | None
    relation_id: str | None
    depends_on: tuple[str, ...]
    severity: str
    warn_if: str
    error_if: str
    where: str | None
    fail_calc: str
    limit: int | None
    owner: str | None
    tags: tuple[str, ...]

    @property
    def qualified_name(self) -> str:
        """``dbt_utils.recency``, ``not_null``: the test as a schema file names it."""
        if self.test_name is None:
            return "a singular test"
        return f"{self.namespace}.{self.test_name}" if self.namespace else self.test_name


@dataclass(frozen=True)
class Freshness:
    """A source table's freshness: ``loaded_at_field`` and each threshold as (count, period)."""

    relation_id: str
    loaded_at_field: str | None
    warn_after: tuple[int, str] | None
    error_after: tuple[int, str] | None
    filter: str | None
    loaded_at_query: str | None


@dataclass(frozen=True)
class Manifest:
    """What the importer reads of one manifest (``adapter``: dbt's adapter type, ``duckdb``)."""

    path: str
    dbt_version: str
    project: str
    adapter: str
    relations: dict[str, Relation] = field(default_factory=dict)
    tests: list[DataTest] = field(default_factory=list)
    freshness: list[Freshness] = field(default_factory=list)

    def resolve(self, text: str, package: str | None = None) -> Relation | None:
        """The relation a ``ref('x')`` or ``source('a', 'b')`` text names, or None."""
        found = _SOURCE.search(text)
        if found:
            wanted = f"{found.group(1)}.{found.group(2)}"
            return _one(
                r for r in self.relations.values() if r.resource == "source" and r.name == wanted
            )
        found = _REF.search(text)
        if found is None:
            return None
        pkg, name = (found.group(1), found.group(2)) if found.group(2) else (None, found.group(1))
        return _one(
            r
            for r in self.relations.values()
            if r.resource != "source"
            and r.name == name
            and (pkg is None or r.unique_id.split(".")[1] == pkg)
        )


def _one(relations: Any) -> Relation | None:
    found = list(relations)
    return found[0] if len(found) == 1 else None


def read_manifest(path: str | Path) -> Manifest:
    """Read and validate a dbt ``manifest.json`` (schema v12).

    Raises:
        ConfigError: the file cannot be read, is not JSON, not a dbt manifest, of
            another schema version than v12, or does not match v12 (the first
            field dbt-artifacts-parser refused), with the file's path.
    """
    where = str(path)
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as error:
        raise ConfigError(f"cannot read the manifest: {error.strerror}", path=where) from None
    except ValueError as error:
        raise ConfigError(f"not JSON: {error}", path=where) from None
    metadata = data.get("metadata") if isinstance(data, dict) else None
    version = metadata.get("dbt_schema_version") if isinstance(metadata, dict) else None
    if not isinstance(version, str):
        raise ConfigError("not a dbt manifest (no metadata.dbt_schema_version)", path=where)
    if version != SCHEMA_V12:
        raise ConfigError(
            f"manifest schema {version} is not read; Lookout reads {SCHEMA_V12} "
            "(dbt 1.8 to 1.11): run dbt parse with one of them",
            path=where,
        )
    return _records(where, _validated(data, where))


def _validated(data: dict[str, Any], where: str) -> dict[str, Any]:
    """The manifest as dbt-artifacts-parser's v12 model dumps it (aliases as in the file)."""
    try:
        from dbt_artifacts_parser.parser import parse_manifest
    except ImportError:
        raise ConfigError(
            "reading a dbt manifest needs dbt-artifacts-parser: pip install 'lookout[dbt]'",
            path=where,
        ) from None
    from pydantic import ValidationError

    try:
        parsed = parse_manifest(data)
    except ValidationError as error:
        errors = error.errors()
        # a node is a union of one model per resource type: a missing field says most
        first = next((e for e in errors if e["type"] == "missing"), errors[0])
        at = ".".join(str(p) for p in first["loc"] if not _UNION_MEMBER.fullmatch(str(p)))
        raise ConfigError(
            f"not a valid v12 manifest: {first['msg']}", path=where, field=at
        ) from None
    dumped: dict[str, Any] = parsed.model_dump(mode="json", by_alias=True)
    return dumped


def _records(where: str, data: dict[str, Any]) -> Manifest:
    metadata = data["metadata"]
    manifest = Manifest(
        path=where,
        dbt_version=str(metadata.get("dbt_version") or "unknown"),
        project=str(metadata.get("project_name") or ""),
        adapter=str(metadata.get("adapter_type") or ""),
    )
    for unique_id, node in (data.get("nodes") or {}).items():
        if node["resource_type"] in _RELATION_NODES:
            manifest.relations[unique_id] = _relation(unique_id, node, node["name"])
    for unique_id, node in (data.get("sources") or {}).items():
        name = f"{node['source_name']}.{node['name']}"
        manifest.relations[unique_id] = _relation(unique_id, node, name)
        manifest.freshness.append(_freshness(unique_id, node))
    for unique_id, node in (data.get("nodes") or {}).items():
        if node["resource_type"] == "test":
            manifest.tests.append(_test(manifest, unique_id, node))
    manifest.tests.sort(key=lambda t: t.unique_id)
    return manifest


def _owner(node: dict[str, Any]) -> str | None:
    config = node.get("config") or {}
    for meta in (config.get("meta") or {}, node.get("meta") or {}):
        owner = meta.get("owner")
        if isinstance(owner, str) and owner.strip():
            return owner.strip()
    return None


def _tags(node: dict[str, Any]) -> tuple[str, ...]:
    config = node.get("config") or {}
    tags = set(node.get("tags") or []) | set(config.get("tags") or [])
    return tuple(sorted(str(t) for t in tags))


def _relation(unique_id: str, node: dict[str, Any], name: str) -> Relation:
    identifier = node.get("identifier") or node.get("alias") or node["name"]
    return Relation(
        unique_id=unique_id,
        resource=str(node["resource_type"]),
        name=name,
        database=node.get("database"),
        schema=str(node["schema"]),
        identifier=str(identifier),
        owner=_owner(node),
        tags=_tags(node),
    )


def _threshold(value: Any) -> tuple[int, str] | None:
    if not isinstance(value, dict) or value.get("count") is None or value.get("period") is None:
        return None
    return int(value["count"]), str(value["period"])


def _freshness(unique_id: str, node: dict[str, Any]) -> Freshness:
    config = node.get("config") or {}
    rule = node.get("freshness") or config.get("freshness") or {}
    return Freshness(
        relation_id=unique_id,
        loaded_at_field=node.get("loaded_at_field") or config.get("loaded_at_field"),
        warn_after=_threshold(rule.get("warn_after")),
        error_after=_threshold(rule.get("error_after")),
        filter=rule.get("filter"),
        loaded_at_query=node.get("loaded_at_query") or config.get("loaded_at_query"),
    )


def _test(manifest: Manifest, unique_id: str, node: dict[str, Any]) -> DataTest:
    config = node.get("config") or {}
    metadata = node.get("test_metadata") or {}
    kwargs = dict(metadata.get("kwargs") or {})
    relation_id = node.get("attached_node")
    if relation_id is None and isinstance(kwargs.get("model"), str):
        found = manifest.resolve(kwargs["model"])  # a source's test has no attached node
        relation_id = found.unique_id if found else None
    limit = config.get("limit")
    return DataTest(
        unique_id=unique_id,
        name=str(node["name"]),
        test_name=metadata.get("name"),
        namespace=metadata.get("namespace"),
        kwargs=kwargs,
        column=node.get("column_name") or kwargs.get("column_name"),
        relation_id=relation_id,
        depends_on=tuple((node.get("depends_on") or {}).get("nodes") or []),
        severity=str(config.get("severity") or "error").lower(),
        warn_if=str(config.get("warn_if") or "!= 0"),
        error_if=str(config.get("error_if") or "!= 0"),
        where=config.get("where"),
        fail_calc=str(config.get("fail_calc") or "count(*)"),
        limit=int(limit) if limit is not None else None,
        owner=_owner(node),
        tags=_tags(node),
    )
