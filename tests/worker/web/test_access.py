"""Access to the review page and API: login, tokens, the local mode, CSRF, and hashed secrets."""

from __future__ import annotations

import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import typer
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from checks.errors import ConfigError
from checks.settings.config import load_settings
from tests.paths import ROOT
from tests.worker.web.web_support import (
    PASSWORD,
    SECRET_KEY,
    TOKEN,
    LiveServer,
    World,
    app_for,
    bearer,
    csrf_of,
    login,
)
from worker.cli.app import main_options
from worker.cli.serve import check_bind, register
from worker.web.passwords import hash_password, hash_token, token_owner, verify_password
from worker.web.session import COOKIE, Session, SessionCodec, SessionRegistry

PROTECTED_API = ["/api/board", "/api/runs/1", "/api/runs/1/trace", "/api/outcomes", "/api/me"]


@pytest.mark.slow
def test_without_credentials_the_api_says_401_and_pages_send_to_login(web_world: World) -> None:
    client = TestClient(app_for(web_world))
    for path in [*PROTECTED_API, "/api/openapi.json", "/metrics"]:
        response = client.get(path)
        assert response.status_code == 401, path
        assert response.headers["www-authenticate"].startswith("Bearer"), path
    post = client.post("/api/runs/1/actions", json={"kind": "acknowledge"})
    assert post.status_code == 401
    page = client.get("/runs/3?x=1", follow_redirects=False)
    assert page.status_code == 303
    assert page.headers["location"] == "/login?next=%2Fruns%2F3%3Fx%3D1"
    boosted = client.get("/", headers={"HX-Request": "true"}, follow_redirects=False)
    assert boosted.headers["hx-redirect"] == "/login?next=%2F"
    form = client.get("/login")
    assert form.status_code == 200 and 'name="password"' in form.text
    assert client.get("/healthz").json() == {"status": "ok", "store": "ok"}  # open, says nothing


def test_login_logout_and_wrong_passwords(web_world: World) -> None:
    client = TestClient(app_for(web_world))
    token = csrf_of(client.get("/login").text)
    for user, password in [("alice", "wrong"), ("mallory", PASSWORD)]:
        response = client.post(
            "/login", data={"username": user, "password": password, "csrf_token": token}
        )
        assert response.status_code == 401
        assert "Wrong user name or password" in response.text
    assert client.get("/api/me").status_code == 401
    forged = client.post("/login", data={"username": "alice", "password": PASSWORD})
    assert forged.status_code == 403  # no CSRF token: a cross-site login is refused
    csrf = login(client)
    assert client.get("/api/me").json() == {"name": "alice", "via": "session", "role": "admin"}
    assert csrf != token  # a new session (and token) at login
    client.post("/logout", data={"csrf_token": csrf})
    assert client.get("/api/me").status_code == 401


@pytest.mark.slow
def test_login_redirects_only_to_local_paths(web_world: World) -> None:
    client = TestClient(app_for(web_world))
    token = csrf_of(client.get("/login").text)
    for target, expected in [
        ("/runs/3", "/runs/3"),
        ("https://evil.example/", "/"),
        ("//evil", "/"),
    ]:
        client.cookies.clear()
        token = csrf_of(client.get("/login").text)
        response = client.post(
            "/login",
            data={"username": "bob", "password": PASSWORD, "csrf_token": token, "next": target},
            follow_redirects=False,
        )
        assert response.headers["location"] == expected


def test_bearer_tokens_act_as_their_name_and_a_wrong_one_is_refused(web_world: World) -> None:
    client = TestClient(app_for(web_world))
    me = client.get("/api/me", headers=bearer()).json()
    assert me == {"name": "token:ci", "via": "token", "role": "admin"}
    login(client)
    wrong = client.get("/api/me", headers={"Authorization": "Bearer lookout_nope"})
    assert wrong.status_code == 401  # a bad token is refused even beside a good session
    basic = client.get("/api/me", headers={"Authorization": "Basic YWxpY2U6eA=="})
    assert basic.status_code == 401


def test_form_posts_need_the_sessions_csrf_token(web_world: World) -> None:
    client = TestClient(app_for(web_world))
    csrf = login(client)
    run = web_world.latest("planes-registry")
    for data in [{"kind": "acknowledge"}, {"kind": "acknowledge", "csrf_token": "forged"}]:
        response = client.post(f"/runs/{run}/actions", data=data)
        assert response.status_code == 403
        assert "CSRF" in response.text
    api = client.post(f"/api/runs/{run}/actions", json={"kind": "acknowledge"})
    assert api.status_code == 403  # the cookie alone is not enough for the API either
    ok = client.post(
        f"/api/runs/{run}/actions", json={"kind": "acknowledge"}, headers={"X-CSRF-Token": csrf}
    )
    assert ok.status_code == 201 and ok.json()["actor"] == "alice"
    by_token = TestClient(app_for(web_world)).post(
        f"/api/runs/{run}/actions", json={"kind": "comment", "comment": "seen"}, headers=bearer()
    )
    assert by_token.status_code == 201 and by_token.json()["actor"] == "token:ci"


def test_the_session_cookie_is_signed_and_expires(web_world: World) -> None:
    codec = SessionCodec(SECRET_KEY, 60)
    value = codec.dumps(Session("tok", "alice", int(time.time())))
    assert codec.loads(value) == Session("tok", "alice", int(time.time()))
    _payload, signature = value.split(".")
    tampered = SessionCodec(SECRET_KEY, 60).dumps(Session("tok", "root", int(time.time())))
    assert codec.loads(tampered.split(".")[0] + "." + signature) is None
    assert SessionCodec("another key", 60).loads(value) is None
    assert codec.loads(value, now=time.time() + 61) is None
    assert codec.loads("garbage") is None
    client = TestClient(app_for(web_world))
    client.cookies.set(COOKIE, codec.dumps(Session("tok", "mallory", int(time.time()))))
    assert client.get("/api/me").status_code == 401  # signed, but not a configured user
    client.cookies.set(COOKIE, codec.dumps(Session("tok", "alice", int(time.time()))))
    assert client.get("/api/me").status_code == 401  # signed, but no session of the store
    sid = SessionRegistry(web_world.store, 60).start("alice")
    client.cookies.set(COOKIE, codec.dumps(Session("tok", "alice", int(time.time()), sid)))
    assert client.get("/api/me").json()["name"] == "alice"
    client.cookies.set(COOKIE, codec.dumps(Session("tok", "bob", int(time.time()), sid)))
    assert client.get("/api/me").status_code == 401  # alice's session id is not bob's
    fresh = TestClient(app_for(web_world)).get("/login").headers["set-cookie"].lower()
    assert fresh.startswith(COOKIE) and "httponly" in fresh and "samesite=lax" in fresh


def test_local_mode_serves_loopback_clients_only(web_world: World) -> None:
    app = app_for(web_world, local=True)
    local = TestClient(app, client=("127.0.0.1", 50000))
    assert local.get("/api/me").json() == {"name": "local", "via": "local", "role": "admin"}
    page = local.get("/")
    assert page.status_code == 200 and "local mode" in page.text
    run = web_world.latest("hot-weather")
    refused = local.post(f"/runs/{run}/actions", data={"kind": "acknowledge"})
    assert refused.status_code == 403  # local mode still needs the CSRF token
    token = csrf_of(local.get(f"/runs/{run}").text)
    done = local.post(f"/runs/{run}/actions", data={"kind": "acknowledge", "csrf_token": token})
    assert done.status_code == 200 and "Ack'd by local" in done.text
    remote = TestClient(app, client=("192.0.2.7", 50000))
    assert remote.get("/api/me").status_code == 401
    off = TestClient(app_for(web_world), client=("127.0.0.1", 50000))
    assert off.get("/api/me").status_code == 401  # never without being switched on


def _cli() -> typer.Typer:
    cli = typer.Typer()
    cli.callback()(main_options)
    register(cli)
    return cli


def test_serve_refuses_local_mode_on_a_public_address(tmp_path: Path, web_world: World) -> None:
    settings = web_world.settings
    with pytest.raises(ConfigError, match="loopback"):
        check_bind("0.0.0.0", local=True, settings=settings)
    with pytest.raises(ConfigError, match="loopback"):
        check_bind("192.0.2.7", local=True, settings=settings)
    check_bind("127.0.0.1", local=True, settings=settings)
    check_bind("::1", local=True, settings=settings)
    check_bind("0.0.0.0", local=False, settings=settings)
    nobody = settings.model_copy(
        update={"review": settings.review.model_copy(update={"users": {}, "tokens": {}})}
    )
    with pytest.raises(ConfigError, match="nobody can log in"):
        check_bind("127.0.0.1", local=False, settings=nobody)
    config = tmp_path / "lookout.yaml"
    config.write_text("review: {local: true}\n", encoding="utf-8")
    result = CliRunner().invoke(_cli(), ["--config", str(config), "serve", "--host", "0.0.0.0"])
    assert isinstance(result.exception, ConfigError)
    assert "loopback" in str(result.exception)
    help_text = CliRunner().invoke(_cli(), ["serve", "--help"])
    assert help_text.exit_code == 0 and "--local" in help_text.output


def test_secrets_are_stored_hashed_and_plain_ones_refused(tmp_path: Path) -> None:
    hashed = hash_password(PASSWORD)
    assert hashed.startswith("scrypt:") and PASSWORD not in hashed
    assert verify_password(PASSWORD, hashed)
    assert not verify_password(PASSWORD + "!", hashed)
    assert not verify_password(PASSWORD, "scrypt:bad")
    assert hash_password(PASSWORD) != hashed  # salted
    assert token_owner(TOKEN, {"ci": hash_token(TOKEN), "other": hash_token("x" * 40)}) == "ci"
    assert token_owner("nope", {"ci": hash_token(TOKEN)}) is None
    config = tmp_path / "lookout.yaml"
    config.write_text("review: {users: {alice: hunter2}}\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="plain passwords are refused"):
        load_settings(config, env={})
    env = {
        "LOOKOUT_REVIEW_USERS": f"alice={hashed},bob={hashed}",
        "LOOKOUT_REVIEW_TOKENS": f"ci={hash_token(TOKEN)}",
        "LOOKOUT_REVIEW_SECRET_KEY": SECRET_KEY,
    }
    config.write_text("{}\n", encoding="utf-8")
    settings = load_settings(config, env=env)
    assert sorted(settings.review.users) == ["alice", "bob"]
    assert settings.review.token_hashes() == {"ci": hash_token(TOKEN)}
    assert SECRET_KEY in settings.secrets() and hashed in settings.secrets()


def test_the_passwords_module_runs_as_a_program_without_warnings() -> None:
    made = subprocess.run(
        [sys.executable, "-m", "worker.web.passwords", "token", "grafana"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert (made.returncode, made.stderr) == (0, "")  # no RuntimeWarning from runpy
    token, config, env = made.stdout.splitlines()
    found = re.fullmatch(
        r"token \(give it to the client; it is not stored\): (lookout_\S{43})", token
    )
    assert found is not None, token
    assert config == f"config:  review: {{tokens: {{grafana: {hash_token(found.group(1))}}}}}"
    assert env == f"or env:  LOOKOUT_REVIEW_TOKENS=grafana={hash_token(found.group(1))}"


def test_a_piped_password_is_read_as_one_line_and_hashed() -> None:
    def hashed(given: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "worker.web.passwords", "password"],
            cwd=ROOT,
            input=given,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )

    made = hashed("correct horse battery\n")
    assert (made.returncode, made.stderr) == (0, "")
    (line,) = made.stdout.splitlines()
    assert line.startswith("scrypt:16384:8:1:")
    assert verify_password("correct horse battery", line)
    short = hashed("short\n")
    assert (short.returncode, short.stdout, short.stderr) == (2, "", "use at least 8 characters\n")
    empty = hashed("")
    assert (empty.returncode, empty.stderr) == (2, "use at least 8 characters\n")


def test_an_unknown_senders_api_body_is_never_read(web_world: World) -> None:
    sent: list[int] = []

    def body() -> Iterator[bytes]:  # chunked, no Content-Length: counted as it is read
        for _ in range(64):
            sent.append(1)
            yield b"x" * 16_384

    with LiveServer(app_for(web_world)) as server:
        refused = httpx.post(f"{server.url}/api/runs/1/actions", content=body(), timeout=10)
    assert refused.status_code == 401
    assert refused.headers["www-authenticate"].startswith("Bearer")
    assert refused.json() == {"detail": "log in, or send Authorization: Bearer TOKEN"}


def test_an_oversized_body_is_413_before_and_while_it_is_read(web_world: World) -> None:
    client = TestClient(app_for(web_world))
    declared = client.post(
        "/api/runs/1/actions",
        content=b"{" + b" " * 70_000 + b"}",
        headers={**bearer(), "Content-Type": "application/json"},
    )
    assert declared.status_code == 413
    assert declared.json() == {"detail": "the request body is over 65,536 bytes"}

    def chunks() -> Iterator[bytes]:
        yield b'{"kind": "comment", "text": "'
        for _ in range(8):
            yield b"y" * 16_384
        yield b'"}'

    with LiveServer(app_for(web_world)) as server:
        streamed = httpx.post(
            f"{server.url}/api/runs/1/actions",
            content=chunks(),
            headers={**bearer(), "Content-Type": "application/json"},
            timeout=10,
        )
        still = httpx.get(f"{server.url}/healthz", timeout=10)
    assert streamed.status_code == 413, streamed.text
    assert still.json() == {"status": "ok", "store": "ok"}
    login_form = client.post("/login", content=b"a" * 70_000)
    assert login_form.status_code == 413  # a page's form is bounded too


def test_a_validation_error_never_echoes_the_input(web_world: World) -> None:
    client = TestClient(app_for(web_world))
    secretish = "SECRET-" + "z" * 500
    response = client.post("/api/runs/1/actions", json={"kind": secretish}, headers=bearer())
    assert response.status_code == 422
    assert "SECRET-" not in response.text
    assert response.json()["detail"][0]["loc"] == ["body", "kind"]


def test_a_logout_without_its_csrf_token_says_so_and_keeps_the_session(web_world: World) -> None:
    client = TestClient(app_for(web_world))
    login(client)
    refused = client.post("/logout", data={}, follow_redirects=False)
    assert refused.status_code == 403
    assert "not logged out" in refused.text
    assert client.get("/api/me").json() == {"name": "alice", "via": "session", "role": "admin"}


def test_an_oversized_page_and_repeated_filters_are_no_server_error(web_world: World) -> None:
    client = TestClient(app_for(web_world))
    too_far = client.get("/api/board", params={"page": 10**12}, headers=bearer())
    assert too_far.status_code == 422
    assert too_far.json()["detail"][0]["loc"] == ["query", "page"]
    last = client.get("/api/board", params={"page": 100_000}, headers=bearer())
    assert last.status_code == 200  # past the end: the last page
    repeated = client.get("/api/board", params={"f": ["changed"] * 5000}, headers=bearer())
    assert repeated.status_code == 200
    login(client)
    page = client.get("/", params={"page": 10**12})
    assert page.status_code == 200
