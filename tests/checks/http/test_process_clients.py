from __future__ import annotations

from dataclasses import dataclass

from checks.http.process_clients import ProcessClients


@dataclass
class Client:
    name: str


def test_clients_are_kept_by_key_and_a_dropped_one_closes_once_nobody_holds_it() -> None:
    closed: list[str] = []
    clients: ProcessClients[Client] = ProcessClients(kept=2, close=lambda c: closed.append(c.name))
    built: list[str] = []

    def build(name: str) -> Client:
        built.append(name)
        return Client(name)

    a = clients.get("a", lambda: build("a"))
    assert clients.get("a", lambda: build("again")) is a  # kept: built once
    clients.release(a)
    b = clients.get("b", lambda: build("b"))
    clients.release(b)
    c = clients.get("c", lambda: build("c"))  # "a" is the least recently used: dropped
    assert (built, len(clients)) == (["a", "b", "c"], 2)
    assert closed == []  # "a" is still held once (two gets, one release)
    clients.release(a)
    assert closed == ["a"]
    clients.release(a)  # a release too many changes nothing
    clients.release(c)
    assert closed == ["a"] and clients.get("c", lambda: build("c2")) is c
