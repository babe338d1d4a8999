"""The review pages over runs made by the real run path: the list, a report, and the actions."""

from __future__ import annotations

import datetime as dt
import html
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from checks.report import Status
from checks.settings.config import Settings
from tests.worker.web.web_support import (
    PROBLEM_ROWS,
    Sent,
    World,
    app_for,
    bearer,
    build_problem_world,
    login,
)


def client_for(world: World, **options: object) -> tuple[TestClient, str]:
    client = TestClient(app_for(world, **options))
    return client, login(client)


def rows_of(page: str) -> list[str]:
    """The automations of the list's rows, in order."""
    return re.findall(r'<tr class="row[^"]*" data-run="\d+" data-automation="([^"]+)"', page)


def test_the_list_has_one_row_per_incident_or_latest_report_most_urgent_first(
    web_world: World,
) -> None:
    client, _ = client_for(web_world)
    page = client.get("/").text
    assert rows_of(page) == ["hot-weather", "planes-registry", "broken-check", "cancellation-rate"]
    assert f'data-run="{web_world.latest("planes-registry")}"' in page  # the incident's newest run
    assert "Act now" in page and "Worth a look" in page
    assert "Double-check disagrees" in page and "Changed since last run" in page
    assert "failed (ops-slack)" in page  # the refused alert
    assert "incident #" in page
    assert "fleet-data" in page and "flights" in page


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("f=disagreements", ["planes-registry"]),
        ("f=changed", ["cancellation-rate"]),
        ("f=needs_me", ["hot-weather", "planes-registry", "broken-check"]),
        ("f=delivery_failed", ["planes-registry"]),
        ("f=unreviewed", ["hot-weather", "planes-registry", "broken-check", "cancellation-rate"]),
        ("f=needs_me&f=disagreements", ["planes-registry"]),
        ("owner=fleet-data", ["planes-registry", "broken-check"]),
        ("tag=rates", ["cancellation-rate"]),
        ("source=flights&q=PLANE", ["planes-registry"]),
        ("q=100+%C2%B0F", ["hot-weather"]),  # found in the run's summary
        ("f=bogus", ["hot-weather", "planes-registry", "broken-check", "cancellation-rate"]),
    ],
)
@pytest.mark.slow
def test_quick_filters_and_facets_live_in_the_url(
    web_world: World, query: str, expected: list[str]
) -> None:
    client, _ = client_for(web_world)
    assert rows_of(client.get(f"/?{query}").text) == expected


def test_live_filtering_returns_only_the_table_and_pages_keep_the_filters(
    web_world: World,
) -> None:
    client, _ = client_for(web_world)
    partial = client.get("/?f=needs_me", headers={"HX-Request": "true", "HX-Target": "board"})
    assert partial.text.lstrip().startswith('<section id="board">')
    assert rows_of(partial.text) == ["hot-weather", "planes-registry", "broken-check"]
    api = client.get("/api/board?page_size=3&page=2", headers=bearer()).json()
    assert (api["total"], api["pages"], api["page"]) == (4, 2, 2)
    assert [r["automation"] for r in api["rows"]] == ["cancellation-rate"]


def test_a_report_page_shows_everything_and_keeps_hostile_markdown_inert(
    web_world: World,
) -> None:
    client, _ = client_for(web_world)
    run = web_world.latest("hot-weather")
    page = client.get(f"/runs/{run}").text
    summary = page[
        page.index('<div class="summary">') : page.index(
            "</div>", page.index('<div class="summary">')
        )
    ]
    assert (
        "<script" not in summary
        and "onerror=" not in summary.replace("&#34;", '"').split("&lt;img")[0]
    )
    assert "&lt;script&gt;window.__pwned = 1&lt;/script&gt;" in summary
    assert "&lt;img" in summary and "<img" not in page
    assert re.search(
        r'<a href="https://example.com/runbook" class="external" target="_blank" '
        r'rel="nofollow noopener noreferrer">runbook</a>',
        summary,
    )
    assert 'href="https://evil.example/t.png"' in summary  # the image, as a link, never loaded
    assert '<a href="#evidence-Q1" class="cite"' in summary
    assert "<script" not in page.replace('<script src="/static/htmx.min.js" defer></script>', "")
    for text in [
        "Second opinion",
        "Act now",
        "70 %",  # P(act_now)
        "5 %",  # P(goal met)
        "SELECT COUNT(*) AS hot FROM weather WHERE temp &gt; 100",
        'id="evidence-Q1"',
        "fake-model",
        "report accepted",  # the trace
        "cost unknown (no usage.cost sent; see llm.prices_usd_per_mtok) · ended: submitted",
        "Needs attention alert to ops-slack: sent",  # the timeline
        "first completed run",
    ]:
        assert text in page, text


def test_a_check_report_shows_checks_diff_and_the_failed_alert(web_world: World) -> None:
    client, _ = client_for(web_world)
    first, second = web_world.runs["planes-registry"]
    page = html.unescape(client.get(f"/runs/{second}").text)
    assert "tail numbers missing from planes" in page and "N725MQ" in page
    assert "721 rows, first 50 shown" in page
    assert f"Compared with run {first} (Needs attention)" in re.sub(r"<[^>]+>", "", page)
    assert "The evidence is the same: C1." in page
    assert "disagrees" in page and "90 %" in page
    assert "Double-check disagrees alert to ops-slack: failed: HTTP 400: invalid_blocks" in page
    assert page.count('class="tick') == 2 and "tick t-needs_attention current" in page


def test_acknowledge_assign_comment_and_resolve_are_recorded_with_who_and_when(
    web_world: World,
) -> None:
    client, csrf = client_for(web_world)
    first, run = web_world.runs["planes-registry"]
    assert "planes-registry" in rows_of(client.get("/?f=needs_me").text)

    def act(**data: str) -> str:
        response = client.post(f"/runs/{run}/actions", data={"csrf_token": csrf, **data})
        assert response.status_code == 200, response.text
        return response.text

    page = act(kind="acknowledge")
    assert "Acknowledged." in page and "Ack'd by alice" in page
    assert "planes-registry" not in rows_of(client.get("/?f=needs_me").text)
    assert "planes-registry" not in rows_of(client.get("/?f=unreviewed").text)
    act(kind="assign", assignee="bob")
    act(kind="comment", comment="Envoy again <b>bold</b>")
    page = act(kind="resolve", reason="false_positive", comment="fleet numbers, not tails")
    assert "Resolved: False positive" in page
    timeline = html.unescape(re.sub(r"<[^>]+>", "", page[page.index('id="timeline"') :]))
    for line in [
        "alice acknowledged",
        "alice assigned to bob",
        "alice commented: Envoy again <b>bold</b>",
        "alice resolved: False positive — fleet numbers, not tails",
    ]:
        assert line in timeline, line
    assert "<b>bold</b>" not in page  # the comment is text
    # the incident's earlier run shares the state: the action is on the incident
    earlier = client.get(f"/runs/{first}").text
    assert "Resolved: False positive" in earlier and "→ bob" in earlier
    [outcome] = client.get("/api/outcomes").json()
    assert outcome["run_id"] == run and outcome["reason"] == "false_positive"
    assert outcome["labelled_by"] == "alice" and outcome["finding"] == "needs_attention"
    assert outcome["goal_met"] == pytest.approx(0.9) and outcome["urgency"] == "worth_a_look"
    assert outcome["flags"] == ["double_check_disagrees"] and outcome["backend"] == "systemone"


def test_snooze_hides_a_report_from_needs_me_until_it_ends(web_world: World) -> None:
    now = [dt.datetime.now(dt.UTC)]
    client, csrf = client_for(web_world, clock=lambda: now[0])
    run = web_world.latest("hot-weather")
    client.post(f"/runs/{run}/actions", data={"csrf_token": csrf, "kind": "snooze", "snooze": "4"})
    assert "hot-weather" not in rows_of(client.get("/?f=needs_me").text)
    assert "Snoozed until" in client.get(f"/runs/{run}").text
    now[0] += dt.timedelta(hours=4, seconds=1)
    assert "hot-weather" in rows_of(client.get("/?f=needs_me").text)


def test_wrong_actions_say_why_and_change_nothing(web_world: World) -> None:
    client, csrf = client_for(web_world)
    run = web_world.latest("hot-weather")
    for data, message in [
        ({"kind": "resolve"}, "resolving needs a reason"),
        ({"kind": "comment", "comment": "  "}, "a comment needs text"),
        ({"kind": "snooze", "snooze": "9999"}, "choose how long to snooze"),
        ({"kind": "explode"}, "unknown action"),
        ({"kind": "run_now"}, "run now has its own form: POST /runs/ID/run-now"),
        (
            {"kind": "resolve", "reason": "bored"},
            "unknown resolve reason &#39;bored&#39;: the reason is one of fixed, expected, "
            "no_action_needed, false_positive",
        ),
    ]:
        response = client.post(f"/runs/{run}/actions", data={"csrf_token": csrf, **data})
        assert response.status_code == 422 and message in response.text, data
    assert client.get(f"/api/runs/{run}").json()["report"]["review"]["actions"] == 0
    missing = client.get("/runs/999999")
    assert missing.status_code == 404 and "no run with id 999999" in missing.text


def test_run_now_queues_a_run_for_the_workers_and_says_who_asked(web_world: World) -> None:
    sent = Sent()
    client, csrf = client_for(web_world, send=sent)
    run = web_world.latest("cancellation-rate")
    page = client.post(f"/runs/{run}/run-now", data={"csrf_token": csrf}).text
    [queued] = sent.runs
    assert queued.automation == "cancellation-rate" and queued.source == "flights"
    assert f"Queued run {queued.id} for the workers." in page
    assert f"ran it now (run {queued.id})" in page
    stored = web_world.store.get_run(queued.id)
    assert stored is not None and stored.status == Status.QUEUED and stored.trigger == "manual"
    broken = Sent(fail=True)
    api = TestClient(app_for(web_world, send=broken))
    result = api.post(f"/api/runs/{run}/run-now", headers=bearer())
    assert result.status_code == 202
    body = result.json()
    assert body["sent"] is False and "broker unreachable" in body["error"]
    assert "hunter2" not in body["error"]  # redacted like every error shown
    again = web_world.store.get_run(body["queued_run_id"])
    assert again is not None and again.status == Status.QUEUED  # the reaper sends it later
    assert body["action"]["actor"] == "token:ci"
    assert body["queued_run_id"] == queued.id  # still unclaimed: the same run, sent again
    working = TestClient(app_for(web_world, send=sent))
    ids = {
        working.post(f"/api/runs/{run}/run-now", headers=bearer()).json()["queued_run_id"]
        for _ in range(20)
    }
    assert ids == {queued.id}  # twenty clicks, one run
    assert [r.id for r in sent.runs] == [queued.id] * 21


@pytest.fixture
def problem_world(tmp_path: Path, flights_settings: Settings) -> Iterator[World]:
    world = build_problem_world(tmp_path, flights_settings)
    yield world
    world.store.close()


def test_the_api_says_what_is_wrong_like_the_page_and_the_page_escapes_it(
    problem_world: World,
) -> None:
    client, _ = client_for(problem_world)
    api = client.get("/api/board", headers=bearer()).json()
    assert [(r["automation"], r["severity"], r["what_is_wrong"] or "—") for r in api["rows"]] == (
        PROBLEM_ROWS
    )
    assert [r["urgency"] for r in api["rows"]] == [None] * 6
    page = client.get("/").text
    assert rows_of(page) == [name for name, _, _ in PROBLEM_ROWS]
    assert "&lt;script&gt;window.__pwned = 3&lt;/script&gt;" in page
    assert "<script>window.__pwned" not in page
    low = client.get("/api/board?page_size=2&page=3", headers=bearer()).json()
    assert [r["automation"] for r in low["rows"]] == ["no-rows-low", "clear-high"]
