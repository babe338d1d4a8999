"""Nothing to deliver or list is said, not silent: ``notify log`` and ``run --notify``.

Through the real entry point (``worker.cli.app.main``), run in this process as a
child process would run it (``tests.cli_support.run_lookout``), a SQLite store and
the fake chat service of ``worker.alerts.fake_chat``.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from checks.settings.config import Settings, default_config_data
from tests.cli_support import run_lookout
from tests.worker.service.service_support import write_automation
from worker.alerts.fake_chat import FakeChat

NOTHING = (
    "alerts are recorded as they are sent by the service or 'lookout run NAME --notify', and"
    " 'lookout notify test CHANNEL' sends one (see the README's 'Alerts to chat')"
)
NO_CHANNELS = "no channels configured: no alerts sent (see the README's 'Alerts to chat')"
NOTHING_TO_SEND = "alerts: none sent for this run (no event it announces goes to a channel)"


def environment(tmp_path: Path, flights_settings: Settings, **config: Any) -> dict[str, str]:
    folder = tmp_path / "automations"
    folder.mkdir(exist_ok=True)
    data = {
        **default_config_data(),
        "store_url": f"sqlite:///{tmp_path / 'lookout.db'}",
        "cache_dir": flights_settings.cache_dir,
        "automations_dir": str(folder),
        **config,
    }
    path = tmp_path / "lookout.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return {"PATH": "/usr/bin:/bin", "LOOKOUT_CONFIG": str(path), "COLUMNS": "200"}


def lookout(env: dict[str, str], *argv: str) -> subprocess.CompletedProcess[str]:
    """``lookout ARGV`` in this process, as a child with only ``env``'s variables."""
    return run_lookout(argv, env)


def test_notify_log_says_when_no_delivery_is_recorded(
    tmp_path: Path, flights_settings: Settings
) -> None:
    env = environment(tmp_path, flights_settings)
    text = lookout(env, "notify", "log")
    assert (text.returncode, text.stderr) == (0, "")
    assert text.stdout == f"no deliveries recorded: {NOTHING}\n"
    only = lookout(env, "notify", "log", "--run", "5", "--status", "sent", "--attempts")
    assert (only.returncode, only.stderr) == (0, "")
    assert only.stdout == f"no deliveries recorded matching --run 5 --status sent: {NOTHING}\n"
    as_json = lookout(env, "notify", "log", "--json")
    assert (as_json.returncode, as_json.stdout, as_json.stderr) == (0, "[]\n", "")


def test_notify_log_json_is_one_list_of_deliveries_with_their_attempts(
    tmp_path: Path, flights_settings: Settings
) -> None:
    with FakeChat("slack") as fake:
        channels = {"ops": fake.channel()}
        env = environment(
            tmp_path, flights_settings, channels=channels, alerts={"rate_limiter": "memory"}
        )
        sent = lookout(env, "notify", "test", "ops")
    assert sent.returncode == 0, sent.stderr
    logged = lookout(env, "notify", "log", "--json")
    assert (logged.returncode, logged.stderr) == (0, "")
    [delivery] = json.loads(logged.stdout)
    assert (delivery["run_id"], delivery["event"], delivery["channel"]) == (None, "test", "ops")
    assert (delivery["status"], delivery["http_status"], delivery["attempts"]) == ("sent", 200, 1)
    assert [(a["number"], a["kind"], a["outcome"]) for a in delivery["attempts_detail"]] == [
        (1, "message", "sent")
    ]
    assert fake.url() not in logged.stdout


@pytest.mark.slow
def test_run_notify_without_channels_says_once_that_no_alert_was_sent(
    tmp_path: Path, flights_settings: Settings
) -> None:
    env = environment(tmp_path, flights_settings)
    folder = tmp_path / "automations"
    failing = [{"name": "no flights", "sql": "SELECT count(*) FROM flights", "expect": "== 0"}]
    write_automation(folder, "first", checks=failing)  # Needs attention: it has events
    write_automation(folder, "second")
    ran = lookout(env, "run", "first", "second", "--notify")
    assert ran.returncode == 1, ran.stdout + ran.stderr
    assert ran.stderr == f"{NO_CHANNELS}\n"
    as_json = lookout(env, "run", "second", "--notify", "--json")
    assert as_json.returncode == 0, as_json.stdout + as_json.stderr
    assert as_json.stderr.splitlines()[0] == NO_CHANNELS
    plain = lookout(env, "run", "first")
    assert (plain.returncode, plain.stderr) == (1, "")  # no --notify: nothing said of alerts


@pytest.mark.slow  # over 2 s: make test runs it, make test-fast leaves it out
def test_run_notify_with_a_channel_prints_its_alerts_and_not_the_no_channel_line(
    tmp_path: Path, flights_settings: Settings
) -> None:
    with FakeChat("slack") as fake:
        channels = {"ops": fake.channel()}
        alerts = {"rate_limiter": "memory", "default_channels": ["ops"]}
        env = environment(tmp_path, flights_settings, channels=channels, alerts=alerts)
        failing = [{"name": "no flights", "sql": "SELECT count(*) FROM flights", "expect": "== 0"}]
        write_automation(tmp_path / "automations", "first", checks=failing)
        write_automation(tmp_path / "automations", "second")  # Clear: no event
        ran = lookout(env, "run", "first", "--notify")
        quiet = lookout(env, "run", "second", "--notify")
    assert ran.returncode == 1, ran.stdout + ran.stderr
    assert ran.stderr == "alert: needs_attention → ops: sent\n"
    assert (quiet.returncode, quiet.stderr) == (0, f"{NOTHING_TO_SEND}\n")
