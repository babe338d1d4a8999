"""The report page and its API say when a run took the pinned plan, and which run it came from."""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from checks.fakes.llm_server import FakeLLM, one_query_agent
from checks.settings.config import Settings
from tests.checks.pinned.test_pinned_runs import NEGATIVES, World, goal_only, write_orders
from tests.worker.web.test_api import metrics_of
from tests.worker.web.web_support import World as WebWorld
from tests.worker.web.web_support import app_for, bearer, login, review_settings


@pytest.mark.slow
def test_the_report_page_cites_the_plan_it_took_and_says_why_one_was_not(tmp_path: Path) -> None:
    with FakeLLM(default=one_query_agent({"no-negative-orders": NEGATIVES})) as llm:
        world = World(tmp_path, llm)
        first = world.run(goal_only())
        pinned = world.run(goal_only())
        write_orders(world.db, [(1, 10.0, False), (3, -7.5, False)])
        asked = world.run(goal_only())
    settings = Settings.model_validate(
        {**world.settings.model_dump(mode="json", by_alias=True), "review": review_settings()}
    )
    client = TestClient(app_for(WebWorld(settings, world.store)))
    login(client)
    made = first.pinning and pinned.pinning and pinned.pinning["made_at"][:16].replace("T", " ")
    page = client.get(f"/runs/{pinned.run_id}").text
    assert "Decided by the pinned plan (the LLM was not asked)." in page
    assert (
        f'Taken from the <a href="/runs/{first.run_id}">pinned plan of run {first.run_id}</a>'
        f" (fake, {made} UTC): its queries and the declared checks returned what they did then."
    ) in page
    page = client.get(f"/runs/{asked.run_id}").text
    assert (
        f'The <a href="/runs/{first.run_id}">pinned plan of run {first.run_id}</a> was not'
        " taken: a pinned query&#39;s result differs from when the plan was made."
    ) in page
    assert "<li>Q1&#39;s result changed: 0 rows when pinned, 1 row now (fingerprint " in page
    assert "This report is now the automation's pinned plan" in page
    api = client.get(f"/api/runs/{pinned.run_id}", headers=bearer()).json()["report"]
    assert api["finding_source"] == "pinned"
    assert (api["pinning"]["used"], api["pinning"]["from_run"]) == (True, first.run_id)
    decided = {
        labels: value
        for (name, labels), value in metrics_of(client).items()
        if name == "lookout_runs_decided_total"
    }
    assert decided == {(("finding_source", "agent"),): 2, (("finding_source", "pinned"),): 1}
