"""``lookout suggest --goals`` against a real server: llama-cpp-python serving SmolLM2-135M.

Skipped unless ``make test-llm`` set ``LOOKOUT_TEST_LLM_PYTHON`` (the server
fixture is ``test_real_server``'s). The model is weak: the test asserts the
rule, never its prose: whatever it writes, a goal or instructions that stand
cite only the profile's numbers, anything else is refused with the reason,
and the file written still loads as an automation.
"""

from __future__ import annotations

import datetime as dt
import os
import re
from pathlib import Path

import pytest

from checks.automation.loader import load_automations
from checks.settings.config import Settings
from checks.settings.llm import LLMSettings
from checks.sources import Source
from checks.suggest.goals import ask_goal, facts
from checks.suggest.profile_numbers import unsupported
from checks.suggest.source_pass import suggest_source
from checks.suggest.yaml_writer import file_name, render
from tests.llm.test_real_server import server as server

pytestmark = [
    pytest.mark.llm,
    pytest.mark.skipif(
        not os.environ.get("LOOKOUT_TEST_LLM_PYTHON"),
        reason="make test-llm sets LOOKOUT_TEST_LLM_PYTHON",
    ),
]
REFUSAL = re.compile(
    r"(goal cites|instructions cite) .+, not in the profile: .+|(goal|instructions): .+"
    r"|the model did not call write_goal|write_goal's arguments are not .+"
)


def test_real_model_goals_cite_only_the_profile(
    server: str, tmp_path: Path, flights_source: Source, flights_settings: Settings
) -> None:
    llm = LLMSettings(
        base_url=server, model="smollm2", timeout_s=120, max_retries=1, max_output_tokens=192
    )
    settings = flights_settings.model_copy(update={"llm": llm})
    found = suggest_source(flights_source, ["airlines"], now=dt.datetime.now(dt.UTC))
    (table,) = found.tables
    written = ask_goal(table.profile, table.suggestions, settings)
    known = facts(table.profile, table.suggestions)
    for text in written.fields.values():
        assert unsupported(text, known) == []
    assert all(REFUSAL.fullmatch(line) for line in written.refused), written.refused
    assert set(written.fields) in ({"goal", "instructions"}, {"goal"}, set())
    text = render("flights", "airlines", table.suggestions, ["test"], written.fields)
    (tmp_path / file_name("flights", "airlines")).write_text(text, encoding="utf-8")
    loaded = load_automations(tmp_path, known_sources={"flights"})
    assert loaded.errors == [] and len(loaded.automations) == 1
