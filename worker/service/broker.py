"""The broker at ``redis_url``: whether it answers, and the one line that says it does not.

``lookout run-now`` sends a run's message to the broker, and ``lookout worker``
and ``lookout beat`` wait for it. When it cannot be reached (Redis is down, or
the URL names the wrong host, port or database), each says so in one line, made
here: the URL with its password hidden (``checks.settings.config.redact``), the
broker's own words (kombu's ``OperationalError``), and the setting to fix.

A run ``run-now`` could not send stays queued and unsent: the service's reaper
sends it once the broker answers (``worker.service.reaper.to_resend``), the one
rule for every message that did not leave (``worker.service.dispatch``).
"""

from __future__ import annotations

from checks.settings.config import redact

BROKER_SETTING = "LOOKOUT_REDIS_URL (redis_url in the config)"
"""Where the broker's URL is set: the environment variable, or the config file's key."""

PROBE_TIMEOUT_S = 2.0
"""How long ``probe`` waits for a connection, and for the broker's answer, in seconds."""


def unreachable(url: str, detail: str, secrets: list[str]) -> str:
    """Return the line saying the broker at ``url`` could not be reached, and what to fix.

    Args:
        url: the broker's URL (``Settings.redis_url``); its password is hidden.
        detail: the broker client's error, e.g. ``Error 111 connecting to
            127.0.0.1:1. Connection refused.`` (a final full stop is dropped).
        secrets: ``Settings.secrets()``, hidden wherever they appear.

    Returns:
        One line, without a final full stop, for the caller to extend.
    """
    detail = " ".join(detail.split()).rstrip(".") or "no answer"
    line = (
        f"the broker at {url} could not be reached ({detail}): start Redis,"
        f" or set {BROKER_SETTING} to its URL"
    )
    return redact(line, secrets)


def probe(url: str, *, timeout_s: float = PROBE_TIMEOUT_S) -> str | None:
    """Connect to the broker at ``url`` once; return its error, or None when it answers.

    One connection attempt and one retry, each waiting at most ``timeout_s``;
    with Redis the channel opened selects the URL's database, so a database
    number out of range is found too.

    Returns:
        kombu's ``OperationalError`` text (e.g. ``Error 111 connecting to
        127.0.0.1:1. Connection refused.``), or None.
    """
    from kombu.connection import Connection
    from kombu.exceptions import OperationalError

    options = {"socket_connect_timeout": timeout_s, "socket_timeout": timeout_s}
    try:
        connection = Connection(url, connect_timeout=timeout_s, transport_options=options)  # type: ignore[no-untyped-call]
        with connection as conn:
            conn.ensure_connection(max_retries=1, interval_start=0)
            conn.default_channel  # noqa: B018 - opening the channel is the check
    except OperationalError as exc:
        return str(exc)
    return None
