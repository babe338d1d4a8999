"""The report page says what a run did: checks that never ran, and ages as durations."""

from __future__ import annotations

import html
import re
from typing import Any

from fastapi.testclient import TestClient

from checks.automation.model import Automation
from checks.declared.wording import duration
from checks.report import Status
from checks.run import SourcePool
from checks.run_lifecycle import run_and_store
from tests.worker.web.web_support import World, app_for, login


def automation(name: str, source: str, checks: list[dict[str, Any]]) -> Automation:
    return Automation.model_validate(
        {"name": name, "source": source, "checks": checks, "path": f"{name}.yaml", "line": 1}
    )


def page_of(world: World, run_id: int) -> str:
    client = TestClient(app_for(world))
    login(client)
    return html.unescape(client.get(f"/runs/{run_id}").text)


def test_an_errored_run_before_its_checks_says_they_did_not_run(web_world: World) -> None:
    checks = [
        {"name": f"check {i}", "sql": "SELECT count(*) FROM flights", "expect": "> 0"}
        for i in range(14)
    ]
    fourteen = automation("unreachable", "no-such-source", checks)
    with SourcePool(web_world.settings) as pool:
        report = run_and_store(fourteen, web_world.settings, pool, web_world.store)
    assert report.status == Status.ERROR and report.checks == []
    page = page_of(web_world, report.run_id or 0)
    assert "This run ended before any of its 14 declared checks ran." in page
    assert "declares no checks" not in page


def test_a_freshness_age_reads_as_a_duration_as_in_the_terminal(web_world: World) -> None:
    fresh = automation(
        "fresh-flights",
        "flights",
        [
            {
                "name": "fresh",
                "freshness": {"table": "flights", "column": "time_hour", "max_age": "3h"},
            }
        ],
    )
    with SourcePool(web_world.settings) as pool:
        report = run_and_store(fresh, web_world.settings, pool, web_world.store)
    [check] = report.checks
    assert isinstance(check.value, float)
    page = page_of(web_world, report.run_id or 0)
    cells = re.findall(r'<td class="value">([^<]*)</td>', page)
    assert cells == [duration(check.value)]  # e.g. 4721d 23h
    assert f"age_s {duration(check.value)}" in page
    assert str(check.value) not in re.sub(r"<[^>]+>", "", page)  # only in the chart's data
