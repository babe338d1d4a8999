"""The long tail of services, through Apprise: plain text, long messages split.

Apprise (``apprise`` on PyPI) knows about a hundred services by URL
(``mailtos://``, ``tgram://``, ``matrixs://``, ``json://``…). Lookout sends it
plain text (``body_format=text``) and adds ``overflow=split`` and
``format=text`` to the URL unless set, so a message longer than the service's
limit is split into several rather than cut or refused (Apprise's URL
options, "URLBasics").

Slack and Discord are refused, at config load and again here by the plugin
Apprise picks: their plugins turn escaped mentions back into live ones
(docs/design.md, Delivering alerts). Apprise reports success or failure but no HTTP status;
a failure is treated as transient (retried with backoff, bounded by
``alerts.max_attempts``), and its log lines are the error.
"""

from __future__ import annotations

import logging
import time
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from worker.alerts.channel import Sender, SendResult
from worker.alerts.channels.google_chat import with_query
from worker.alerts.message import TRUNCATED, Alert, defang, fit

BODY_MAX = 20_000  # Lookout's cap before Apprise splits per service
_REFUSED_PLUGINS = {"NotifySlack": "slack", "NotifyDiscord": "discord"}


class AppriseRefused(ValueError):
    """The URL would be sent with Apprise's Slack or Discord plugin, or is not an Apprise URL."""


@contextmanager
def _quiet_imports() -> Iterator[None]:
    """Silence the DeprecationWarnings Apprise's lazily loaded plugins raise (e.g. ``imghdr``)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        yield


def apprise_url(url: str) -> str:
    """Return ``url`` with ``overflow=split`` and ``format=text`` unless it sets them."""
    from urllib.parse import parse_qsl, urlsplit

    query = dict(parse_qsl(urlsplit(url).query))
    extra = {k: v for k, v in (("overflow", "split"), ("format", "text")) if k not in query}
    return with_query(url, **extra) if extra else url


def check_url(url: str) -> None:
    """Raise ``AppriseRefused`` unless Apprise accepts ``url`` with an allowed plugin."""
    with _quiet_imports():
        import apprise

        plugin = apprise.Apprise.instantiate(url)
    if plugin is None:
        raise AppriseRefused("apprise does not recognise this URL")
    service = _REFUSED_PLUGINS.get(type(plugin).__name__)
    if service:
        raise AppriseRefused(
            f"apprise would use its {service} plugin, which turns escaped mentions back into "
            f"live ones; use a channel of type: {service}"
        )


class AppriseSender(Sender):
    """Sends plain text through Apprise (which makes its own HTTP requests)."""

    type = "apprise"

    def payload(self, alert: Alert) -> dict[str, Any]:
        """Return ``{"title", "body"}``: facts one per line, the quoted text, the link."""
        lines = [f"{name}: {defang(value)}" for name, value in alert.facts()]
        body = "\n".join(lines)
        if alert.body:
            quoted, was_cut = fit(alert.body, BODY_MAX, escape=defang)
            body += "\n\n" + quoted
            if was_cut or alert.summary_truncated:
                body += f"\n… {TRUNCATED}"
        body += f"\n\nOpen the report: {alert.link}"
        return {"title": defang(alert.title), "body": body}

    def fallback_payload(self, alert: Alert) -> dict[str, Any]:
        """Return the one-line text."""
        return {"title": "", "body": defang(alert.fallback_text())}

    def send(self, alert: Alert, payload: dict[str, Any]) -> SendResult:
        """Notify once through Apprise; failures are transient (no HTTP status is known)."""
        with _quiet_imports():
            import apprise

        url = apprise_url(self.config.url)
        try:
            check_url(url)
        except AppriseRefused as exc:
            return SendResult("permanent", error=str(exc))
        notifier = apprise.Apprise()
        notifier.add(url)
        captured = _Lines()
        logger = logging.getLogger("apprise")
        logger.addHandler(captured)
        started = time.monotonic()
        try:
            with _quiet_imports():
                ok = notifier.notify(
                    body=payload["body"],
                    title=payload["title"],
                    body_format=apprise.NotifyFormat.TEXT,
                )
        finally:
            logger.removeHandler(captured)
        took = int((time.monotonic() - started) * 1000)
        if ok:
            return SendResult("sent", duration_ms=took)
        error = captured.lines[-1] if captured.lines else "apprise reported a failure"
        return SendResult("transient", error=f"apprise: {error[:300]}", duration_ms=took)


class _Lines(logging.Handler):
    """Collects Apprise's warning and error log lines of one notify call."""

    def __init__(self) -> None:
        super().__init__(level=logging.WARNING)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())
