"""``dispatch_due`` on a fixed clock against the real PostgreSQL store; the broker is a list."""

from __future__ import annotations

import datetime as dt
import json
import threading
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from checks.clock import utcnow
from checks.report import Finding, RunReport, Status
from checks.store.store import Store
from tests.parallel import redis_db
from tests.worker.service.service_support import (
    clean_store,
    config_data,
    seed_cursor,
    settings_of,
    write_automation,
    write_config,
)
from worker.cli.app import app
from worker.service.dispatch import Dispatcher
from worker.service.queue_records import NewRun, QueuedRun
from worker.service.run_queue import RunQueue
from worker.service.slots import CronSchedule

UTC = dt.UTC


def at(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text).replace(tzinfo=UTC)


@pytest.fixture
def queue(store: Store) -> RunQueue:
    clean_store(store)
    return RunQueue(store)


class Service:
    """A dispatcher over a folder of automations; sent messages land in ``sent``."""

    def __init__(self, folder: Path, queue: RunQueue, pg_url: str, **service: Any) -> None:
        self.folder = folder
        self.queue = queue
        self.data = config_data(
            store_url=pg_url,
            cache_dir=str(folder / "cache"),
            automations_dir=folder,
            redis_url=f"redis://127.0.0.1:6379/{redis_db(15)}",
            **service,
        )
        self.sent: list[QueuedRun] = []
        self.lock = threading.Lock()
        self.dispatcher = self.new_dispatcher()

    def new_dispatcher(self) -> Dispatcher:
        return Dispatcher(settings_of(self.data), self.queue, self.send)

    def send(self, run: QueuedRun) -> None:
        with self.lock:
            self.sent.append(run)

    def add(self, name: str, **fields: Any) -> CronSchedule:
        write_automation(self.folder, name, **fields)
        zone = fields.get("timezone", "UTC")
        from zoneinfo import ZoneInfo

        return CronSchedule(fields["schedule"], ZoneInfo(zone), fields.get("day_match"))

    def seed(self, name: str, schedule: CronSchedule, cursor: dt.datetime) -> None:
        seed_cursor(self.queue.store, name, schedule, cursor)

    def runs(self, automation: str | None = None) -> list[RunReport]:
        found = self.queue.store.list_runs(automation=automation, limit=1000)
        return sorted(found, key=lambda r: r.scheduled_for)


@pytest.fixture
def service(tmp_path: Path, queue: RunQueue, pg_url: str) -> Service:
    folder = tmp_path / "automations"
    folder.mkdir()
    return Service(folder, queue, pg_url, misfire_grace_s=120)


def slots(runs: list[RunReport]) -> list[tuple[str, str]]:
    return [(r.scheduled_for.strftime("%H:%M"), str(r.status)) for r in runs]


def test_a_new_automation_starts_now_and_a_due_slot_is_queued_once(service: Service) -> None:
    service.add("hourly", schedule="0 * * * *")
    first = service.dispatcher.dispatch_due(at("2026-06-01T11:59:50"))
    assert first.queued == [] and service.runs() == []
    due = service.dispatcher.dispatch_due(at("2026-06-01T12:00:10"))
    assert len(due.queued) == 1
    assert [(r.id, r.automation, r.source) for r in service.sent] == [
        (due.queued[0], "hourly", "flights")
    ]
    assert service.dispatcher.dispatch_due(at("2026-06-01T12:00:40")).queued == []
    restarted = service.new_dispatcher()  # a restarted beat: no memory of the last call
    assert restarted.dispatch_due(at("2026-06-01T12:00:40")).queued == []
    assert slots(service.runs()) == [("12:00", "queued")]
    assert len(service.sent) == 1


def test_dispatchers_racing_queue_each_slot_once(service: Service) -> None:
    for n in range(8):
        schedule = service.add(f"a{n}", schedule="*/5 * * * *")
        service.seed(f"a{n}", schedule, at("2026-06-01T11:58:00"))
    dispatchers = [service.new_dispatcher() for _ in range(4)]
    barrier = threading.Barrier(len(dispatchers))

    def go(dispatcher: Dispatcher) -> None:
        barrier.wait()
        dispatcher.dispatch_due(at("2026-06-01T12:00:05"))

    threads = [threading.Thread(target=go, args=(d,)) for d in dispatchers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(service.runs()) == 8
    assert sorted(r.automation for r in service.sent) == [f"a{n}" for n in range(8)]


@pytest.mark.parametrize(
    ("policy", "expected"),
    [
        ("latest", [("09:00", "skipped"), ("10:00", "skipped"), ("11:00", "queued")]),
        ("none", [("09:00", "skipped"), ("10:00", "skipped"), ("11:00", "skipped")]),
        ("all", [("09:00", "queued"), ("10:00", "queued"), ("11:00", "queued")]),
    ],
)
def test_catch_up_after_downtime(
    service: Service, policy: str, expected: list[tuple[str, str]]
) -> None:
    schedule = service.add("hourly", schedule="0 * * * *", catchup=policy)
    service.seed("hourly", schedule, at("2026-06-01T08:30:00"))
    result = service.dispatcher.dispatch_due(at("2026-06-01T11:40:00"))
    assert slots(service.runs()) == expected
    assert len(result.queued) == len(service.sent) == sum(s == "queued" for _, s in expected)
    assert all(r.error and r.error.startswith("missed: found") for r in service.runs() if r.error)


def test_catch_up_all_is_capped_at_the_newest_slots(
    tmp_path: Path, queue: RunQueue, pg_url: str
) -> None:
    folder = tmp_path / "automations"
    folder.mkdir()
    service = Service(folder, queue, pg_url, catchup_cap=5)
    schedule = service.add("often", schedule="*/10 * * * *", catchup="all")
    service.seed("often", schedule, at("2026-06-01T07:00:00"))
    service.dispatcher.dispatch_due(at("2026-06-01T12:01:00"))
    assert [s for s, _ in slots(service.runs())] == ["11:20", "11:30", "11:40", "11:50", "12:00"]


def running_run(queue: RunQueue, name: str, slot: dt.datetime) -> int:
    queued = queue.record([NewRun(name, slot, "flights", {"timeout_s": 60})], {}, now=slot)
    info = queue.run_info(queued[0].id)
    assert info is not None
    assert queue.claim(info, lease_s=600, max_attempts=3) == 1
    return queued[0].id


@pytest.mark.parametrize("policy", ["skip", "buffer_one", "allow"])
def test_overlap_with_a_run_still_going(service: Service, policy: str) -> None:
    schedule = service.add("hourly", schedule="0 * * * *", overlap=policy)
    service.seed("hourly", schedule, at("2026-06-01T10:30:00"))
    long_run = running_run(service.queue, "hourly", at("2026-06-01T10:00:00"))
    service.dispatcher.dispatch_due(at("2026-06-01T11:00:05"))
    service.dispatcher.dispatch_due(at("2026-06-01T12:00:05"))
    got = slots(service.runs())
    if policy == "skip":
        assert got == [("10:00", "running"), ("11:00", "skipped"), ("12:00", "skipped")]
        assert service.runs()[1].error == (
            f"overlap: skip — run {long_run} (for 2026-06-01 10:00 UTC) is still running"
        )
    elif policy == "buffer_one":  # one waits behind the running run; the next finds it waiting
        assert got == [("10:00", "running"), ("11:00", "queued"), ("12:00", "skipped")]
        assert "is queued" in (service.runs()[2].error or "")
    else:
        assert got == [("10:00", "running"), ("11:00", "queued"), ("12:00", "queued")]


def test_skipped_slots_are_listed_by_lookout_reports(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/lookout.db"  # SQLite: the one-machine store works the same
    (tmp_path / "automations").mkdir()
    service = Service(tmp_path / "automations", RunQueue(Store(url)), url)
    schedule = service.add("hourly", schedule="0 * * * *", catchup="none")
    service.seed("hourly", schedule, at("2026-06-01T10:30:00"))
    service.dispatcher.dispatch_due(at("2026-06-01T11:40:00"))
    config = write_config(tmp_path / "lookout.yaml", service.data)
    runner = CliRunner()
    listed = runner.invoke(
        app, ["--config", str(config), "reports", "--status", "skipped", "--json"]
    )
    assert listed.exit_code == 0, listed.output
    [row] = json.loads(listed.output)
    assert (row["automation"], row["status"], row["error"]) == (
        "hourly",
        "skipped",
        "missed: found 40 min late (catchup: none)",
    )
    table = runner.invoke(app, ["--config", str(config), "reports"])
    assert "Skipped" in table.output and "missed: found 40 min late" in table.output  # the note


def test_a_bad_file_is_reported_and_skipped_and_a_fixed_one_picked_up(service: Service) -> None:
    good = service.add("good", schedule="0 * * * *", overlap="allow")
    service.seed("good", good, at("2026-06-01T11:30:00"))
    bad = service.folder / "bad.yaml"
    bad.write_text("name: bad\nschedule: '0 * * *'\nsource: flights\ngoal: g\n", encoding="utf-8")
    result = service.dispatcher.dispatch_due(at("2026-06-01T12:00:05"))
    assert [r.automation for r in service.sent] == ["good"]
    assert len(result.file_errors) == 1 and "bad.yaml:2" in result.file_errors[0]
    assert "4 fields" in result.file_errors[0]
    assert result.file_error_count == 1
    reloads = service.dispatcher.known.reloads
    again = service.dispatcher.dispatch_due(at("2026-06-01T12:00:35"))
    assert service.dispatcher.known.reloads == reloads  # nothing changed, nothing re-read
    # the list is in the result (logged each tick) only when it changed; the count always is
    assert (again.file_errors, again.file_error_count) == ([], 1)
    assert again.to_dict()["file_errors"] == [] and again.to_dict()["file_error_count"] == 1
    write_automation(service.folder, "bad", schedule="0 * * * *")
    fixed = service.dispatcher.dispatch_due(at("2026-06-01T12:01:05"))
    assert fixed.file_errors == [] and service.dispatcher.known.reloads == reloads + 1
    assert fixed.file_error_count == 0
    bad.write_text("name: bad\nschedule: '0 * * *'\nsource: flights\ngoal: g\n", encoding="utf-8")
    broken_again = service.dispatcher.dispatch_due(at("2026-06-01T12:01:35"))
    assert broken_again.file_errors == result.file_errors  # changed again: listed again
    write_automation(service.folder, "bad", schedule="0 * * * *")
    service.dispatcher.dispatch_due(at("2026-06-01T12:02:05"))
    service.dispatcher.dispatch_due(at("2026-06-01T13:00:05"))
    assert sorted(slots(service.runs("bad")) + slots(service.runs("good"))) == [
        ("12:00", "queued"),
        ("13:00", "queued"),
        ("13:00", "queued"),
    ]


def test_disabled_slots_pass_silently_and_a_changed_schedule_never_catches_up(
    service: Service,
) -> None:
    schedule = service.add("daily", schedule="0 6 * * *", enabled=False, catchup="all")
    service.seed("daily", schedule, at("2026-05-01T00:00:00"))
    service.dispatcher.dispatch_due(at("2026-06-01T12:00:00"))
    assert service.runs() == []
    service.add("daily", schedule="0 7 * * *", catchup="all")  # enabled, new schedule
    service.dispatcher.dispatch_due(at("2026-06-01T12:00:30"))
    service.dispatcher.dispatch_due(at("2026-06-02T07:00:10"))
    assert [r.scheduled_for for r in service.runs()] == [at("2026-06-02T07:00:00")]


def test_a_timeout_beyond_the_visibility_timeout_is_refused(service: Service) -> None:
    schedule = service.add("slow", schedule="0 * * * *", timeout_s=20000)
    service.seed("slow", schedule, at("2026-06-01T11:30:00"))
    service.dispatcher.dispatch_due(at("2026-06-01T12:00:05"))
    [run] = service.runs()
    assert run.status == Status.SKIPPED and "visibility_timeout_s" in (run.error or "")


# -- claims, leases and the reaper -----------------------------------------------------


def queued(queue: RunQueue, name: str = "a", source: str = "flights") -> int:
    slot = utcnow()
    run = NewRun(name, slot, source, {"timeout_s": 30}, trigger="manual")
    return queue.record([run], {}, now=slot)[0].id


def info(queue: RunQueue, run_id: int) -> Any:
    found = queue.run_info(run_id)
    assert found is not None
    return found


def test_a_claimed_or_finished_run_cannot_be_claimed_again(queue: RunQueue) -> None:
    run_id = queued(queue)
    assert queue.claim(info(queue, run_id), lease_s=60, max_attempts=3) == 1
    assert queue.claim(info(queue, run_id), lease_s=60, max_attempts=3) is None  # duplicate message
    report = RunReport("a", utcnow(), Status.COMPLETED, finding=Finding.CLEAR)
    store = queue.store
    assert store.finish_run(run_id, 2, report) is False  # a stale attempt cannot write
    assert store.finish_run(run_id, 1, report) is True
    assert queue.claim(info(queue, run_id), lease_s=60, max_attempts=3) is None  # redelivered


def test_claims_respect_the_source_bound_and_buffer_one(queue: RunQueue) -> None:
    first, second, other = queued(queue, "a"), queued(queue, "b"), queued(queue, "c", "warehouse")
    assert queue.claim(info(queue, first), lease_s=60, max_attempts=3, source_limit=1) == 1
    assert queue.claim(info(queue, second), lease_s=60, max_attempts=3, source_limit=1) == "busy"
    assert queue.claim(info(queue, other), lease_s=60, max_attempts=3, source_limit=1) == 1
    behind = queued(queue, "a")
    assert queue.claim(info(queue, behind), lease_s=60, max_attempts=3, exclusive=True) == "busy"
    assert queue.fail(first, "stopped", attempt=1)
    assert queue.claim(info(queue, behind), lease_s=60, max_attempts=3, exclusive=True) == 1


def test_take_reads_and_claims_a_run_in_one_transaction(queue: RunQueue) -> None:
    asked: list[int] = []

    def bound(limit: int | None, exclusive: bool = False) -> Any:
        def admission(run: Any) -> tuple[int | None, bool]:
            asked.append(run.id)
            return limit, exclusive

        return admission

    first, second = queued(queue, "a"), queued(queue, "b")
    taken, claim = queue.take(first, bound(1), lease_s=60, max_attempts=3)
    assert claim == 1 and taken is not None and (taken.id, taken.automation) == (first, "a")
    assert taken.status == Status.QUEUED and taken.source == "flights"  # as read, before the claim
    assert queue.take(second, bound(1), lease_s=60, max_attempts=3)[1] == "busy"
    assert queue.take(second, bound(None), lease_s=60, max_attempts=3)[1] == 1
    assert queue.take(first, bound(None), lease_s=60, max_attempts=3)[1] is None  # a live lease
    assert asked == [first, second, second, first]
    assert queue.fail(first, "stopped", attempt=1)
    ended, claim = queue.take(first, bound(None), lease_s=60, max_attempts=3)
    assert ended is not None and ended.status == Status.ERROR and claim is None
    assert asked == [first, second, second, first]  # an ended run is not admitted at all
    assert queue.take(10**9, bound(None), lease_s=60, max_attempts=3) == (None, None)


def test_the_reaper_requeues_expired_leases_then_gives_up(
    tmp_path: Path, queue: RunQueue, pg_url: str
) -> None:
    service = Service(tmp_path, queue, pg_url, max_attempts=2)
    run_id = queued(queue)
    for attempt in (1, 2):
        assert queue.claim(info(queue, run_id), lease_s=0.01, max_attempts=2) == attempt
        later = utcnow() + dt.timedelta(seconds=1)
        result = service.dispatcher.dispatch_due(later)
        assert result.requeued == ([run_id] if attempt == 1 else [])
    assert result.gave_up == [run_id]
    run = queue.store.get_run(run_id)
    assert run is not None and run.status == Status.ERROR and run.attempt == 2
    assert run.error == (
        "gave up after 2 attempts: each attempt's lease ran out (the worker was killed, "
        "lost or stuck)"
    )


def test_queued_runs_never_sent_or_lost_are_sent_again(service: Service) -> None:
    run_id = queued(service.queue)
    soon = service.dispatcher.dispatch_due(utcnow())
    assert soon.resent == []  # within unsent_grace_s: the dispatcher that inserted it may send it
    late = service.dispatcher.dispatch_due(utcnow() + dt.timedelta(seconds=61))
    assert late.resent == [run_id]
    assert service.dispatcher.dispatch_due(utcnow() + dt.timedelta(seconds=120)).resent == []
    lost = service.dispatcher.dispatch_due(utcnow() + dt.timedelta(hours=2))
    assert lost.resent == [run_id]  # sent an hour ago and never claimed: the broker lost it


# -- lookout schedule prints what dispatch creates ---------------------------------------------


def test_lookout_schedule_prints_the_slots_dispatch_creates(
    service: Service, tmp_path: Path
) -> None:
    schedule = service.add(
        "night", schedule="30 1 * * *", timezone="America/New_York", catchup="all"
    )
    config = write_config(tmp_path / "lookout.yaml", service.data)
    args = ["--config", str(config), "schedule", "night", "--json"]
    between = ["--between", "2025-11-01T05:00:00", "2025-11-04T06:00:00"]
    printed = CliRunner().invoke(app, [*args, *between])
    assert printed.exit_code == 0, printed.output
    rows = json.loads(printed.output)
    assert [(r["local"], r["utc"]) for r in rows] == [
        ("2025-11-01T01:30:00-04:00", "2025-11-01T05:30:00+00:00"),
        ("2025-11-02T01:30:00-04:00", "2025-11-02T05:30:00+00:00"),
        ("2025-11-03T01:30:00-05:00", "2025-11-03T06:30:00+00:00"),
    ]
    service.seed("night", schedule, at("2025-11-01T05:00:00"))
    service.dispatcher.dispatch_due(at("2025-11-04T06:00:00"))
    created = [r.scheduled_for.isoformat() for r in service.runs()]
    assert created == [r["utc"] for r in rows]


def test_the_dispatchers_catalog_reports_a_dangling_link(tmp_path: Path) -> None:
    from worker.service.known_automations import KnownAutomations

    write_automation(tmp_path, "good")
    (tmp_path / "gone.yaml").symlink_to(tmp_path / "nowhere.yaml")
    loaded = KnownAutomations(tmp_path, {"flights"}).refresh()
    assert [a.name for a in loaded.automations] == ["good"]
    assert [e.path for e in loaded.errors] == [str(tmp_path / "gone.yaml")]


@pytest.mark.parametrize(("files", "frozen"), [(3, [False]), (2, [])])
def test_a_large_refresh_freezes_what_it_built_before_the_collector_runs_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, files: int, frozen: list[bool]
) -> None:
    # Frozen after the collector was enabled again, the first young collection walked every
    # object the refresh built (0.13 s of a 10,000-file first tick) before they were frozen.
    import gc

    from worker.service import known_automations

    for index in range(files):
        write_automation(tmp_path, f"a{index}")
    monkeypatch.setattr(known_automations, "FREEZE_AFTER_FILES", 3)
    calls: list[bool] = []
    monkeypatch.setattr(gc, "freeze", lambda: calls.append(gc.isenabled()))
    loaded = known_automations.KnownAutomations(tmp_path, {"flights"}).refresh()
    assert len(loaded.automations) == files
    assert calls == frozen
    assert gc.isenabled()
