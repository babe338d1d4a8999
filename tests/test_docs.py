"""The documentation tells the truth beyond the README's walkthrough.

Every page of ``docs/``, the README, ``CONTRIBUTING.md`` and ``bench/README.md``:
each ``lookout`` command it shows exists with the options it writes, each
``make`` target exists, each relative link reaches a file, and each YAML
example loads as what it shows (an automation, a list of checks, or settings).
"""

from __future__ import annotations

import re
import textwrap
from pathlib import Path
from typing import Any

import pytest
import typer
import yaml

from checks.automation.loader import load_automations
from checks.settings.config import load_settings
from checks.settings.sources import DuckDBSource
from worker.cli.app import app
from worker.web.passwords import hash_password, hash_token

ROOT = Path(__file__).resolve().parents[1]
DOCS = sorted((ROOT / "docs").glob("*.md"))
PAGES = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", ROOT / "bench" / "README.md", *DOCS]
# Global options take a value; they are written before the command.
GLOBAL_WITH_VALUE = {"--config", "--automations"}
# The pages a topic's reader is sent to from the README.
EXPECTED_PAGES = {
    "agent",
    "alerts",
    "automations",
    "checks",
    "cli",
    "dbt",
    "design",
    "eval",
    "monitors",
    "review-page",
    "second-opinion",
    "security",
    "service",
    "sources",
    "engines",
    "suggest",
    "integrations",
}


def page_id(path: Path) -> str:
    return str(path.relative_to(ROOT))


def read(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def fenced(text: str, lang: str) -> list[str]:
    """A page's fenced blocks of one language, in order."""
    return [
        m.group(2)
        for m in re.finditer(r"^ *```(\w*)\n(.*?)^ *```$", text, re.S | re.M)
        if m.group(1) == lang
    ]


def command_lines(text: str) -> list[str]:
    """Every place a page writes a command: its code spans and its shell blocks' lines."""
    shell = [
        line.split(" #")[0]  # a comment is prose
        for block in fenced(text, "sh")
        for line in block.splitlines()
    ]
    without_blocks = re.sub(r"^ *```.*?^ *```$", "", text, flags=re.S | re.M)
    spans = re.findall(r"`([^`\n]+)`", without_blocks)
    return shell + spans


def lookout_invocations(text: str) -> list[list[str]]:
    """The words after each ``lookout`` that starts a command, one list per command."""
    found = []
    for line in command_lines(text):
        for m in re.finditer(r"(?:^|[\s/(])lookout((?: +[^\s#]+)*)", line):
            words = m.group(1).replace("\\|", "|").split()
            found.append(words)
    return found


def options_of(command: Any) -> set[str]:
    """A command's option names (``--json``, and ``--no-fit`` beside ``--fit``)."""
    return {opt for param in command.params for opt in (*param.opts, *param.secondary_opts)}


def option_names(words: list[str]) -> list[str]:
    """The ``--options`` among a command's words, as written (``[--json]`` is ``--json``)."""
    names = []
    for word in words:
        for part in word.strip("[]()|,.;…").split("/"):
            part = part.strip("[]()|,.;…").split("=")[0]
            if part.startswith("--"):
                names.append(part)
    return names


@pytest.mark.parametrize("page", PAGES, ids=page_id)
def test_every_lookout_command_shown_exists_with_its_options(page: Path) -> None:
    root: Any = typer.main.get_command(app)  # typer's click, a group of commands
    checked = 0
    for words in lookout_invocations(read(page)):
        while words and words[0].startswith("--"):
            option = words.pop(0)
            assert option in options_of(root) | {"--help"}, (page_id(page), option)
            if option in GLOBAL_WITH_VALUE and words:
                words.pop(0)
        if not words or not re.fullmatch(r"[a-z][a-z-]*", words[0]):
            continue  # "lookout …", "lookout --help"
        command: Any = root.commands.get(words[0])
        assert command is not None, (page_id(page), words)
        rest = words[1:]
        if hasattr(command, "commands") and rest and re.fullmatch(r"[a-z]+", rest[0]):
            sub = command.commands.get(rest[0])
            assert sub is not None, (page_id(page), words)
            command, rest = sub, rest[1:]
        for option in option_names(rest):
            assert option in options_of(command) | {"--help"}, (page_id(page), words, option)
        checked += 1
    if page.parent == ROOT / "docs" and "lookout " in read(page):
        assert checked or page.stem in {"design", "security"}, page_id(page)


@pytest.mark.parametrize("page", PAGES, ids=page_id)
def test_every_make_target_shown_exists(page: Path) -> None:
    targets = set(re.findall(r"^([a-z][a-z-]*):", read(ROOT / "Makefile"), re.M))
    for line in command_lines(read(page)):
        for target in re.findall(r"(?:^|\s)make(?: -[\w-]+(?: \S+)?)* ([a-z][a-z-]*)", line):
            assert target in targets, (page_id(page), line)


@pytest.mark.parametrize("page", PAGES, ids=page_id)
def test_every_relative_link_reaches_a_file(page: Path) -> None:
    for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", read(page)):
        if re.match(r"[a-z]+:", target):
            continue  # http(s), mailto
        assert (page.parent / target).exists(), (page_id(page), target)


def test_the_readme_links_every_docs_page() -> None:
    readme = read(ROOT / "README.md")
    assert {p.stem for p in DOCS} >= EXPECTED_PAGES
    for page in DOCS:
        if page.stem in EXPECTED_PAGES:
            assert f"](docs/{page.name})" in readme, page.name


def test_the_readme_stays_a_guide() -> None:
    assert len(read(ROOT / "README.md").splitlines()) <= 600


def settings_env(text: str) -> dict[str, str]:
    """A value for every ``${VAR}`` a settings example reads (URLs where a URL is expected).

    A PagerDuty routing key is 32 letters and digits, as the load checks.
    """
    return {
        name: "0123456789abcdef" * 2
        if name.endswith("ROUTING_KEY")
        else f"https://example.com/{name.lower()}"
        for name in re.findall(r"\$\{(\w+)\}", text)
    }


def load_as_shown(block: str, tmp_path: Path) -> None:
    """Load a YAML example as what it is: automations, a list of checks, or settings."""
    data: Any = yaml.safe_load(block)
    folder = tmp_path / "automations"
    folder.mkdir(parents=True)
    if isinstance(data, dict) and ("automations" in data or {"name", "source"} <= data.keys()):
        (folder / "example.yaml").write_text(block, encoding="utf-8")
    elif isinstance(data, list) or (isinstance(data, dict) and set(data) == {"checks"}):
        checks = data if isinstance(data, list) else data["checks"]
        wrapped = {"name": "example", "goal": "shown", "source": "flights", "checks": checks}
        (folder / "example.yaml").write_text(yaml.safe_dump(wrapped), encoding="utf-8")
    elif isinstance(data, dict) and "steps" in data:
        return  # the fake LLM's script: the README's walkthrough runs it
    else:
        config = tmp_path / "lookout.yaml"
        # an elided hash ("scrypt:…") stands for one `python -m worker.web.passwords` makes
        block = re.sub(r'"scrypt:[^"]*…"', f'"{hash_password("example")}"', block)
        block = re.sub(r'"sha256:…"', f'"{hash_token("example")}"', block)
        config.write_text(block, encoding="utf-8")
        load_settings(config, env=settings_env(block))
        return
    loaded = load_automations(folder)
    assert loaded.errors == [], loaded.errors
    assert loaded.automations


@pytest.mark.parametrize("page", PAGES, ids=page_id)
def test_every_yaml_example_loads(page: Path, tmp_path: Path) -> None:
    for number, block in enumerate(fenced(read(page), "yaml")):
        text = textwrap.dedent(block)  # inside a numbered list, or a check shown alone
        try:
            load_as_shown(text, tmp_path / str(number))
        except Exception as error:  # pragma: no cover - the message names the block
            raise AssertionError(f"{page_id(page)}, YAML block {number + 1}: {error}") from error


def test_the_duckdb_file_key_is_database_and_path_is_refused(tmp_path: Path) -> None:
    sources = read(ROOT / "docs" / "sources.md")
    assert "| `database` | path of an existing DuckDB database file (not `path:`) |" in sources
    good = tmp_path / "good.yaml"
    good.write_text("sources:\n  shop: {type: duckdb, database: shop.duckdb}\n", encoding="utf-8")
    source = load_settings(good, env={}).sources["shop"]
    assert isinstance(source, DuckDBSource)
    assert source.database == "shop.duckdb"
    bad = tmp_path / "bad.yaml"
    bad.write_text("sources:\n  shop: {type: duckdb, path: shop.duckdb}\n", encoding="utf-8")
    with pytest.raises(Exception, match=r"unknown field 'path' \(did you mean 'database'\?\)"):
        load_settings(bad, env={})
    assert "\"unknown field 'path' (did you mean 'database'?)\"" in sources
