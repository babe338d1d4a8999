"""A report whose second opinion was recalibrated shows both answers: page, API and terminal."""

from __future__ import annotations

from fastapi.testclient import TestClient

from checks.store.run_tables import RunRow
from tests.worker.web.web_support import World, app_for, bearer, login
from worker.cli.render import opinion_line

CALIBRATED = {
    "goal_met": {
        "p": 0.3,
        "raw": 0.9,
        "reviews": 57,
        "method": "isotonic",
        "fitted_at": "2026-12-01T00:00:00+00:00",
    },
    "act": {
        "p": 0.25,
        "raw": 0.8,
        "reviews": 57,
        "method": "isotonic",
        "fitted_at": "2026-12-01T00:00:00+00:00",
    },
}


def calibrate_latest(world: World, automation: str) -> int:
    run_id = world.latest(automation)
    with world.store.session() as session:
        row = session.get(RunRow, run_id)
        assert row is not None and row.second_opinion is not None
        row.second_opinion = {**row.second_opinion, "model": "jev-test", "calibrated": CALIBRATED}
    return run_id


def test_the_page_and_the_api_show_the_calibrated_answer_beside_the_raw_one(
    web_world: World,
) -> None:
    run_id = calibrate_latest(web_world, "planes-registry")
    client = TestClient(app_for(web_world))
    api = client.get(f"/api/runs/{run_id}", headers=bearer()).json()
    opinion = api["report"]["opinion"]
    assert opinion["model"] == "jev-test"
    assert opinion["calibrated"]["goal_met"] == {
        "p": 0.3,
        "raw": 0.9,
        "reviews": 57,
        "words": "calibrated on 57 reviews",
    }
    login(client)
    page = client.get(f"/runs/{run_id}").text
    assert "Goal met, calibrated" in page and "calibrated on 57 reviews" in page
    assert "Act soon or now: 80 % as answered, 25 % calibrated on 57 reviews." in page


def test_a_report_before_any_calibration_shows_none(web_world: World) -> None:
    client = TestClient(app_for(web_world))
    run_id = web_world.latest("planes-registry")
    opinion = client.get(f"/api/runs/{run_id}", headers=bearer()).json()["report"]["opinion"]
    assert opinion["calibrated"] == {}


def test_lookout_show_prints_both() -> None:
    line = opinion_line(
        {
            "backend": "systemone",
            "model": "jev",
            "goal_met": 0.9,
            "urgency": "act_soon",
            "flags": ["double_check_disagrees"],
            "calibrated": CALIBRATED,
        }
    )
    assert line == (
        "second opinion: systemone jev · goal met 90% (30% calibrated on 57 reviews) · urgency "
        "act soon · act soon or now 80% (25% calibrated on 57 reviews) · flags: double check "
        "disagrees"
    )
