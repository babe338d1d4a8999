"""Review state follows the problem across runs, with or without alerts."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from checks.settings.config import Settings, default_config_data
from checks.store.store import Store
from worker.cli.app import app
from worker.review.actions import ActionRequest, record
from worker.review.board import board
from worker.review.vocabulary import ActionKind, Filters


@pytest.mark.slow
def test_an_assign_on_a_run_without_alerts_holds_for_the_next_runs(
    tmp_path: Path, flights_settings: Settings
) -> None:
    folder = tmp_path / "automations"
    folder.mkdir()
    (folder / "wind.yaml").write_text(
        "name: wind\nsource: flights\ngoal: No wind reading is above 100 mph.\nchecks:\n"
        "  - {name: strongest wind, sql: 'SELECT max(wind_speed) FROM weather', "
        "expect: '<= 100'}\n",
        encoding="utf-8",
    )
    config = tmp_path / "lookout.yaml"
    store_url = f"sqlite:///{tmp_path / 'lookout.db'}"
    data = {**default_config_data(), "store_url": store_url, "automations_dir": str(folder)}
    config.write_text(yaml.safe_dump({**data, "cache_dir": flights_settings.cache_dir}), "utf-8")

    def lookout_run() -> None:  # no --notify, no channel configured
        result = CliRunner().invoke(app, ["--config", str(config), "run", "wind"])
        assert result.exit_code == 1, result.output  # Needs attention

    lookout_run()
    store = Store(store_url)
    try:
        now = dt.datetime.now(dt.UTC)
        record(store, 1, ActionRequest(ActionKind.ASSIGN, assignee="bob"), actor="alice", now=now)
        record(store, 1, ActionRequest(ActionKind.ACKNOWLEDGE), actor="alice", now=now)
        lookout_run()
        lookout_run()
        [row] = board(store, Filters(), now=now).rows
        assert (row.automation, row.run_id, row.incident_kind) == ("wind", 3, "attention")
        assert (row.review.assignee, row.review.acknowledged_by) == ("bob", "alice")
        assert not row.needs_me  # acknowledged: it does not wait for anyone
    finally:
        store.close()
