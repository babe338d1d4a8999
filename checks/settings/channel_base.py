"""The fields and URL rules every channel type shares (``checks.settings.alerts`` documents them).

A URL must not be empty; a webhook's is http(s); a URL whose host is this
machine or a cloud metadata service (``addresses.py``) is refused unless the
channel sets ``allow_private_address: true``.
"""

from __future__ import annotations

from typing import ClassVar
from urllib.parse import urlsplit

from pydantic import Field, ValidationInfo, field_validator

from checks.settings.addresses import refused_url
from checks.settings.alert_events import EventKind
from checks.settings.channel_urls import APPRISE_HOST_SCHEMES, url_secrets
from checks.settings.quiet_hours import QuietHours
from checks.settings.strict import Strict, config_error, http_url


class ChannelBase(Strict):
    """Fields every channel type has.

    Attributes:
        allow_private_address: let ``url`` name this machine (``localhost``,
            127.0.0.0/8, ``::1``), a link-local address (169.254.0.0/16,
            fe80::/10) or a cloud metadata service; refused at load otherwise
            (``checks/settings/addresses.py``). Private ranges need no flag.
        url: the webhook (or Apprise) URL; a secret, redacted everywhere it is shown.
        quiet_hours: hold back alerts in a daily window, except urgency ``act_now``.
        events: the events this channel accepts (default all); see the module docstring.
        rate_per_s: most messages per second to this URL (a token bucket, burst 1).
            Default 1.0: Slack's documented limit for incoming webhooks.
        timeout_s: time limit of one HTTP request, in seconds.
    """

    WEBHOOK: ClassVar[bool] = True  # the URL is an http(s) webhook
    # before ``url``: its validator reads this flag from the fields validated so far
    allow_private_address: bool = False
    url: str
    quiet_hours: QuietHours | None = None
    events: list[EventKind] | None = None
    rate_per_s: float = Field(default=1.0, gt=0, le=100)
    timeout_s: float = Field(default=10.0, gt=0, le=120)

    @field_validator("url")
    @classmethod
    def _not_empty(cls, value: str) -> str:
        if not value.strip():
            raise config_error(
                "the channel's URL is empty: give its webhook URL (or set the environment "
                "variable it names to one)"
            )
        if cls.WEBHOOK:  # an Apprise URL has a scheme per service (mailtos://, tgram://…)
            http_url(value)
        return value

    @field_validator("url")
    @classmethod
    def _not_this_machine(cls, value: str, info: ValidationInfo) -> str:
        if info.data.get("allow_private_address"):
            return value
        # an Apprise service's "host" may be a token: all digits is an address only where
        # the plugin connects to it (json://, xml://, form://…)
        scheme = urlsplit(value.strip()).scheme.lower()
        numeric = cls.WEBHOOK or scheme in APPRISE_HOST_SCHEMES
        refused = refused_url(value, numeric_names=numeric)
        if refused:
            raise config_error(refused)
        return value

    def accepts(self, event: EventKind) -> bool:
        """Return whether this channel takes ``event`` (no ``events:`` list: every event)."""
        return self.events is None or event in self.events

    def secrets(self) -> list[str]:
        """Return the URL and the token-like parts of it, for ``redact``."""
        return url_secrets(self.url)
