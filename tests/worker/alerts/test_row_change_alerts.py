"""The alert says which rows are new and gone since the last run: Slack and a webhook.

Two real runs on a DuckDB source (Clear, then Needs attention after new rows
arrive), stored and announced to the fake Slack and webhook servers.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb
import pytest

from checks.automation.model import Automation
from checks.run import SourcePool
from checks.run_lifecycle import run_and_store
from checks.settings.config import Settings
from checks.store.store import Store
from worker.alerts.delivery import deliver_for_run
from worker.alerts.fake_chat import FakeChat

HOSTILE = "<!here> @channel"
SMALL = "C1: 3 new rows since the last run (<!here> @channel, N724MQ, …)"
ALL = "C2: 3 new rows since the last run (<!here> @channel, N724MQ, …); 1 gone (N200AA)"


def write(db: Path, rows: list[tuple[str, int]]) -> None:
    with duckdb.connect(str(db)) as conn:
        conn.execute("CREATE OR REPLACE TABLE planes (tail VARCHAR, seats INTEGER)")
        conn.executemany("INSERT INTO planes VALUES (?, ?)", rows)


def automation() -> Automation:
    return Automation.model_validate(
        {
            "name": "small-planes",
            "source": "fleet",
            "goal": "Every plane seats more than 100.",
            "notify": ["ops-slack", "ops-hook"],
            "checks": [
                {
                    "name": "small planes",
                    "sql": "SELECT tail, seats FROM planes WHERE seats <= 100 ORDER BY tail",
                    "expect": "empty",
                },
                {
                    "name": "a fleet",
                    "sql": "SELECT tail FROM planes ORDER BY tail",
                    "expect": "not empty",
                },
            ],
            "path": "inline.yaml",
            "line": 1,
        }
    )


@pytest.mark.slow
def test_slack_and_the_webhook_say_which_rows_are_new_and_gone(tmp_path: Path) -> None:
    db = tmp_path / "fleet.duckdb"
    with FakeChat("slack") as slack, FakeChat("webhook") as hook:
        settings = Settings.model_validate(
            {
                "store_url": f"sqlite:///{tmp_path / 'lookout.db'}",
                "cache_dir": str(tmp_path / "cache"),
                "sources": {"fleet": {"type": "duckdb", "database": str(db)}},
                "review_base_url": "https://review.example",
                "channels": {
                    "ops-slack": {**slack.channel(), "rate_per_s": 50},
                    "ops-hook": {**hook.channel(), "rate_per_s": 50},
                },
                "alerts": {"rate_limiter": "memory", "backoff_base_s": 0.01},
            }
        )
        store = Store(settings.store_url)
        try:
            for rows in (
                [("N100AA", 150), ("N200AA", 180)],  # Clear: no alert
                [("N100AA", 150), ("N724MQ", 50), ("N725MQ", 60), (HOSTILE, 70)],
            ):
                write(db, rows)
                with SourcePool(settings) as pool:
                    report = run_and_store(automation(), settings, pool, store, announce=True)
                deliver_for_run(store, settings, report, sleep=lambda _s: None)
        finally:
            store.close()
        [posted] = [r.json for r in slack.requests]
        [document] = [r.json for r in hook.requests]
    assert document["event"] == "needs_attention"
    assert document["since_last_run"] == [SMALL, ALL]  # raw: the receiver treats it as data
    fields: list[dict[str, Any]] = posted["blocks"][1]["fields"]
    [since] = [f["text"] for f in fields if f["text"].startswith("*Since last run*")]
    assert since == (
        "*Since last run*\n"
        "C1: 3 new rows since the last run (&lt;!here&gt; @\u200bchannel, N724MQ, …); "
        "C2: 3 new rows since the last run (&lt;!here&gt; @\u200bchannel, N724MQ, …); "
        "1 gone (N200AA)"
    )
