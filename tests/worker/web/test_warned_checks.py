"""A warned check, run and stored: kept as warned, shown apart on the report page and the list."""

from __future__ import annotations

import html
import json
import re

import pytest
from fastapi.testclient import TestClient

from checks.automation.model import Automation
from checks.report import CheckOutcome, Finding, Status
from checks.run import SourcePool
from checks.run_lifecycle import run_and_store
from tests.worker.web.web_support import World, app_for, login

CHECKS = [
    {"name": "volume", "row_count": {"table": "flights"}, "warn": ">= 1e9", "expect": ">= 1"},
    {
        "name": "raw volume",
        "sql": "SELECT count(*) FROM flights",
        "warn": ">= 1e9",
        "expect": "> 0",
    },
]


@pytest.mark.slow
def test_a_warned_run_is_stored_clear_and_shown_as_warned(web_world: World) -> None:
    warned = Automation.model_validate(
        {
            "name": "warned-flights",
            "source": "flights",
            "checks": CHECKS,
            "path": "w.yaml",
            "line": 1,
        }
    )
    with SourcePool(web_world.settings) as pool:
        report = run_and_store(warned, web_world.settings, pool, web_world.store)
    assert (report.status, report.finding) == (Status.COMPLETED, Finding.CLEAR)
    rows = report.checks[0].value
    assert isinstance(rows, int) and 1 <= rows < 10**9
    assert report.summary.splitlines()[0] == (
        "**Clear** — all 2 checks passed; 2 warnings (on **volume**, **raw volume**)."
    )
    kept = web_world.store.get_run(report.run_id or 0)
    assert kept is not None
    assert [(c.name, c.outcome, c.warn, c.reason) for c in kept.checks] == [
        ("volume", CheckOutcome.WARNED, ">= 1E+9", "beyond the warning level >= 1E+9"),
        ("raw volume", CheckOutcome.WARNED, ">= 1E+9", "beyond the warning level >= 1E+9"),
    ]
    as_json = json.loads(json.dumps(kept.to_dict()))
    assert [(c["outcome"], c["warn"], c["passed"]) for c in as_json["checks"]] == [
        ("warned", ">= 1E+9", True),
        ("warned", ">= 1E+9", True),
    ]
    client = TestClient(app_for(web_world))
    login(client)
    page = html.unescape(client.get(f"/runs/{report.run_id}").text)
    badges = re.findall(r'<span class="badge warned" title="([^"]*)">warned</span>', page)
    assert badges == ["beyond the warning level >= 1E+9"] * 2
    board = html.unescape(client.get("/").text)
    row = re.search(r'data-automation="warned-flights".*?<td class="wrong">(.*?)</td>', board, re.S)
    assert row is not None
    assert row.group(1) == (
        f"warning: volume: {rows:,} rows in scope; beyond the warning level >= 1E+9 "
        "(expected >= 1) (+1 more)"
    )
