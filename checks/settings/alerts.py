"""Chat channels and alert routing: the ``channels:`` and ``alerts:`` sections of the config.

Each channel is typed by its ``type`` (a discriminated union)::

    channels:
      ops-slack: {type: slack, url: "${SLACK_WEBHOOK_URL}"}
      ops-teams:
        type: teams
        url: "${TEAMS_WORKFLOW_URL}"
        quiet_hours: {start: "22:00", end: "07:00", timezone: Europe/Paris}
      data-chat: {type: google_chat, url: "${GCHAT_WEBHOOK_URL}"}
      community: {type: discord, url: "${DISCORD_URL}", events: [needs_attention, resolved]}
      pager: {type: webhook, url: "https://hooks.example.com/lookout", secret: "${HOOK_SECRET}"}
      email-ops: {type: apprise, url: "mailtos://user:${MAIL_PASSWORD}@example.com"}
      oncall: {type: pagerduty, routing_key: "${PAGERDUTY_ROUTING_KEY}"}
      opsgenie: {type: opsgenie, api_key: "${OPSGENIE_API_KEY}"}
    alerts:
      default_channels: [ops-slack]        # for automations without ``notify:``
      routes:                              # extra channels per event, for every automation
        run_error: [pager]
      on_warning: [data-chat]              # a Clear run with warned checks: who hears of it

Who receives an event of an automation: the automation's ``notify:`` channels
(or ``alerts.default_channels`` when it names none) that accept the event
(a channel's ``events:``, default all), plus ``alerts.routes[event]``. Only
events listed in ``alerts.events`` (default all six) are sent at all.
``alerts.routes`` may instead be a list of rules by owner, tags, severity and
event (``checks.settings.alert_routes``), whose channels are added to
``notify:``'s; ``default_channels`` is then used only when neither gave one.
A pager (``pagerduty``, ``opsgenie``) takes only an incident's events
(``PAGING_EVENTS``).

``warned`` (a Clear run with checks that broke their ``warn:`` level) is
opt-in: ``alerts.on_warning`` is ``false`` (the default: no channel hears of
it), ``true`` (the automation's ``notify:`` channels, or
``alerts.default_channels``, as for its other events) or a list of channel
names (those, for every automation); plus ``alerts.routes.warned``. It opens
no incident: each such run announces it once, nothing resolves it.

Rules checked at config load (a ``ConfigError`` naming the field):
Teams Office 365 connector URLs (``outlook.office.com/webhook``,
``*.webhook.office.com``) are retired by Microsoft and refused; a URL
whose host is this machine or a cloud metadata service (``addresses.py``) is
refused unless the channel sets ``allow_private_address: true``; Slack and
Discord URLs are refused through ``apprise`` (its plugins turn escaped
mentions back into live ones: use the native types); quiet hours are
``HH:MM`` in an IANA time zone; routes name configured channels (here).

The channel types live in modules of their own, re-exported here:
``channel_base.py`` (the fields every channel has), ``chat_channels.py``,
``paging_channels.py``, ``quiet_hours.py`` and ``channel_urls.py`` (a URL's
secrets, the Apprise plugins refused).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from checks.fields.rules import did_you_mean
from checks.settings.alert_events import ALL_EVENTS, EventKind
from checks.settings.alert_routes import RouteRule
from checks.settings.channel_urls import refused_apprise_service, url_secrets
from checks.settings.chat_channels import (
    AppriseChannel,
    DiscordChannel,
    GoogleChatChannel,
    SlackChannel,
    TeamsChannel,
    WebhookChannel,
)
from checks.settings.paging_channels import (
    PAGING_EVENTS,
    ROUTING_KEY_CHARS,
    OpsgenieChannel,
    PagerDutyChannel,
)
from checks.settings.quiet_hours import QuietHours
from checks.settings.strict import Strict

# Re-exported: the events, the channel types and their URL rules are the vocabulary of this
# section, imported from here by its callers.
__all__ = [
    "ALL_EVENTS",
    "PAGING_EVENTS",
    "ROUTING_KEY_CHARS",
    "AlertSettings",
    "AppriseChannel",
    "ChannelConfig",
    "DiscordChannel",
    "EventKind",
    "GoogleChatChannel",
    "OpsgenieChannel",
    "PagerDutyChannel",
    "QuietHours",
    "RouteRule",
    "SlackChannel",
    "TeamsChannel",
    "WebhookChannel",
    "check_channel_names",
    "refused_apprise_service",
    "url_secrets",
]


ChannelConfig = Annotated[
    SlackChannel
    | TeamsChannel
    | GoogleChatChannel
    | DiscordChannel
    | WebhookChannel
    | AppriseChannel
    | PagerDutyChannel
    | OpsgenieChannel,
    Field(discriminator="type"),
]


class AlertSettings(Strict):
    """Which alerts go where, and how hard delivery tries (the ``alerts:`` section).

    Attributes:
        default_channels: channels for automations without a ``notify:`` list.
        routes: a list of ``RouteRule``: by owner, tags, severity and event, the
            channels an automation's alerts go to (``checks.settings.alert_routes``);
            or, as before, a mapping event -> channels that also receive that event
            from every automation.
        events: the events sent at all (default all six).
        on_warning: who hears of a Clear run with warned checks (``warned``):
            ``false`` no one, ``true`` the automation's own channels, or a
            list of channel names; see the module docstring.
        summary_chars: most characters of the report summary quoted in a message
            (then "truncated — see the report" and the link).
        max_attempts: tries per message, counting the first (429, 5xx, timeouts).
        backoff_base_s: first wait after a 5xx or timeout, in seconds; doubles per try.
        backoff_max_s: longest such wait, in seconds.
        retry_after_cap_s: the longest ``Retry-After`` obeyed, in seconds; a 429
            asking for more ends the delivery as failed (no retry storm).
        rate_limiter: where the per-URL token buckets live: ``redis`` (shared by
            every worker, at ``redis_url``), ``memory`` (this process), or ``auto``
            (Redis when it answers a ping within 0.2 s, else memory).
        stale_sending_s: a delivery still ``sending`` after this many seconds (its
            worker died mid-send) is marked failed as "outcome unknown", never resent.
    """

    default_channels: list[str] = Field(default_factory=list)
    routes: dict[EventKind, list[str]] | list[RouteRule] = Field(default_factory=dict)
    events: list[EventKind] = Field(default_factory=lambda: list(ALL_EVENTS))
    on_warning: bool | list[str] = False
    summary_chars: int = Field(default=1_000, ge=100, le=2_500)
    max_attempts: int = Field(default=4, ge=1, le=10)
    backoff_base_s: float = Field(default=1.0, ge=0)
    backoff_max_s: float = Field(default=30.0, ge=0)
    retry_after_cap_s: float = Field(default=60.0, ge=0)
    rate_limiter: Literal["auto", "redis", "memory"] = "auto"
    stale_sending_s: float = Field(default=900.0, gt=0)


def check_channel_names(alerts: AlertSettings, channels: dict[str, object]) -> None:
    """Raise a ``ConfigError`` at the first place ``alerts`` names a channel not in ``channels``.

    Its ``field`` is the place (``alerts.routes.1.channels.0``), read back to a
    line and column by ``checks.settings.config.load_settings``; the message names
    the closest configured channel.
    """
    from checks.errors import ConfigError

    named = [(f"alerts.default_channels.{i}", n) for i, n in enumerate(alerts.default_channels)]
    if isinstance(alerts.routes, dict):
        named += [
            (f"alerts.routes.{e}.{i}", n)
            for e, names in alerts.routes.items()
            for i, n in enumerate(names)
        ]
    else:
        named += [
            (f"alerts.routes.{r}.channels.{i}", n)
            for r, rule in enumerate(alerts.routes)
            for i, n in enumerate(rule.channels)
        ]
    if isinstance(alerts.on_warning, list):
        named += [(f"alerts.on_warning.{i}", n) for i, n in enumerate(alerts.on_warning)]
    for where, name in named:
        if name not in channels:
            known = ", ".join(sorted(channels)) or "none are configured"
            hint = did_you_mean(name, list(channels))
            raise ConfigError(f"unknown channel {name!r}{hint}; known: {known}", field=where)
