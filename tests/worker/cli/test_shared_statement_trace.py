"""``lookout show --trace`` shows the statements a run's declared checks shared."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from checks.settings.config import Settings
from tests.cli_support import run_lookout


@pytest.mark.slow
def test_the_trace_of_a_run_holds_its_shared_statement(
    tmp_path: Path, flights_settings: Settings
) -> None:
    env = {
        "PATH": "/usr/bin:/bin",
        "LOOKOUT_STORE_URL": f"sqlite:///{tmp_path}/lookout.db",
        "LOOKOUT_CACHE_DIR": flights_settings.cache_dir,
    }
    run_lookout(["run", "planes-build-year"], env)
    proc = run_lookout(["show", "1", "--trace"], env)
    assert proc.returncode == 0, proc.stderr
    [event] = [json.loads(line) for line in proc.stdout.splitlines()]
    assert event["kind"] == "checks_statement"
    assert event["checks"] == ["planes without a build year", "build years in range"]
    assert (event["positions"], event["table"]) == ([1, 2], "planes")
    assert event["sql"].startswith(
        "SELECT COUNT(*) AS lookout__rows, COUNT(*) AS c1__rows_in_scope,"
        ' COUNT(CASE WHEN t."year" IS NULL THEN 1 END) AS c1__missing,'
        " COUNT(*) AS c2__rows_in_scope"
    )
    assert event["sql"].endswith('FROM "planes" AS t') and "error" not in event
