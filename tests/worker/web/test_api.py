"""The JSON API, its OpenAPI schema, /healthz and /metrics — on SQLite and on PostgreSQL."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from prometheus_client.parser import text_string_to_metric_families

from checks.settings.config import Settings
from checks.store.store import Store
from tests.worker.web.web_support import World, app_for, bearer, build_world
from worker.service.run_queue import RunQueue


def metrics_of(client: TestClient) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    response = client.get("/metrics", headers=bearer())
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain")
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(response.text)
        for sample in family.samples
    }


def test_the_board_and_a_report_as_json(web_world: World) -> None:
    client = TestClient(app_for(web_world))
    board = client.get("/api/board", headers=bearer()).json()
    assert [r["automation"] for r in board["rows"]] == [
        "hot-weather",
        "planes-registry",
        "broken-check",
        "cancellation-rate",
    ]
    planes = board["rows"][1]
    assert planes["run_id"] == web_world.latest("planes-registry")
    assert planes["flags"] == ["double_check_disagrees"] and planes["urgency"] == "worth_a_look"
    assert planes["goal_met"] == pytest.approx(0.9) and planes["needs_me"] is True
    assert planes["delivery"]["state"] == "failed"
    assert planes["delivery"]["failed_channels"] == ["ops-slack"]
    assert planes["incident_kind"] == "attention" and planes["owner"] == "fleet-data"
    assert board["counts"] == {
        "needs_me": 3,
        "disagreements": 1,
        "changed": 1,
        "unreviewed": 4,
        "delivery_failed": 1,
    }
    assert board["owners"] == ["fleet-data", "ops-analytics", "weather-team"]
    run = web_world.latest("hot-weather")
    doc = client.get(f"/api/runs/{run}", headers=bearer()).json()
    report = doc["report"]
    assert report["finding"] == "needs_attention" and report["finding_source"] == "agent"
    assert report["opinion"]["urgency_probabilities"]["act_now"] == pytest.approx(0.7)
    assert report["evidence"][0]["id"] == "Q1" and report["evidence"][0]["rows"] == [[2]]
    assert report["summary"].startswith("**2 readings**")  # raw Markdown, untrusted
    assert "<script" not in doc["summary_html"] and 'rel="nofollow' in doc["summary_html"]
    assert report["incident"]["kind"] == "attention"
    assert [t["kind"] for t in report["timeline"]][:2] == ["run", "run"]
    assert report["agent"]["model"] == "fake-model"
    assert "sk-web-test-key" not in str(doc)
    trace = client.get(f"/api/runs/{run}/trace", headers=bearer()).json()
    kinds = [e["kind"] for e in trace]
    assert kinds[0] == "agent_start" and "tool_result" in kinds and kinds[-1] == "agent_end"
    assert "sk-web-test-key" not in str(trace)
    assert client.get("/api/runs/424242", headers=bearer()).status_code == 404
    assert client.get("/api/board?f=nonsense", headers=bearer()).status_code == 422


def test_actions_through_the_api(web_world: World) -> None:
    client = TestClient(app_for(web_world))
    run = web_world.latest("broken-check")
    until = (dt.datetime.now(dt.UTC) + dt.timedelta(days=1)).isoformat()
    for body in [
        {"kind": "acknowledge"},
        {"kind": "assign", "assignee": "bob"},
        {"kind": "snooze", "until": until},
        {"kind": "resolve", "reason": "fixed", "comment": "column renamed back"},
    ]:
        response = client.post(f"/api/runs/{run}/actions", json=body, headers=bearer())
        assert response.status_code == 201, response.text
        assert response.json()["actor"] == "token:ci" and response.json()["kind"] == body["kind"]
    review = client.get(f"/api/runs/{run}", headers=bearer()).json()["report"]["review"]
    assert review["acknowledged_by"] == "token:ci" and review["assignee"] == "bob"
    assert review["resolved_reason"] == "fixed" and review["actions"] == 4
    [outcome] = client.get("/api/outcomes", headers=bearer()).json()
    assert outcome["status"] == "error" and outcome["goal_met"] is None
    past = (dt.datetime.now(dt.UTC) - dt.timedelta(hours=1)).isoformat()
    for body, status in [
        ({"kind": "snooze", "until": past}, 422),
        ({"kind": "snooze", "until": "2030-01-01T00:00:00"}, 422),  # no zone
        ({"kind": "resolve", "reason": "bored"}, 422),
        ({"kind": "run_now"}, 422),  # its own endpoint
    ]:
        response = client.post(f"/api/runs/{run}/actions", json=body, headers=bearer())
        assert response.status_code == status, body
    bored = client.post(
        f"/api/runs/{run}/actions", json={"kind": "resolve", "reason": "bored"}, headers=bearer()
    )
    assert bored.json() == {
        "detail": "unknown resolve reason 'bored': the reason is one of fixed, expected, "
        "no_action_needed, false_positive"
    }


def test_the_openapi_schema_describes_the_api(web_world: World) -> None:
    client = TestClient(app_for(web_world))
    schema = client.get("/api/openapi.json", headers=bearer()).json()
    assert set(schema["paths"]) == {
        "/api/me",
        "/api/board",
        "/api/runs/{run_id}",
        "/api/runs/{run_id}/trace",
        "/api/runs/{run_id}/actions",
        "/api/runs/{run_id}/run-now",
        "/api/outcomes",
        "/healthz",
        "/metrics",
    }
    components = schema["components"]["schemas"]
    for name in ["BoardPage", "BoardRow", "ReportDocument", "ReportView", "ActionBody", "Outcome"]:
        assert name in components, name
    assert components["ActionBody"]["properties"]["reason"]


def test_metrics_are_computed_from_the_store(web_world: World) -> None:
    client = TestClient(app_for(web_world))
    metrics = metrics_of(client)
    runs = {labels: v for (name, labels), v in metrics.items() if name == "lookout_runs_total"}
    assert runs == {
        (("finding", "clear"), ("status", "completed")): 2,
        (("finding", "needs_attention"), ("status", "completed")): 3,
        (("finding", ""), ("status", "error")): 1,
    }
    assert metrics[("lookout_run_flags_total", (("flag", "double_check_disagrees"),))] == 1
    assert metrics[("lookout_run_flags_total", (("flag", "changed_since_last_run"),))] == 1
    assert metrics[("lookout_deliveries_failed_total", (("channel", "ops-slack"),))] == 1
    agent_in = metrics[
        ("lookout_llm_tokens_total", (("component", "agent"), ("direction", "input")))
    ]
    decision_in = metrics[
        ("lookout_llm_tokens_total", (("component", "decision"), ("direction", "input")))
    ]
    assert agent_in > 0 and decision_in > 0
    assert metrics[("lookout_incidents_open", (("kind", "attention"),))] == 2
    assert metrics[("lookout_queue_lag_seconds", ())] == 0
    queued = RunQueue(web_world.store).add_manual(
        "cancellation-rate", "flights", {}, now=dt.datetime.now(dt.UTC) - dt.timedelta(minutes=5)
    )
    assert queued is not None
    after = metrics_of(client)
    assert after[("lookout_runs_queued", ())] == 1
    assert 299 <= after[("lookout_queue_lag_seconds", ())] < 400


def test_an_unreachable_store_is_503_not_a_crash(web_world: World) -> None:
    dead = Store("postgresql+psycopg://nobody:pw@127.0.0.1:9/none", migrate_on_open=False)
    client = TestClient(app_for(web_world, store=dead))
    response = client.get("/healthz")
    assert response.status_code == 503 and response.json()["status"] == "unavailable"
    api = client.get("/api/board", headers=bearer())
    assert api.status_code == 503 and "cannot be reached" in api.json()["detail"]
    assert client.get("/metrics", headers=bearer()).status_code == 503
    for body in (response.text, api.text):
        assert "nobody" not in body and "pw@" not in body


@pytest.mark.slow
def test_on_postgresql(tmp_path: Path, flights_settings: Settings, empty_pg_url: str) -> None:
    world = build_world(tmp_path, flights_settings, empty_pg_url)
    client = TestClient(app_for(world))
    board = client.get("/api/board?f=disagreements", headers=bearer()).json()
    assert [r["automation"] for r in board["rows"]] == ["planes-registry"]
    run = board["rows"][0]["run_id"]
    done = client.post(
        f"/api/runs/{run}/actions",
        json={"kind": "resolve", "reason": "false_positive"},
        headers=bearer(),
    )
    assert done.status_code == 201
    needs_me = client.get("/api/board?f=needs_me", headers=bearer()).json()
    assert [r["automation"] for r in needs_me["rows"]] == ["hot-weather", "broken-check"]
    report = client.get(f"/api/runs/{run}", headers=bearer()).json()["report"]
    assert report["diff"]["previous_run_id"] == world.runs["planes-registry"][0]
    metrics = metrics_of(client)
    assert metrics[("lookout_review_outcomes_total", (("reason", "false_positive"),))] == 1
    assert metrics[("lookout_run_flags_total", (("flag", "double_check_disagrees"),))] == 1
    world.store.close()


def test_a_report_gives_each_check_its_outcome(web_world: World) -> None:
    client = TestClient(app_for(web_world))
    broken = client.get(f"/api/runs/{web_world.latest('broken-check')}", headers=bearer()).json()
    (check,) = broken["report"]["checks"]
    assert (check["outcome"], check["kind"], check["passed"]) == ("error", "sql", None)
    assert check["reason"] is None and check["sample_id"] is None
    rate = client.get(f"/api/runs/{web_world.latest('cancellation-rate')}", headers=bearer())
    assert [c["outcome"] for c in rate.json()["report"]["checks"]] == ["passed"]
