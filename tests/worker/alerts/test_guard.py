"""The send-time guard: a channel's host is resolved once, checked, and connected to as checked."""

from __future__ import annotations

import httpx
import pytest

from checks.settings.config import Settings
from worker.alerts.channels import sender_for
from worker.alerts.fake_chat import FakeChat
from worker.alerts.guard import ALLOW_EXTENSION, GuardedTransport, RefusedAddress
from worker.alerts.message import Alert

ALERT = Alert(
    event="needs_attention",
    automation="orders-positive",
    run_id=42,
    link="https://review.example/runs/42",
    finding="needs_attention",
    urgency="act_soon",
    flags=(),
    summary="3 orders have a negative amount.",
    owner="data-team",
    severity="high",
    thread_key="lookout-orders-positive-7",
    opened_at="2026-12-01T09:00:00+00:00",
)


class Answers:
    """A resolver answering from a script, one list of addresses per call."""

    def __init__(self, *answers: list[str]) -> None:
        self.answers = list(answers)
        self.asked: list[tuple[str, int]] = []

    def __call__(self, host: str, port: int) -> list[str]:
        self.asked.append((host, port))
        return self.answers.pop(0)


def guarded(resolver: Answers, seen: list[httpx.Request]) -> httpx.Client:
    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, text="ok")

    return httpx.Client(transport=GuardedTransport(lambda: httpx.MockTransport(answer), resolver))


def test_a_name_is_sent_to_the_address_checked_with_its_host_and_tls_name_kept() -> None:
    seen: list[httpx.Request] = []
    resolver = Answers(["93.184.216.34"])
    with guarded(resolver, seen) as client:
        client.post("https://hooks.example.com/services/x", content=b"{}")
    [request] = seen
    assert str(request.url) == "https://93.184.216.34/services/x"
    assert request.headers["Host"] == "hooks.example.com"
    assert request.extensions["sni_hostname"] == "hooks.example.com"
    assert resolver.asked == [("hooks.example.com", 443)]


@pytest.mark.parametrize(
    ("addresses", "reason"),
    [
        (["127.0.0.1"], "127.0.0.1 is a loopback address (this machine)"),
        (
            ["8.8.8.8", "169.254.169.254"],
            "169.254.169.254 is link-local (where cloud metadata services answer)",
        ),
        (["::ffff:127.0.0.1"], "127.0.0.1 is a loopback address (this machine), written as IPv6"),
        (["fe80::1%eth0"], "fe80::1%eth0 is link-local (where cloud metadata services answer)"),
    ],
)
def test_a_name_resolving_to_a_refused_address_is_not_sent(
    addresses: list[str], reason: str
) -> None:
    seen: list[httpx.Request] = []
    with guarded(Answers(addresses), seen) as client, pytest.raises(RefusedAddress) as caught:
        client.post("http://relay.example:8080/hook", content=b"{}")
    assert str(caught.value) == f"the channel's host resolves to a refused address: {reason}"
    assert seen == []


def test_a_name_rebound_between_requests_is_caught_on_the_request_that_would_use_it() -> None:
    seen: list[httpx.Request] = []
    resolver = Answers(["93.184.216.34"], ["169.254.169.254"])
    with guarded(resolver, seen) as client:
        client.post("http://hooks.example.com/a", content=b"{}")
        with pytest.raises(RefusedAddress):
            client.post("http://hooks.example.com/a", content=b"{}")
    assert [str(r.url) for r in seen] == ["http://93.184.216.34/a"]


def test_an_address_that_does_not_connect_is_followed_by_the_next_checked_one() -> None:
    tried: list[str] = []

    def answer(request: httpx.Request) -> httpx.Response:
        tried.append(request.url.host)
        if request.url.host == "2001:db8::7":  # no IPv6 route here
            raise httpx.ConnectError("Network is unreachable")
        return httpx.Response(200, text="ok")

    resolver = Answers(["2001:db8::7", "93.184.216.34"])
    transport = GuardedTransport(lambda: httpx.MockTransport(answer), resolver)
    with httpx.Client(transport=transport) as client:
        assert client.post("https://hooks.example.com/x", content=b"{}").status_code == 200
    assert tried == ["2001:db8::7", "93.184.216.34"]


def test_each_name_has_its_own_pool_so_a_tls_connection_is_not_shared_across_names() -> None:
    made: list[httpx.MockTransport] = []

    def make() -> httpx.MockTransport:
        made.append(httpx.MockTransport(lambda request: httpx.Response(200)))
        return made[-1]

    resolver = Answers(["93.184.216.34"], ["93.184.216.34"], ["93.184.216.34"])
    with httpx.Client(transport=GuardedTransport(make, resolver)) as client:
        for host in ("a.example.com", "b.example.com", "a.example.com"):
            client.post(f"https://{host}/x", content=b"{}")
    assert len(made) == 2


def test_an_allowed_channel_is_passed_on_untouched_and_not_resolved() -> None:
    seen: list[httpx.Request] = []
    resolver = Answers()
    with guarded(resolver, seen) as client:
        client.post("http://localhost:9/hook", content=b"{}", extensions={ALLOW_EXTENSION: True})
    assert [str(r.url) for r in seen] == ["http://localhost:9/hook"]
    assert resolver.asked == []


def test_a_refused_literal_is_refused_without_resolving() -> None:
    seen: list[httpx.Request] = []
    resolver = Answers()
    with guarded(resolver, seen) as client, pytest.raises(RefusedAddress) as caught:
        client.post("http://127.1/hook", content=b"{}")
    assert str(caught.value) == (
        "the channel's host is refused: 127.0.0.1 is a loopback address (this machine)"
    )
    assert resolver.asked == [] and seen == []


def test_a_sender_records_a_refused_address_as_permanent_and_the_fake_hears_nothing() -> None:
    with FakeChat("webhook") as fake:
        url = f"http://relay.example:{fake.port}/hook"  # a name: accepted at load
        settings = Settings.model_validate({"channels": {"c": {"type": "webhook", "url": url}}})
        transport = GuardedTransport(resolver=Answers(["127.0.0.1"]))
        with httpx.Client(transport=transport) as client:
            sender = sender_for("c", settings.channels["c"], client)
            result = sender.send(ALERT, sender.payload(ALERT))
        assert (result.kind, result.http_status, result.error) == (
            "permanent",
            None,
            "the channel's host resolves to a refused address: "
            "127.0.0.1 is a loopback address (this machine)",
        )
        assert fake.requests == []
        # the same fake through the same guard, from a channel that allows it: sent
        allowed = Settings.model_validate({"channels": {"c": fake.channel()}})
        with httpx.Client(transport=GuardedTransport()) as client:
            sender = sender_for("c", allowed.channels["c"], client)
            assert sender.send(ALERT, sender.payload(ALERT)).kind == "sent"
        assert len(fake.requests) == 1
