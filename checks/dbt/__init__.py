"""dbt's tests as Lookout automations: ``lookout dbt import MANIFEST --source NAME --out DIR``.

``manifest.py`` reads a dbt ``manifest.json`` (v12, through dbt-artifacts-parser);
``conditions.py`` a test's severity, ``error_if`` and ``warn_if`` as ``expect``
and ``warn``; ``translate.py`` each test as the typed check that counts what
dbt's SQL counts (``utils_tests.py`` dbt-utils' own, ``where.py`` ``where:`` and
expressions as SQL conditions); ``writer.py`` the checks as automation files, one per relation,
owner and tags. ``import_manifest`` does all four (docs/dbt.md).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from checks.dbt.manifest import Manifest, read_manifest
from checks.dbt.translate import Translated, Untranslated, translate_freshness, translate_test
from checks.dbt.writer import AutomationFile, group, write

__all__ = ["ImportResult", "import_manifest", "read_manifest", "translate"]


@dataclass(frozen=True)
class ImportResult:
    """What an import wrote and what it could not translate.

    Attributes:
        manifest: the manifest read.
        schema: the schema whose relations were translated.
        automations: the automations written, in order.
        written: their files.
        untranslated: every test (and freshness) not translated, with the reason.
    """

    manifest: Manifest
    schema: str
    automations: list[AutomationFile]
    written: list[Path]
    untranslated: list[Untranslated]

    @property
    def checks(self) -> int:
        """How many checks the automations hold."""
        return sum(len(a.checks) for a in self.automations)


def main_schema(manifest: Manifest) -> str:
    """The schema most tested relations are in (the first by name on a tie); ``main`` if none."""
    used = [
        manifest.relations[t.relation_id].schema
        for t in manifest.tests
        if t.relation_id in manifest.relations
    ]
    counts = Counter(used)
    if not counts:
        return "main"
    return sorted(counts.items(), key=lambda item: (-item[1], item[0]))[0][0]


def translate(manifest: Manifest, schema: str) -> tuple[list[Translated], list[Untranslated]]:
    """Every test and source freshness of ``manifest``, translated or not, in unique-id order."""
    translated: list[Translated] = []
    untranslated: list[Untranslated] = []
    results: list[Translated | Untranslated | None]
    results = [translate_test(manifest, test, schema) for test in manifest.tests]
    results += [translate_freshness(manifest, rule, schema) for rule in manifest.freshness]
    for result in results:
        if isinstance(result, Translated):
            translated.append(result)
        elif isinstance(result, Untranslated):
            untranslated.append(result)
    return translated, untranslated


def import_manifest(
    path: str | Path, source: str, out: str | Path, schema: str | None = None
) -> ImportResult:
    """Read ``path``, translate its tests on ``schema`` and write automations for ``source``.

    Args:
        path: the dbt ``manifest.json``.
        source: the Lookout source (``sources:`` in the config) the automations read.
        out: the folder to write them to.
        schema: the schema the source reads; default ``main_schema``.

    Raises:
        ConfigError: the manifest cannot be read (``read_manifest``).
    """
    manifest = read_manifest(path)
    chosen = schema or main_schema(manifest)
    translated, untranslated = translate(manifest, chosen)
    files = group(translated, untranslated)
    written = write(files, manifest, source, Path(out))
    return ImportResult(manifest, chosen, files, written, untranslated)
