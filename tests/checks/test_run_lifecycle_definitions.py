"""What a run stores as its automation's definition loads back as exactly the same automation.

The service runs an automation from the definition stored with its run (the
dispatcher and ``lookout run-now`` store it; the worker loads it back), so any
automation ``lookout run`` accepts must survive that trip unchanged: every
shipped example, every eval case, every YAML example of the README and
``docs/``, and every typed kind with every option
(``tests/data/every_option/``). Each is stored through the run lifecycle's own
first step (``Store.start_run``), read back from the store, validated again and
compared with the original.
"""

from __future__ import annotations

import datetime as dt
import re
import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml

from checks.automation.loader import load_automations
from checks.automation.model import Automation
from checks.eval.runner import default_suite_path
from checks.eval.suite import load_suite
from checks.store.store import Store
from tests.paths import DATA, ROOT
from tests.shipped import shipped_files

EVERY_OPTION = DATA / "every_option"
SLOT = dt.datetime(2026, 12, 1, 9, 0, tzinfo=dt.UTC)


def doc_examples() -> list[str]:
    """The README's and ``docs/``'s YAML examples that are automations or a list of checks.

    A bare ``checks:`` mapping or list is wrapped into an automation of the
    ``flights`` source, so that its checks are loaded as written.
    """
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("**/*.md"))]
    found: list[str] = []
    for page in (p for p in pages if p.exists()):
        for block in re.findall(r"```yaml\n(.*?)```", page.read_text(encoding="utf-8"), re.S):
            text = textwrap.dedent(block)
            try:
                data = yaml.safe_load(text)
            except yaml.YAMLError:
                continue
            if isinstance(data, list) and all(isinstance(c, dict) and "name" in c for c in data):
                data = {"checks": data}
            if not isinstance(data, dict):
                continue
            if "source" in data and "name" in data:
                found.append(text)
            elif set(data) == {"checks"}:
                wrapped = {"name": f"doc-example-{len(found)}", "source": "flights", **data}
                found.append(yaml.safe_dump(wrapped, sort_keys=False))
    return found


def automations(tmp_path: Path) -> list[Automation]:
    """Every automation the round trip is tried on (see the module)."""
    found = list(load_automations(Path(ROOT / "automations")).automations)
    assert len(found) == len(shipped_files())
    found += [case.automation for case in load_suite(default_suite_path()).cases]
    loaded = load_automations(EVERY_OPTION)
    assert not loaded.errors
    found += loaded.automations
    tmp_path.mkdir()
    for i, text in enumerate(doc_examples()):
        (tmp_path / f"doc-{i}.yaml").write_text(text, encoding="utf-8")
    docs = load_automations(tmp_path)
    assert not docs.errors, docs.errors
    assert len(docs.automations) >= 3  # the first automation, the reference's, the typed checks
    return found + docs.automations


def stored_definition(store: Store, automation: Automation, slot: dt.datetime) -> dict[str, Any]:
    """Store a run of ``automation`` as the lifecycle starts one; its definition read back."""
    started = store.start_run(automation.name, slot, lease_s=60, definition=automation.definition())
    assert started is not None
    report = store.get_run(started[0])
    assert report is not None
    return report.definition


def test_every_stored_definition_loads_back_as_the_same_automation(tmp_path: Path) -> None:
    store = Store(f"sqlite:///{tmp_path / 'store.db'}")
    everything = automations(tmp_path / "docs")
    kinds = {check.kind for a in everything for check in a.checks}
    assert kinds >= {"sql", "row_count", "missing", "duplicates", "accepted_values"}
    assert kinds >= {"relationships", "freshness", "range", "schema"}
    try:
        for i, automation in enumerate(everything):
            definition = stored_definition(store, automation, SLOT + dt.timedelta(minutes=i))
            again = Automation.model_validate(
                {**definition, "path": automation.path, "line": automation.line}
            )
            assert again == automation, automation.name
            assert again.definition() == definition, automation.name
    finally:
        store.close()


@pytest.mark.parametrize("max_age", ["3h", "400d", 90])
def test_a_freshness_check_written_with_max_age_loads_back(max_age: str | int) -> None:
    written = {
        "name": "fresh",
        "source": "flights",
        "goal": "g",
        "checks": [{"name": "f", "freshness": {"table": "t", "column": "c", "max_age": max_age}}],
    }
    automation = Automation.model_validate({**written, "path": "a.yaml", "line": 1})
    [check] = automation.definition()["checks"]
    assert "expect" not in check  # max_age is its expectation
    again = Automation.model_validate({**automation.definition(), "path": "a.yaml", "line": 1})
    assert again == automation
    assert again.checks[0].expectation == automation.checks[0].expectation
