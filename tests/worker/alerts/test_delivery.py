"""Delivery against fake services and a real store: once per key, retries, fallback, records."""

from __future__ import annotations

import datetime as dt
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from checks.report import Finding, RunReport, Status
from checks.settings.config import Settings
from checks.store.store import Store
from tests.stored_reports import store_report
from worker.alerts.delivery import deliver_for_run, send_test
from worker.alerts.delivery_log import attempts_of, deliveries_by_run, list_deliveries, summarize
from worker.alerts.fake_chat import FakeChat, Reply
from worker.alerts.ratelimit import RedisBuckets, bucket_key

T0 = dt.datetime(2026, 12, 1, 9, 0, tzinfo=dt.UTC)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    opened = Store(f"sqlite:///{tmp_path / 'lookout.db'}")
    yield opened
    opened.close()


@pytest.fixture(params=["sqlite", "postgresql"])
def any_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    url = f"sqlite:///{tmp_path / 'lookout.db'}"
    if request.param == "postgresql":
        url = request.getfixturevalue("pg_url")
    opened = Store(url)
    yield opened
    opened.close()


def settings_for(channels: dict[str, dict[str, Any]], **alerts: Any) -> Settings:
    """Settings with fast retries and in-process rate limits (rate 50/s unless given)."""
    return Settings.model_validate(
        {
            "review_base_url": "https://review.example",
            "channels": {n: {"rate_per_s": 50, **c} for n, c in channels.items()},
            "alerts": {"rate_limiter": "memory", "backoff_base_s": 0.01, **alerts},
        }
    )


def stored(
    store: Store,
    automation: str,
    *,
    at: dt.datetime = T0,
    finding: Finding | None = Finding.NEEDS_ATTENTION,
    notify: tuple[str, ...] = ("c",),
    summary: str = "3 orders have a negative amount [Q1].",
) -> RunReport:
    report = RunReport(
        automation=automation,
        scheduled_for=at,
        status=Status.COMPLETED,
        finding=finding,
        summary=summary,
        definition={"notify": list(notify), "owner": "data-team", "severity": "high"},
    )
    store_report(store, report)
    return report


def unique(name: str) -> str:
    return f"{name}-{uuid.uuid4().hex[:8]}"


def test_every_channel_gets_one_message_and_every_attempt_is_stored(store: Store) -> None:
    services = ("slack", "teams", "google_chat", "discord", "webhook")
    fakes = {s: FakeChat(s).start() for s in services}
    try:
        channels = {s: fakes[s].channel() for s in services}
        channels["mail"] = {
            "type": "apprise",
            "url": f"json://127.0.0.1:{fakes['webhook'].port}/a",
            "allow_private_address": True,
        }
        settings = settings_for(channels)
        report = stored(store, "orders-positive", notify=(*services, "mail"))
        records = deliver_for_run(store, settings, report, now=T0)
        assert {r.channel: (r.status, r.http_status) for r in records} == {
            "slack": ("sent", 200),
            "teams": ("sent", 202),
            "google_chat": ("sent", 200),
            "discord": ("sent", 200),
            "webhook": ("sent", 200),
            "mail": ("sent", None),  # Apprise reports no HTTP status
        }
        assert [len(fakes[s].requests) for s in services] == [1, 1, 1, 1, 2]
    finally:
        for fake in fakes.values():
            fake.stop()
    for record in records:
        [attempt] = attempts_of(store.engine, record.id)
        assert (attempt.kind, attempt.outcome, attempt.http_status) == (
            "message",
            "sent",
            record.http_status,
        )
        assert attempt.at.tzinfo is not None
    assert deliveries_by_run(store.engine, [report.run_id or 0]) == {report.run_id: records}


def test_a_duplicate_task_delivery_sends_once(any_store: Store) -> None:
    with FakeChat("slack") as fake:
        settings = settings_for({"c": fake.channel()})
        report = stored(any_store, unique("dup"))
        first = deliver_for_run(any_store, settings, report, now=T0)
        again = deliver_for_run(any_store, settings, report, now=T0)  # a redelivered task
        assert [r.status for r in first] == ["sent"] and again == []
        assert len(fake.requests) == 1

        racing = stored(any_store, unique("race"))
        barrier = threading.Barrier(4)
        results: list[int] = []

        def worker() -> None:
            barrier.wait()
            results.append(len(deliver_for_run(any_store, settings, racing, now=T0)))

        threads = [threading.Thread(target=worker) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert sorted(results) == [0, 0, 0, 1]
        assert len(fake.requests) == 2
    assert len(list_deliveries(any_store.engine, run_id=racing.run_id)) == 1


@pytest.mark.slow
def test_429_with_retry_after_is_obeyed_then_sent(store: Store) -> None:
    with FakeChat("slack") as fake:
        fake.script(Reply(429, "rate_limited", {"Retry-After": "1"}))
        settings = settings_for({"c": fake.channel()})
        [record] = deliver_for_run(store, settings, stored(store, "a"), now=T0)
        first, second = fake.requests
    assert record.status == "sent" and record.attempts == 2
    assert second.at - first.at >= 0.95
    outcomes = [(a.outcome, a.http_status) for a in attempts_of(store.engine, record.id)]
    assert outcomes == [("rate_limited", 429), ("sent", 200)]


def test_discord_retry_after_in_the_body_is_obeyed(store: Store) -> None:
    with FakeChat("discord") as fake:
        fake.script(Reply(429, '{"message": "You are being rate limited.", "retry_after": 0.3}'))
        settings = settings_for({"c": fake.channel()})
        [record] = deliver_for_run(store, settings, stored(store, "a"), now=T0)
        first, second = fake.requests
    assert record.status == "sent"
    assert second.at - first.at >= 0.28


def test_500_then_success_and_a_timeout_then_success(store: Store) -> None:
    with FakeChat("teams") as fake:
        fake.script(Reply(500, "oops"), Reply(202, delay_s=1.0))
        settings = settings_for({"c": fake.channel(timeout_s=0.3)})
        [record] = deliver_for_run(store, settings, stored(store, "a"), now=T0)
    assert (record.status, record.http_status, record.attempts) == ("sent", 202, 3)
    tries = attempts_of(store.engine, record.id)
    assert [(a.outcome, a.http_status) for a in tries] == [
        ("transient", 500),
        ("transient", None),
        ("sent", 202),
    ]
    assert tries[1].error is not None and "timed out" in tries[1].error


def test_slack_invalid_blocks_sends_the_fallback_once_and_records_the_failure(
    store: Store,
) -> None:
    with FakeChat("slack") as fake:
        fake.script(Reply(400, "invalid_blocks"))
        settings = settings_for({"c": fake.channel()})
        [record] = deliver_for_run(store, settings, stored(store, "orders"), now=T0)
        requests = fake.requests
    assert len(requests) == 2  # no retry storm: the message once, the fallback once
    assert requests[1].json == {"text": "orders needs attention: https://review.example/runs/1"}
    assert record.status == "fallback_sent"
    assert record.error == "HTTP 400: invalid_blocks"
    assert summarize([record]) == "alerts: 1 fallback_sent (c: HTTP 400: invalid_blocks)"
    tries = attempts_of(store.engine, record.id)
    assert [(a.kind, a.outcome, a.http_status) for a in tries] == [
        ("message", "permanent", 400),
        ("fallback", "sent", 200),
    ]
    assert record.http_status == 200  # the answer that ended it: the fallback's
    assert record.finished_at is not None and record.finished_at >= tries[1].at


def test_a_refused_fallback_leaves_the_delivery_failed(store: Store) -> None:
    with FakeChat("discord") as fake:
        fake.script(Reply(404, '{"code": 10015}'), Reply(404, '{"code": 10015}'))
        settings = settings_for({"c": fake.channel()})
        [record] = deliver_for_run(store, settings, stored(store, "a"), now=T0)
        assert len(fake.requests) == 2
    assert (record.status, record.http_status) == ("failed", 404)


def test_retry_after_beyond_the_ceiling_is_not_waited_for(store: Store) -> None:
    with FakeChat("slack") as fake:
        fake.script(Reply(429, "rate_limited", {"Retry-After": "120"}))
        settings = settings_for({"c": fake.channel()}, retry_after_cap_s=5)
        [record] = deliver_for_run(store, settings, stored(store, "a"), now=T0)
        assert len(fake.requests) == 1
    assert record.status == "failed"
    assert record.error is not None and "asked to wait 120 s; ceiling 5 s" in record.error


def test_5xx_gives_up_after_max_attempts_without_fallback(store: Store) -> None:
    with FakeChat("google_chat") as fake:
        fake.script(*[Reply(503, "unavailable")] * 3)
        settings = settings_for({"c": fake.channel()}, max_attempts=3)
        [record] = deliver_for_run(store, settings, stored(store, "a"), now=T0)
        assert len(fake.requests) == 3
    assert (record.status, record.attempts, record.http_status) == ("failed", 3, 503)


def test_errors_are_stored_with_urls_and_tokens_redacted(store: Store) -> None:
    with FakeChat("slack") as fake:
        url = fake.url()
        fake.script(Reply(404, f"no such hook: {url} (token FakeSlackToken0123456789)"))
        settings = settings_for({"c": fake.channel()}, max_attempts=1)
        [record] = deliver_for_run(store, settings, stored(store, "a"), now=T0)
    assert record.error is not None
    assert "FakeSlackToken" not in record.error and url not in record.error
    assert "***" in record.error
    for attempt in attempts_of(store.engine, record.id):
        assert "FakeSlackToken" not in (attempt.error or "")


def test_an_unknown_channel_is_recorded_as_failed_not_dropped(store: Store) -> None:
    settings = settings_for({})
    [record] = deliver_for_run(store, settings, stored(store, "a", notify=("nope",)), now=T0)
    assert (record.status, record.channel_type) == ("failed", "unknown")
    assert record.error == "unknown channel 'nope': not in the config's channels"


@pytest.mark.slow
def test_slack_is_paced_at_one_message_per_second_per_webhook(store: Store) -> None:
    with FakeChat("slack") as fake:
        settings = settings_for({"c": fake.channel(rate_per_s=1.0)})
        deliver_for_run(store, settings, stored(store, "first"), now=T0)
        deliver_for_run(store, settings, stored(store, "second"), now=T0)
        first, second = fake.requests
    assert second.at - first.at >= 0.95


def test_redis_token_buckets_are_shared_between_workers() -> None:
    redis = pytest.importorskip("redis")
    client = redis.Redis.from_url("redis://127.0.0.1:6379/0")
    key = bucket_key(f"https://hooks.example/{uuid.uuid4().hex}")
    one, two = RedisBuckets(client), RedisBuckets(client)  # as two worker processes would
    waits = [one.reserve(key, 2.0), two.reserve(key, 2.0), one.reserve(key, 2.0)]
    assert waits[0] == pytest.approx(0.0, abs=0.05)
    assert waits[1] == pytest.approx(0.5, abs=0.05)
    assert waits[2] == pytest.approx(1.0, abs=0.05)
    client.delete(key)


def test_notify_test_command_sends_a_sample_without_showing_the_url(tmp_path: Path) -> None:
    import typer

    from worker.cli.notify import register

    app = typer.Typer()

    @app.callback()
    def root() -> None:
        """Lookout."""

    register(app)
    with FakeChat("slack") as fake:
        config = tmp_path / "lookout.yaml"
        config.write_text(
            f"store_url: sqlite:///{tmp_path / 'l.db'}\n"
            f"channels:\n  ops: {{type: slack, url: '{fake.url()}', allow_private_address: true}}\n"
            "alerts: {rate_limiter: memory}\n",
            encoding="utf-8",
        )
        env = {"LOOKOUT_CONFIG": str(config)}
        runner = CliRunner()
        sent = runner.invoke(app, ["notify", "test", "ops"], env=env)
        unknown = runner.invoke(app, ["notify", "test", "nope"], env=env)
        logged = runner.invoke(app, ["notify", "log", "--attempts"], env=env)
        body = fake.requests[0].body.decode()
    assert sent.exit_code == 0, sent.output
    assert sent.output.startswith("sent          test test -> ops (slack) HTTP 200")
    assert fake.url() not in sent.output + logged.output
    assert "&lt;!here&gt;" in body and "<!here>" not in body
    assert unknown.exit_code == 2 and "unknown channel 'nope'; known: ops" in unknown.output
    assert "#1 message sent HTTP 200" in logged.output


def test_the_celery_task_body_delivers_a_stored_run_in_process(tmp_path: Path) -> None:
    from worker.service.delivery_tasks import deliver_run_now

    with FakeChat("webhook") as fake:
        settings = settings_for({"c": fake.channel()})
        settings.store_url = f"sqlite:///{tmp_path / 'l.db'}"
        store = Store(settings.store_url)
        report = stored(store, "a")
        store.close()
        assert report.run_id is not None
        [sent] = deliver_run_now(report.run_id, settings)
        assert deliver_run_now(report.run_id, settings) == []
        assert deliver_run_now(999, settings) == []
        assert len(fake.requests) == 1
    assert (sent["status"], sent["event"], sent["channel"]) == ("sent", "needs_attention", "c")


def test_user_info_of_a_webhook_url_is_redacted_in_every_form(store: Store) -> None:
    with FakeChat("webhook") as fake:
        channel = fake.channel()
        host = channel["url"].split("://", 1)[1].split("/", 1)[0]
        channel["url"] = channel["url"].replace("http://", "http://bob:pw%40x@")
        # what a server may say back: the URL decoded and cut, and the Basic header
        said = f"denied for http://bob:pw@x@{host}/ (Authorization: Basic Ym9iOnB3QHg=)"
        fake.script(Reply(401, said))
        settings = settings_for({"c": channel}, max_attempts=1)
        record = send_test(store, settings, "c")
    texts = [record.error or ""] + [a.error or "" for a in attempts_of(store.engine, record.id)]
    for text in texts:
        assert "pw" not in text and "Ym9iOnB3QHg=" not in text, text
