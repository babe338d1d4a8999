"""The review app on the open network: Host, Origin, revocable sessions, login limits, proxies."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
from fastapi.testclient import TestClient

from tests.worker.web.web_support import (
    PASSWORD,
    LiveServer,
    World,
    app_for,
    csrf_of,
    login,
)


def _first_run(world: World) -> int:
    return next(iter(world.runs.values()))[0]


def test_a_rebinding_page_cannot_read_or_act_in_local_mode(web_world: World) -> None:
    local = TestClient(app_for(web_world, local=True), client=("127.0.0.1", 50000))
    run = _first_run(web_world)
    assert local.get("/api/me").json()["name"] == "local"
    evil = {"Host": "rebind.attacker.example:8000"}
    assert local.get("/", headers=evil).status_code == 400
    assert local.get("/api/board", headers=evil).status_code == 400
    token = csrf_of(local.get(f"/runs/{run}").text)
    posted = local.post(
        f"/runs/{run}/actions",
        data={"csrf_token": token, "kind": "resolve", "reason": "fixed"},
        headers=evil,
        follow_redirects=False,
    )
    assert posted.status_code == 400
    assert local.get("/healthz", headers=evil).status_code == 200  # probes use addresses


def test_a_post_from_another_origin_is_refused_in_every_mode(web_world: World) -> None:
    run = _first_run(web_world)
    for client in (
        TestClient(app_for(web_world, local=True), client=("127.0.0.1", 50000)),
        TestClient(app_for(web_world)),
    ):
        if client.get("/api/me").status_code == 401:
            login(client)
        token = csrf_of(client.get(f"/runs/{run}").text)
        form = {"csrf_token": token, "kind": "comment", "comment": "from elsewhere"}
        for origin in ("http://attacker.example", "null"):
            refused = client.post(
                f"/runs/{run}/actions", data=form, headers={"Origin": origin},
                follow_redirects=False,
            )  # fmt: skip
            assert refused.status_code == 403, refused.text
        cross = client.post(
            f"/runs/{run}/actions", data=form, headers={"Sec-Fetch-Site": "cross-site"},
            follow_redirects=False,
        )  # fmt: skip
        assert cross.status_code == 403
        same = client.post(
            f"/runs/{run}/actions", data=form, headers={"Origin": "http://testserver"},
            follow_redirects=False,
        )  # fmt: skip
        assert same.status_code == 303


def test_logout_ends_the_session_for_a_copied_cookie_too(web_world: World) -> None:
    app = app_for(web_world)
    client = TestClient(app)
    token = login(client)
    copied = dict(client.cookies)
    assert client.get("/api/me").json()["name"] == "alice"
    client.post("/logout", data={"csrf_token": token}, follow_redirects=False)
    replay = TestClient(app, cookies=copied)
    assert replay.get("/api/me").status_code == 401
    run = _first_run(web_world)
    posted = replay.post(
        f"/api/runs/{run}/actions",
        json={"kind": "comment", "comment": "replayed"},
        headers={"X-CSRF-Token": token},
    )
    assert posted.status_code == 401


def _try(client: TestClient, password: str) -> httpx.Response:
    token = csrf_of(client.get("/login").text)
    return client.post(
        "/login",
        data={"username": "alice", "password": password, "csrf_token": token, "next": "/"},
        follow_redirects=False,
    )


def test_failed_logins_back_off_per_client_and_user(web_world: World) -> None:
    app = app_for(web_world)
    guesser = TestClient(app, client=("203.0.113.7", 40000))
    statuses = [_try(guesser, f"guess {n}").status_code for n in range(6)]
    assert statuses == [401] * 5 + [401]  # the sixth failure starts the backoff
    blocked = _try(guesser, PASSWORD)  # even the right password waits now
    assert blocked.status_code == 429 and int(blocked.headers["Retry-After"]) >= 1
    elsewhere = TestClient(app, client=("198.51.100.9", 40000))
    # a guesser elsewhere never locks the user out: the user name alone is no key
    assert _try(elsewhere, PASSWORD).status_code == 303
    other_user = TestClient(app, client=("198.51.100.9", 40001))
    token = csrf_of(other_user.get("/login").text)
    bob = other_user.post(
        "/login",
        data={"username": "bob", "password": PASSWORD, "csrf_token": token, "next": "/"},
        follow_redirects=False,
    )
    assert bob.status_code == 303


@pytest.mark.slow
def test_a_shared_client_address_backs_off_only_after_many_failures(web_world: World) -> None:
    proxy = TestClient(app_for(web_world), client=("192.0.2.1", 40000))
    token = csrf_of(proxy.get("/login").text)

    def attempt(user: str, password: str) -> int:
        return proxy.post(
            "/login",
            data={"username": user, "password": password, "csrf_token": token, "next": "/"},
            follow_redirects=False,
        ).status_code

    assert [attempt(f"nobody{n}", "x") for n in range(50)] == [401] * 50
    assert attempt("nobody50", "x") == 401  # the 51st failure starts the client's backoff
    assert attempt("alice", PASSWORD) == 429


@pytest.mark.slow
def test_a_login_flood_does_not_stop_healthz(web_world: World) -> None:
    with LiveServer(app_for(web_world)) as server, httpx.Client(base_url=server.url) as probe:
        stop = threading.Event()
        codes: list[int] = []

        def flood(n: int) -> None:
            with httpx.Client(base_url=server.url, timeout=30) as client:
                page = client.get("/login").text
                for _ in range(5):
                    if stop.is_set():
                        return
                    answer = client.post(
                        "/login",
                        data={"username": f"u{n}", "password": "x", "csrf_token": csrf_of(page)},
                    )
                    codes.append(answer.status_code)

        with ThreadPoolExecutor(max_workers=40) as pool:
            futures = [pool.submit(flood, n) for n in range(40)]
            health = [probe.get("/healthz", timeout=10).status_code for _ in range(5)]
            stop.set()
            for future in futures:
                future.result()
    assert health == [200] * 5
    assert 429 in codes  # past two password checks at once, a login is refused at once
    assert set(codes) <= {401, 429}


@pytest.mark.parametrize("proxied", [True, False])
def test_behind_a_tls_proxy_the_cookie_is_secure_and_hsts_is_sent(
    web_world: World, proxied: bool
) -> None:
    review = web_world.settings.review.model_copy(
        update={"trusted_proxies": ["127.0.0.1"] if proxied else []}
    )
    settings = web_world.settings.model_copy(update={"review": review})
    world = World(settings, web_world.store, web_world.runs)
    client = TestClient(app_for(world), client=("127.0.0.1", 50000))
    answer = client.get("/login", headers={"X-Forwarded-Proto": "https"})
    cookie = answer.headers["set-cookie"].lower()
    assert ("secure" in cookie) is proxied
    assert (answer.headers.get("strict-transport-security") == "max-age=31536000") is proxied


@pytest.mark.parametrize("bad", ["99999999999999999999999", "abc", "0", "-1"])
def test_a_bad_run_id_is_a_404(web_world: World, bad: str) -> None:
    client = TestClient(app_for(web_world))
    login(client)
    api = client.get(f"/api/runs/{bad}")
    assert api.status_code == 404 and api.json()["detail"] == f"no run with id {bad}"
    assert client.get(f"/runs/{bad}").status_code == 404
    assert client.get(f"/api/runs/{bad}/trace").status_code == 404
