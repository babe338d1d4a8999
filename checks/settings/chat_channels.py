"""The chat and webhook channel types: Slack, Teams, Google Chat, Discord, a webhook, Apprise.

Teams Office 365 connector URLs (``outlook.office.com/webhook``,
``*.webhook.office.com``) are retired by Microsoft and refused; Slack and
Discord URLs are refused through ``apprise`` (its plugins turn escaped
mentions back into live ones: use the native types).
"""

from __future__ import annotations

from typing import ClassVar, Literal
from urllib.parse import urlsplit

from pydantic import Field, field_validator

from checks.settings.channel_base import ChannelBase
from checks.settings.channel_urls import refused_apprise_service, url_secrets
from checks.settings.strict import config_error

# Office 365 connector webhooks, retired by Microsoft in favour of Workflows.
_O365_HOSTS = ("outlook.office.com", "outlook.office365.com")
_O365_SUFFIX = ".webhook.office.com"


class SlackChannel(ChannelBase):
    """A Slack incoming webhook (``https://hooks.slack.com/services/…``); Block Kit messages."""

    type: Literal["slack"]


class TeamsChannel(ChannelBase):
    """A Microsoft Teams Workflows webhook ("When a Teams webhook request is received").

    Office 365 connector URLs are refused: Microsoft retired those connectors.
    """

    type: Literal["teams"]

    @field_validator("url")
    @classmethod
    def _workflows_only(cls, value: str) -> str:
        host = (urlsplit(value).hostname or "").lower()
        path = urlsplit(value).path.lower()
        if (host in _O365_HOSTS and path.startswith("/webhook")) or host.endswith(_O365_SUFFIX):
            raise config_error(
                "this is an Office 365 connector URL (outlook.office.com/webhook or "
                "*.webhook.office.com); Microsoft retired those connectors. In Teams, add the "
                "Workflows template 'Send webhook alerts to a channel' and use its URL"
            )
        return value


class GoogleChatChannel(ChannelBase):
    """A Google Chat space's incoming webhook (``https://chat.googleapis.com/v1/spaces/…``)."""

    type: Literal["google_chat"]


class DiscordChannel(ChannelBase):
    """A Discord channel webhook (``https://discord.com/api/webhooks/ID/TOKEN``)."""

    type: Literal["discord"]


class WebhookChannel(ChannelBase):
    """Any HTTP endpoint taking Lookout's JSON alert document.

    Attributes:
        secret: when set, each request carries ``X-Lookout-Timestamp`` (Unix
            seconds) and ``X-Lookout-Signature: sha256=HEX``, the HMAC-SHA256 with
            this key over ``timestamp + "." + body``.
        headers: extra request headers (e.g. ``Authorization``); their values are
            treated as secrets.
    """

    type: Literal["webhook"]
    secret: str | None = None
    headers: dict[str, str] = Field(default_factory=dict)

    def secrets(self) -> list[str]:
        """Return the URL, its token-like parts, the secret and the header values."""
        extra = [self.secret] if self.secret else []
        return [*url_secrets(self.url), *extra, *self.headers.values()]


class AppriseChannel(ChannelBase):
    """Any other service, through Apprise (plain text, long messages split).

    ``url`` is an Apprise URL (``mailtos://…``, ``tgram://…``, ``matrixs://…``…).
    Slack and Discord are refused here: Apprise's plugins for them turn escaped
    mentions back into live ones. Use ``type: slack`` / ``type: discord``.
    """

    type: Literal["apprise"]
    WEBHOOK: ClassVar[bool] = False

    @field_validator("url")
    @classmethod
    def _not_slack_or_discord(cls, value: str) -> str:
        service = refused_apprise_service(value)
        if service:
            raise config_error(
                f"{service} URLs are refused through apprise (its {service} plugin turns "
                f"escaped mentions back into live ones); use a channel of type: {service}"
            )
        return value
