"""The senders, one module per service, and ``sender_for`` to pick one by channel type."""

from __future__ import annotations

import httpx

from checks.settings.alerts import ChannelConfig
from worker.alerts.channel import Sender
from worker.alerts.channels.apprise import AppriseSender
from worker.alerts.channels.discord import DiscordSender
from worker.alerts.channels.google_chat import GoogleChatSender
from worker.alerts.channels.opsgenie import OpsgenieSender
from worker.alerts.channels.pagerduty import PagerDutySender
from worker.alerts.channels.slack import SlackSender
from worker.alerts.channels.teams import TeamsSender
from worker.alerts.channels.webhook import WebhookSender

SENDERS: dict[str, type[Sender]] = {
    cls.type: cls
    for cls in (
        SlackSender,
        TeamsSender,
        GoogleChatSender,
        DiscordSender,
        WebhookSender,
        AppriseSender,
        PagerDutySender,
        OpsgenieSender,
    )
}


def sender_for(name: str, config: ChannelConfig, client: httpx.Client) -> Sender:
    """Return the sender for a configured channel (its class chosen by ``config.type``)."""
    return SENDERS[config.type](name, config, client)


__all__ = ["SENDERS", "Sender", "sender_for"]
