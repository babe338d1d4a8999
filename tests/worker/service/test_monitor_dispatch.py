"""The scheduler treats a source's monitors as any automation: slots, then the run task.

A real DuckDB source monitored hourly, the real PostgreSQL store, the
dispatcher on a fixed clock; the broker is a list.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import duckdb

from checks.automation.model import Automation
from checks.store.store import Store
from tests.worker.service.service_support import clean_store, config_data, settings_of
from worker.service.dispatch import Dispatcher
from worker.service.queue_records import QueuedRun
from worker.service.run_queue import RunQueue
from worker.service.tasks import _automation


def at(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text).replace(tzinfo=dt.UTC)


def test_a_monitor_is_dispatched_on_its_schedule(tmp_path: Path, store: Store, pg_url: str) -> None:
    clean_store(store)
    database = tmp_path / "shop.duckdb"
    with duckdb.connect(str(database)) as conn:
        conn.execute("CREATE TABLE notes AS SELECT 1 AS id")
    folder = tmp_path / "automations"
    folder.mkdir()
    data = config_data(
        store_url=pg_url,
        cache_dir=str(tmp_path / "cache"),
        automations_dir=folder,
        redis_url="redis://127.0.0.1:6379/15",
    )
    data["sources"] = {
        "shop": {
            "type": "duckdb",
            "database": str(database),
            "monitor": {"tables": "all", "schedule": "0 * * * *"},
        }
    }
    queue = RunQueue(store)
    sent: list[QueuedRun] = []
    dispatcher = Dispatcher(settings_of(data), queue, sent.append)
    assert dispatcher.dispatch_due(at("2026-06-01T11:59:50")).queued == []
    due = dispatcher.dispatch_due(at("2026-06-01T12:00:10"))
    assert [(r.id, r.automation, r.source) for r in sent] == [
        (due.queued[0], "monitor:shop.notes", "shop")
    ]
    info = queue.run_info(due.queued[0])
    assert info is not None
    rebuilt = _automation(info)  # what the run task runs: the stored definition
    assert isinstance(rebuilt, Automation)
    assert rebuilt.name == "monitor:shop.notes"
    assert [c.name for c in rebuilt.checks] == ["volume", "schema"]
