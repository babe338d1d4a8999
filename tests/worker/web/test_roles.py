"""Roles: every route of the app, for every role, by login and by token, gets the exact status.

The table ``ROUTES`` names the role each route needs (None: open to anyone);
a route added to the app without a row here fails
``test_every_route_of_the_app_has_a_decision``.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any

import pytest
from fastapi.testclient import TestClient
from starlette.routing import Mount, Route

from checks.settings.review import Role
from tests.worker.web.web_support import ROLE_TOKENS, World, app_for, csrf_of, login, now

RUN = "{run}"  # replaced by a run id of the world


@dataclass(frozen=True)
class Probe:
    """One request to a route and the status it gets when allowed."""

    method: str
    url: str
    ok: int
    form: dict[str, str] | None = None
    json: dict[str, Any] | None = None


@dataclass(frozen=True)
class Decision:
    """The least role a route needs (None: open) and the requests that exercise it."""

    needed: Role | None
    what: str = ""
    probes: tuple[Probe, ...] = field(default_factory=tuple)


READ = "reading the reports"
ACT = "acting on a run"
RUN_NOW = "running an automation now"


def _read(url: str) -> Decision:
    return Decision(Role.VIEWER, READ, (Probe("GET", url, 200),))


ROUTES: dict[tuple[str, str], Decision] = {
    ("GET", "/"): _read("/"),
    ("GET", "/runs/{run_id}"): _read(f"/runs/{RUN}"),
    ("POST", "/runs/{run_id}/actions"): Decision(
        Role.REVIEWER,
        ACT,
        tuple(
            Probe("POST", f"/runs/{RUN}/actions", 303, form=form)
            for form in (
                {"kind": "acknowledge"},
                {"kind": "assign", "assignee": "bob"},
                {"kind": "snooze", "snooze": "1"},
                {"kind": "comment", "comment": "looked"},
                {"kind": "resolve", "reason": "expected"},
            )
        ),
    ),
    ("POST", "/runs/{run_id}/run-now"): Decision(
        Role.ADMIN, RUN_NOW, (Probe("POST", f"/runs/{RUN}/run-now", 303, form={}),)
    ),
    ("GET", "/login"): Decision(None),  # the login itself (tested in test_access)
    ("POST", "/login"): Decision(None),
    ("POST", "/logout"): Decision(None),
    ("GET", "/api/me"): _read("/api/me"),
    ("GET", "/api/board"): _read("/api/board"),
    ("GET", "/api/runs/{run_id}"): _read(f"/api/runs/{RUN}"),
    ("GET", "/api/runs/{run_id}/trace"): _read(f"/api/runs/{RUN}/trace"),
    ("POST", "/api/runs/{run_id}/actions"): Decision(
        Role.REVIEWER,
        ACT,
        tuple(
            Probe("POST", f"/api/runs/{RUN}/actions", 201, json=body)
            for body in (
                {"kind": "acknowledge"},
                {"kind": "assign", "assignee": "bob"},
                {"kind": "snooze", "until": (now() + dt.timedelta(days=1)).isoformat()},
                {"kind": "comment", "comment": "looked"},
                {"kind": "resolve", "reason": "fixed"},
            )
        ),
    ),
    ("POST", "/api/runs/{run_id}/run-now"): Decision(
        Role.ADMIN, RUN_NOW, (Probe("POST", f"/api/runs/{RUN}/run-now", 202),)
    ),
    ("GET", "/api/outcomes"): _read("/api/outcomes"),
    ("GET", "/api/openapi.json"): _read("/api/openapi.json"),
    ("GET", "/healthz"): Decision(None, probes=(Probe("GET", "/healthz", 200),)),
    ("GET", "/metrics"): _read("/metrics"),
    ("GET", "/static"): Decision(None, probes=(Probe("GET", "/static/htmx.min.js", 200),)),
}

USERS = {Role.VIEWER: "vera", Role.REVIEWER: "rita", Role.ADMIN: "alice"}


def _route_keys(routes: list[Any], prefix: str = "") -> set[tuple[str, str]]:
    """Every (method, path) the routes answer, HEAD left out, included routers walked into."""
    keys: set[tuple[str, str]] = set()
    for route in routes:
        inner = getattr(route, "original_router", None)
        if inner is not None:  # newer FastAPI keeps an included router as one entry
            keys |= _route_keys(inner.routes, prefix + route.include_context.prefix)
        elif isinstance(route, Mount):
            keys.add(("GET", prefix + route.path))
        elif isinstance(route, Route):
            methods = route.methods or set()
            keys.update((m, prefix + route.path) for m in methods if m != "HEAD")
        else:
            raise AssertionError(f"a route of an unknown kind: {route!r}")
    return keys


def test_every_route_of_the_app_has_a_decision(web_world: World) -> None:
    assert _route_keys(app_for(web_world).routes) == set(ROUTES)


@dataclass
class Caller:
    """A client acting as one role: by login (with its CSRF token) or by bearer token."""

    name: str
    role: Role
    client: TestClient
    csrf: str | None = None
    headers: dict[str, str] = field(default_factory=dict)

    def send(self, probe: Probe, run: int) -> Any:
        url = probe.url.replace(RUN, str(run))
        headers = dict(self.headers)
        if probe.method == "GET":
            return self.client.get(url, headers=headers, follow_redirects=False)
        form = None
        if probe.form is not None:
            form = {**probe.form, **({"csrf_token": self.csrf} if self.csrf else {})}
        elif self.csrf:
            headers["X-CSRF-Token"] = self.csrf
        return self.client.post(
            url, data=form, json=probe.json, headers=headers, follow_redirects=False
        )


def _callers(world: World, run: int) -> list[Caller]:
    callers = []
    for role, user in USERS.items():
        client = TestClient(app_for(world))
        callers.append(Caller(user, role, client, csrf=login(client, user)))
        name = f"token:{role}-token"
        headers = {"Authorization": f"Bearer {ROLE_TOKENS[role]}"}
        callers.append(Caller(name, role, TestClient(app_for(world)), headers=headers))
    local = TestClient(app_for(world, local=True), client=("127.0.0.1", 50000))
    callers.append(Caller("local", Role.ADMIN, local, csrf=csrf_of(local.get(f"/runs/{run}").text)))
    return callers


@pytest.mark.slow
def test_every_route_for_every_role_by_login_and_by_token(web_world: World) -> None:
    run = web_world.latest("hot-weather")
    decisions = list(ROUTES.values())
    seen = []
    for caller in _callers(web_world, run):
        for decision in decisions:
            for probe in decision.probes:
                response = caller.send(probe, run)
                where = (caller.name, probe.method, probe.url, probe.form or probe.json)
                allowed = decision.needed is None or caller.role.allows(decision.needed)
                seen.append((caller.role, probe.url, probe.ok if allowed else 403))
                if allowed:
                    assert response.status_code == probe.ok, (where, response.text[:300])
                    continue
                message = (
                    f"{decision.what} needs the {decision.needed} role; "
                    f"{caller.name} has the {caller.role} role"
                )
                assert response.status_code == 403, where
                if probe.url.startswith(("/api/", "/metrics")):
                    assert response.json() == {"detail": message}, where
                else:
                    assert "text/html" in response.headers["content-type"], where
                    assert message in response.text, where
    # what the table says, spelled out for one route of each kind
    assert (Role.VIEWER, f"/api/runs/{RUN}/actions", 403) in seen
    assert (Role.REVIEWER, f"/api/runs/{RUN}/actions", 201) in seen
    assert (Role.REVIEWER, f"/api/runs/{RUN}/run-now", 403) in seen
    assert (Role.ADMIN, f"/api/runs/{RUN}/run-now", 202) in seen
    assert (Role.VIEWER, "/metrics", 200) in seen


def test_a_role_too_low_is_refused_before_the_body_is_validated_or_the_csrf_checked(
    web_world: World,
) -> None:
    client = TestClient(app_for(web_world))
    login(client, "vera")
    run = web_world.latest("hot-weather")
    bad = client.post(f"/api/runs/{run}/actions", json={"kind": "nonsense"})
    assert (bad.status_code, bad.json()) == (
        403,
        {"detail": "acting on a run needs the reviewer role; vera has the viewer role"},
    )
    page = client.post(f"/runs/{run}/actions", data={"kind": "acknowledge"})
    assert page.status_code == 403
    assert "acting on a run needs the reviewer role; vera has the viewer role" in page.text
    timeline = client.get(f"/api/runs/{run}").json()["report"]["review"]
    assert timeline["acknowledged_by"] is None  # nothing was recorded


def test_api_me_shows_the_role_and_an_entry_without_one_is_a_viewer(web_world: World) -> None:
    client = TestClient(app_for(web_world))
    login(client, "bob")  # written as a bare hash: review.default_role, viewer
    assert client.get("/api/me").json() == {"name": "bob", "via": "session", "role": "viewer"}
    rita = TestClient(app_for(web_world))
    login(rita, "rita")
    assert rita.get("/api/me").json() == {"name": "rita", "via": "session", "role": "reviewer"}
    token = {"Authorization": f"Bearer {ROLE_TOKENS[Role.REVIEWER]}"}
    assert TestClient(app_for(web_world)).get("/api/me", headers=token).json() == {
        "name": "token:reviewer-token",
        "via": "token",
        "role": "reviewer",
    }


def test_old_entries_get_admin_when_the_default_role_says_so(web_world: World) -> None:
    review = {**web_world.settings.review.model_dump(mode="json"), "default_role": "admin"}
    settings = web_world.settings.model_copy(
        update={"review": type(web_world.settings.review).model_validate(review)}
    )
    app = app_for(World(settings, web_world.store, web_world.runs))
    client = TestClient(app)
    csrf = login(client, "bob")
    assert client.get("/api/me").json()["role"] == "admin"
    run = web_world.latest("hot-weather")
    queued = client.post(f"/api/runs/{run}/run-now", headers={"X-CSRF-Token": csrf})
    assert queued.status_code == 202


@pytest.mark.parametrize(
    ("user", "shown", "hidden"),
    [
        ("vera", ["can read only"], ['value="acknowledge"', 'value="resolve"', 'value="run_now"']),
        ("rita", ['value="acknowledge"', 'value="resolve"'], ['value="run_now"', "can read only"]),
        ("alice", ['value="acknowledge"', 'value="run_now"'], ["can read only"]),
    ],
)
def test_the_report_page_hides_the_buttons_a_role_cannot_use(
    web_world: World, user: str, shown: list[str], hidden: list[str]
) -> None:
    client = TestClient(app_for(web_world))
    login(client, user)
    page = client.get(f"/runs/{web_world.latest('hot-weather')}").text
    for text in shown:
        assert text in page, (user, text)
    for text in hidden:
        assert text not in page, (user, text)
