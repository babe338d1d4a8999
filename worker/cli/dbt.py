"""``lookout dbt import MANIFEST --source NAME --out DIR``: a dbt project's tests as automations.

Reads the manifest (``checks.dbt``), writes one automation file per relation,
owner and tags to ``DIR``, loads what it wrote back through the automation
loader (a file it wrote that does not load is a bug, said as an error), and
prints what it wrote and every test it did not translate, with the reason.
Registered on the main app by ``register(app)``.

Exit status: 0 written (untranslated tests are listed, not an error); 2 the
manifest cannot be read, the source is not configured (with the closest
name), or a written file does not load.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.text import Text

from checks.errors import ConfigError
from worker.cli.safe_text import SafeConsole

out = SafeConsole(highlight=False)

dbt_app = typer.Typer(
    help="dbt projects: their tests as Lookout automations.", no_args_is_help=True
)


def register(app: typer.Typer) -> None:
    """Add the ``dbt`` command group to the main ``lookout`` app."""
    app.add_typer(dbt_app, name="dbt")


@dbt_app.command("import")
def import_(
    ctx: typer.Context,
    manifest: Annotated[Path, typer.Argument(help="dbt's target/manifest.json.")],
    source: Annotated[str, typer.Option("--source", help="The source the automations read.")],
    out_dir: Annotated[Path, typer.Option("--out", help="Folder to write the automations to.")],
    schema: Annotated[
        str | None,
        typer.Option("--schema", help="The schema the source reads (default: most tests')."),
    ] = None,
) -> None:
    """Write automations whose checks judge as the project's dbt tests do (docs/dbt.md)."""
    from checks.automation.loader import load_automations
    from checks.dbt import import_manifest
    from checks.fields.rules import did_you_mean

    obj: Any = ctx.obj
    known = list(obj.settings().sources) if hasattr(obj, "settings") else []
    if source not in known:
        names = ", ".join(sorted(known)) or "none are configured"
        raise ConfigError(
            f"unknown source {source!r}{did_you_mean(source, known)}; known: {names}",
            field="--source",
        )
    result = import_manifest(manifest, source, out_dir, schema)
    loaded = load_automations(out_dir, known_sources=known)
    written = {str(p) for p in result.written}
    problems = [e for e in loaded.errors if e.path in written]
    for problem in problems:
        out.print(Text(f"error: {problem}"))
    out.print(
        Text(
            f"wrote {len(result.automations)} automations ({result.checks} checks) to {out_dir}"
            f" from {manifest} (dbt {result.manifest.dbt_version}, schema {result.schema})"
        )
    )
    for automation in result.automations:
        out.print(Text(f"  {automation.file_name}: {_checks(len(automation.checks))}"))
    if result.untranslated:
        out.print(Text(f"not translated: {len(result.untranslated)} (run them with dbt)"))
        for item in result.untranslated:
            out.print(Text(f"  {item.line}"))
    if problems:
        raise typer.Exit(2)


def _checks(count: int) -> str:
    return f"{count} check" if count == 1 else f"{count} checks"
