"""Send-time address check: a channel's host is resolved once, checked, and connected to as checked.

The load-time rule (``checks/settings/addresses.py``) reads only the URL's
text; a name can still resolve to this machine or the metadata service
(``127.0.0.1.nip.io``, an ``/etc/hosts`` line, a DNS answer changed after
load). ``GuardedTransport`` resolves the host itself, refuses the request when
any address is refused, and sends it to the first address it checked (the
``Host`` header and TLS name stay the URL's), so a second lookup by the HTTP
library cannot land elsewhere (DNS rebinding).

A request whose ``ALLOW_EXTENSION`` is true (its channel sets
``allow_private_address: true``) is passed on untouched. Apprise sends through
its own client and is not covered; nor is a request sent through a proxy from
the environment (the proxy resolves the name).
"""

from __future__ import annotations

import ipaddress
import socket
import threading
from collections.abc import Callable

import httpx

from checks.settings.addresses import refused_host

ALLOW_EXTENSION = "lookout_allow_private_address"
"""Request extension (bool): the channel allows this machine and link-local addresses."""

Resolver = Callable[[str, int], list[str]]


class RefusedAddress(httpx.ConnectError):
    """The channel's host resolved to an address a channel may not post to."""


def resolve(host: str, port: int) -> list[str]:
    """Return the addresses ``getaddrinfo`` gives ``host`` for TCP, in its order.

    Raises:
        httpx.ConnectError: the name does not resolve.
    """
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError as exc:
        raise httpx.ConnectError(f"cannot resolve the channel's host: {exc}") from None
    return [str(info[4][0]) for info in infos]


class GuardedTransport(httpx.BaseTransport):
    """An ``httpx`` transport that checks where a request really goes before sending it.

    Each host name gets its own inner transport: its pool is keyed by the
    address, and a TLS connection verified for one name must not be reused for
    another name at the same address.

    Args:
        inner: makes the transport that sends (default ``httpx.HTTPTransport``).
        resolver: name -> addresses (default ``resolve``; tests pass their own).
    """

    def __init__(
        self,
        inner: Callable[[], httpx.BaseTransport] = httpx.HTTPTransport,
        resolver: Resolver = resolve,
    ) -> None:
        self._make = inner
        self._inners: dict[str, httpx.BaseTransport] = {}
        self._lock = threading.Lock()  # one client may be shared by threads
        self._resolve = resolver

    def _inner(self, host: str) -> httpx.BaseTransport:
        with self._lock:
            if host not in self._inners:
                self._inners[host] = self._make()
            return self._inners[host]

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        """Send ``request`` to a checked address of its host.

        Raises:
            RefusedAddress: an address of the host is loopback, link-local,
                unspecified or a metadata service's (see ``refused_host``).
            httpx.ConnectError: the host does not resolve.
        """
        host = request.url.host
        if request.extensions.get(ALLOW_EXTENSION) is True:
            return self._inner(host).handle_request(request)
        reason = refused_host(host)
        if reason is not None:
            raise RefusedAddress(f"the channel's host is refused: {reason}")
        if _is_literal(host):
            return self._inner(host).handle_request(request)
        port = request.url.port or (443 if request.url.scheme == "https" else 80)
        addresses = self._resolve(host, port)
        for address in addresses:
            reason = refused_host(address)
            if reason is not None:  # any one: a name mixing in such an address is refused whole
                raise RefusedAddress(f"the channel's host resolves to a refused address: {reason}")
        if not addresses:
            raise httpx.ConnectError("the channel's host resolves to no address")
        # connect to an address checked; Host (already set) and TLS keep the name
        url = request.url
        request.extensions = {**request.extensions, "sni_hostname": host}
        failed: httpx.ConnectError | None = None
        for address in dict.fromkeys(addresses):  # in order, as a socket connect tries them
            request.url = url.copy_with(host=address)
            try:
                return self._inner(host).handle_request(request)
            except httpx.ConnectError as exc:  # nothing was sent: the next address may answer
                failed = exc
        assert failed is not None
        raise failed

    def close(self) -> None:
        """Close the inner transports."""
        with self._lock:
            inners, self._inners = list(self._inners.values()), {}
        for inner in inners:
            inner.close()


def _is_literal(host: str) -> bool:
    """Return whether ``host`` is an IP address already (nothing to resolve)."""
    try:
        ipaddress.ip_address(host.split("%")[0])
    except ValueError:
        return False
    return True
