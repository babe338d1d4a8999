"""``alerts.routes`` as rules: by owner, tags and severity, every match until ``stop:``."""

from __future__ import annotations

from pathlib import Path

import pytest

from checks.errors import ConfigError
from checks.settings.alerts import EventKind
from checks.settings.config import load_settings
from tests.worker.alerts.test_incident import settings_for
from worker.alerts.routing import About, recipients

NA, WARNED = EventKind.NEEDS_ATTENTION, EventKind.WARNED
CHANNELS = {n: {"type": "webhook", "url": f"https://hooks.example.com/{n}"} for n in "abcdz"}
RULES = [
    {"severity": "high", "channels": ["a"]},
    {"owner": ["finance", "billing"], "channels": ["b"], "stop": True},
    {"tags": ["pii", "gdpr"], "channels": ["c"]},
    {"events": ["warned"], "tags": ["pii"], "channels": ["d"]},
]


def who(owner: str | None = None, tags: tuple[str, ...] = (), severity: str = "medium") -> About:
    return About(owner, tags, severity)


@pytest.mark.parametrize(
    ("about", "notify", "expected"),
    [
        (who(severity="high"), [], ["a"]),
        (who(severity="high", tags=("gdpr",)), [], ["a", "c"]),  # every match
        (who(owner="finance", tags=("pii",)), [], ["b"]),  # stop: the pii rule is not read
        (who(owner="finance", severity="high", tags=("pii",)), [], ["a", "b"]),
        (who(tags=("pii",)), ["z"], ["z", "c"]),  # notify: and the routes
        (who(owner="ops"), [], ["z"]),  # nothing matched: default_channels
        (who(owner="ops"), ["a"], ["a"]),
    ],
)
def test_every_matching_rule_adds_until_stop_and_default_is_the_fallback(
    about: About, notify: list[str], expected: list[str]
) -> None:
    settings = settings_for(CHANNELS, routes=RULES, default_channels=["z"])
    assert recipients(NA, notify, settings, about) == expected


def test_warned_reaches_only_rules_that_list_it() -> None:
    settings = settings_for(CHANNELS, routes=RULES, default_channels=["z"])
    assert recipients(WARNED, [], settings, who(severity="high", tags=("pii",))) == ["d"]
    assert recipients(WARNED, [], settings, who(severity="high")) == []


def test_a_channel_takes_only_its_events_whatever_the_route() -> None:
    channels = {**CHANNELS, "a": {**CHANNELS["a"], "events": ["run_error"]}}
    settings = settings_for(channels, routes=RULES, default_channels=["z"])
    assert recipients(NA, [], settings, who(severity="high")) == []
    assert recipients(EventKind.RUN_ERROR, [], settings, who(severity="high")) == ["a"]


def test_the_mapping_form_still_adds_per_event() -> None:
    settings = settings_for(CHANNELS, routes={"run_error": ["a"]}, default_channels=["z"])
    assert recipients(EventKind.RUN_ERROR, [], settings, who()) == ["z", "a"]
    assert recipients(NA, [], settings, who()) == ["z"]


def test_a_route_naming_an_unknown_channel_is_placed_with_the_closest(tmp_path: Path) -> None:
    path = tmp_path / "lookout.yaml"
    path.write_text(
        "channels:\n"
        "  pager: {type: webhook, url: 'https://hooks.example.com/p'}\n"
        "alerts:\n"
        "  routes:\n"
        "    - {severity: high, channels: [pager]}\n"
        "    - {owner: finance, channels: [pagr]}\n"
    )
    with pytest.raises(ConfigError) as caught:
        load_settings(path, env={})
    assert caught.value.location_message() == (
        f"{path}:6:35: alerts.routes.1.channels.0: unknown channel 'pagr'"
        " (did you mean 'pager'?); known: pager"
    )


def test_a_rule_key_that_does_not_exist_is_refused_at_its_place(tmp_path: Path) -> None:
    path = tmp_path / "lookout.yaml"
    path.write_text("alerts:\n  routes:\n    - {severity: urgent, channels: [x]}\n")
    with pytest.raises(ConfigError) as caught:
        load_settings(path, env={})
    assert caught.value.location_message() == (
        f"{path}:3:18: alerts.routes.0.severity: Input should be 'low', 'medium' or 'high'"
    )
