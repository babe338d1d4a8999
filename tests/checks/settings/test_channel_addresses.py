"""Channel URLs naming this machine or a cloud metadata service are refused at load."""

from __future__ import annotations

import ipaddress
import socket
from pathlib import Path

import pytest

from checks.errors import ConfigError
from checks.settings.addresses import lenient_ipv4, refused_host, refused_url
from checks.settings.config import Settings, load_settings

WAY_OUT = (
    ": a channel may not post to this machine or a cloud metadata service "
    "(set allow_private_address: true on the channel to allow it)"
)
LOOPBACK = "127.0.0.1 is a loopback address (this machine)"
METADATA = "169.254.169.254 is link-local (where cloud metadata services answer)"

REFUSED = [
    ("http://[::ffff:169.254.169.254]/", f"{METADATA}, written as IPv6"),
    ("http://169.254.169.254/latest/meta-data", METADATA),
    (
        "http://169.254.170.2/v2/credentials",
        "169.254.170.2 is link-local (where cloud metadata services answer)",
    ),
    ("http://localhost:8080/hook", "'localhost' is this machine (loopback)"),
    ("https://LOCALHOST./hook", "'localhost' is this machine (loopback)"),
    ("http://relay.localhost/hook", "'relay.localhost' is this machine (loopback)"),
    ("http://%6c%6fcalhost/hook", "'localhost' is this machine (loopback)"),
    ("http://127.1/", LOOPBACK),
    ("http://0x7f000001/", LOOPBACK),
    ("http://2130706433/", LOOPBACK),
    ("http://0177.0.0.1/", LOOPBACK),
    ("http://0x7f.0.0.1/", LOOPBACK),
    ("http://127.0.0.1./", LOOPBACK),
    ("http://127.8.9.10:9000/x", "127.8.9.10 is a loopback address (this machine)"),
    ("http://2852039166/", METADATA),  # 169.254.169.254 as one decimal number
    ("http://0xa9.0xfe.0xa9.0xfe/", METADATA),
    ("http://169.254.43518/", METADATA),  # the last part fills two bytes
    ("http://[::1]:8080/", "::1 is a loopback address (this machine)"),
    ("http://[::ffff:7f00:1]/", f"{LOOPBACK}, written as IPv6"),
    ("http://[::127.0.0.1]/", f"{LOOPBACK}, written as IPv6"),
    ("http://[64:ff9b::a9fe:a9fe]/", f"{METADATA}, written as IPv6"),
    (
        "http://[fe80::1%25eth0]/",
        "fe80::1%eth0 is link-local (where cloud metadata services answer)",
    ),
    ("http://[FE80::a:b]/", "fe80::a:b is link-local (where cloud metadata services answer)"),
    ("http://0.0.0.0:8080/", "0.0.0.0 means this machine"),
    ("http://0/", "0.0.0.0 means this machine"),
    ("http://[::]/", ":: means this machine"),
    (
        "http://metadata.google.internal/computeMetadata/v1/",
        "'metadata.google.internal' is a cloud metadata service's name",
    ),
    ("http://metadata/computeMetadata/v1/", "'metadata' is a cloud metadata service's name"),
    ("http://[fd00:ec2::254]/latest/", "fd00:ec2::254 is a cloud metadata service address"),
    ("http://100.100.100.200/latest/", "100.100.100.200 is a cloud metadata service address"),
    ("https://hooks.slack.com@127.0.0.1/services/x", LOOPBACK),  # user-info is not the host
]

ACCEPTED = [
    "https://hooks.slack.com/services/T/B/x",
    "http://10.0.0.5/hook",  # private ranges: on-premise relays
    "http://172.16.4.2:8080/hook",
    "http://192.168.1.20/hook",
    "http://[fd12:3456::1]/hook",
    "http://100.64.0.1/hook",
    "http://8.8.8.8/hook",
    "http://[2001:db8::1]/hook",
    "http://127.0.0.1.example.com/hook",  # a name, resolved by DNS (not covered: see the docs)
    "http://localhost.example.com/hook",
    "http://metadata.example.com/hook",
    "http://1.2.3.4.5/hook",  # five parts: a name to inet_aton too
    "http://0x1g/hook",
]


@pytest.mark.parametrize(("url", "reason"), REFUSED)
def test_a_url_naming_this_machine_or_a_metadata_service_is_refused(url: str, reason: str) -> None:
    assert refused_url(url) == reason + WAY_OUT


@pytest.mark.parametrize("url", ACCEPTED)
def test_public_and_private_range_urls_are_accepted(url: str) -> None:
    assert refused_url(url) is None


def test_the_lenient_ipv4_forms_are_read_as_inet_aton_reads_them() -> None:
    assert lenient_ipv4("127.1") == ipaddress.IPv4Address("127.0.0.1")
    assert lenient_ipv4("10.1.258") == ipaddress.IPv4Address("10.1.1.2")
    assert lenient_ipv4("0x7f.1") == ipaddress.IPv4Address("127.0.0.1")
    assert lenient_ipv4("4294967295") == ipaddress.IPv4Address("255.255.255.255")
    assert lenient_ipv4("4294967296") is None  # too big: a name
    assert lenient_ipv4("256.1.1.1") is None
    assert lenient_ipv4("08.1.1.1") is None  # 8 is not an octal digit
    assert lenient_ipv4("hooks.slack.com") is None
    assert lenient_ipv4("1..1") is None


@pytest.mark.parametrize(
    "host",
    ["127.1", "0x7f000001", "2130706433", "0177.0.0.1", "0xa9.0xfe.0xa9.0xfe", "169.254.43518"],
)
def test_the_lenient_forms_agree_with_the_c_library(host: str) -> None:
    # what getaddrinfo, hence httpx and requests, connects to for such a host
    assert lenient_ipv4(host) == ipaddress.IPv4Address(socket.inet_aton(host))


def test_an_all_digit_apprise_token_is_not_an_address_unless_asked() -> None:
    # tgram://BOT_ID:TOKEN/CHAT: the "host" is a bot id, which may fall in 127.0.0.0/8
    assert refused_host("2134567890", numeric_names=False) is None
    assert refused_host("2134567890") == "127.58.235.210 is a loopback address (this machine)"
    assert refused_host("127.1", numeric_names=False) == LOOPBACK  # dotted: still an address


def channel(url: str, **fields: object) -> dict[str, object]:
    return {"channels": {"c": {"type": "webhook", "url": url, **fields}}}


@pytest.mark.parametrize("kind", ["slack", "teams", "google_chat", "discord", "webhook", "apprise"])
def test_every_channel_type_refuses_it_unless_allowed(kind: str) -> None:
    url = "json://127.0.0.1:9/a" if kind == "apprise" else "http://127.0.0.1:9/a"
    with pytest.raises(ValueError, match="loopback address"):
        Settings.model_validate({"channels": {"c": {"type": kind, "url": url}}})
    allowed = {"type": kind, "url": url, "allow_private_address": True}
    settings = Settings.model_validate({"channels": {"c": allowed}})
    assert settings.channels["c"].url == url
    assert settings.channels["c"].allow_private_address is True


def test_apprise_checks_the_host_where_its_plugin_connects_and_not_tokens() -> None:
    with pytest.raises(ValueError, match="loopback address"):
        Settings.model_validate(
            {"channels": {"c": {"type": "apprise", "url": "json://2130706433/a"}}}
        )
    with pytest.raises(ValueError, match="is this machine"):
        Settings.model_validate(
            {"channels": {"c": {"type": "apprise", "url": "mailtos://u:p@localhost"}}}
        )
    tgram = "tgram://2134567890:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw/-100123"
    settings = Settings.model_validate({"channels": {"c": {"type": "apprise", "url": tgram}}})
    assert settings.channels["c"].url == tgram


def test_a_refused_url_in_a_config_file_points_at_its_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "lookout.yaml"
    path.write_text(
        "channels:\n"
        "  ok: {type: slack, url: 'https://hooks.slack.com/services/T/B/x'}\n"
        "  meta:\n"
        "    type: webhook\n"
        "    url: http://[::ffff:169.254.169.254]/\n",
        encoding="utf-8",
    )
    with pytest.raises(ConfigError) as caught:
        load_settings(path, env={})
    assert caught.value.location_message() == (
        f"{path}:5:10: channels.meta.url: {METADATA}, written as IPv6{WAY_OUT}"
    )


def test_a_refused_url_from_the_environment_is_named_at_its_reference(tmp_path: Path) -> None:
    path = tmp_path / "lookout.yaml"
    path.write_text("channels:\n  ops: {type: slack, url: '${SLACK_URL}'}\n", encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_settings(path, env={"SLACK_URL": "http://localhost:8080/hook"})
    assert caught.value.location_message() == (
        f"{path}:2:27: channels.ops.url: 'localhost' is this machine (loopback){WAY_OUT}"
    )
    assert "8080/hook" not in caught.value.location_message()  # the URL is not echoed


def test_allow_private_address_in_a_config_file_lets_a_local_relay_through(tmp_path: Path) -> None:
    path = tmp_path / "lookout.yaml"
    path.write_text(
        "channels:\n"
        "  relay:\n"
        "    type: webhook\n"
        "    url: http://localhost:8080/hook\n"
        "    allow_private_address: true\n",
        encoding="utf-8",
    )
    settings = load_settings(path, env={})
    assert settings.channels["relay"].url == "http://localhost:8080/hook"
