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

Rules checked here, at config load (a ``ConfigError`` naming the field):
Teams Office 365 connector URLs (``outlook.office.com/webhook``,
``*.webhook.office.com``) are retired by Microsoft and refused; a URL
whose host is this machine or a cloud metadata service (``addresses.py``) is
refused unless the channel sets ``allow_private_address: true``; Slack and
Discord URLs are refused through ``apprise`` (its plugins turn escaped
mentions back into live ones: use the native types); quiet hours are
``HH:MM`` in an IANA time zone; routes name configured channels.
"""

from __future__ import annotations

import base64
import datetime as dt
from typing import Annotated, ClassVar, Literal
from urllib.parse import parse_qsl, unquote, urlsplit
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import Field, ValidationInfo, field_validator, model_validator
from pydantic_core import PydanticCustomError

from checks.fields.rules import did_you_mean
from checks.settings.addresses import refused_url
from checks.settings.alert_events import ALL_EVENTS, EventKind
from checks.settings.alert_routes import RouteRule
from checks.settings.strict import Strict, http_url

# Re-exported: the events are the vocabulary of this section.
__all__ = ["ALL_EVENTS", "AlertSettings", "ChannelConfig", "EventKind", "RouteRule"]

# Office 365 connector webhooks, retired by Microsoft in favour of Workflows.
_O365_HOSTS = ("outlook.office.com", "outlook.office365.com")
_O365_SUFFIX = ".webhook.office.com"
# Hosts and schemes Apprise would route to its Slack / Discord plugins.
_APPRISE_REFUSED_SCHEMES = {"slack": "slack", "discord": "discord"}
_APPRISE_REFUSED_HOSTS = {
    "hooks.slack.com": "slack",
    "discord.com": "discord",
    "discordapp.com": "discord",
    "canary.discord.com": "discord",
    "ptb.discord.com": "discord",
}


# Apprise schemes whose plugin connects to the URL's host (the rest name a hosted
# service and carry tokens where the host goes).
_APPRISE_HOST_SCHEMES = frozenset(
    f"{base}{tls}"
    for base in ("json", "xml", "form", "mailto", "mmost", "rocket", "gotify", "ntfy", "matrix")
    for tls in ("", "s")
)


def _config_error(message: str) -> PydanticCustomError:
    """Return a validation error whose message is shown as is in the ``ConfigError``."""
    return PydanticCustomError("lookout", "{message}", {"message": message})


class QuietHours(Strict):
    """A daily window in which a channel holds back alerts (urgency ``act_now`` is never held).

    Held alerts are deferred, not dropped: they go out when the window ends.

    Attributes:
        start: local time the window opens, ``HH:MM`` (24 h).
        end: local time it closes, ``HH:MM``; earlier than ``start`` means it spans midnight.
        timezone: IANA zone name the times are read in (default UTC); DST is followed.
    """

    start: str
    end: str
    timezone: str = "UTC"

    @field_validator("start", "end")
    @classmethod
    def _clock(cls, value: str) -> str:
        try:
            dt.time.fromisoformat(value)
        except ValueError:
            raise _config_error(f"a time of day is HH:MM, e.g. '22:00' (got {value!r})") from None
        if len(value) != 5:
            raise _config_error(f"a time of day is HH:MM, e.g. '07:30' (got {value!r})")
        return value

    @field_validator("timezone")
    @classmethod
    def _zone(cls, value: str) -> str:
        try:
            ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError):
            raise _config_error(f"unknown time zone {value!r}; use an IANA name") from None
        return value

    @model_validator(mode="after")
    def _not_empty(self) -> QuietHours:
        if self.start == self.end:
            raise _config_error("quiet_hours start and end are the same time: the window is empty")
        return self

    def window_end(self, now: dt.datetime) -> dt.datetime | None:
        """Return when the window holding ``now`` ends (aware, UTC), or None outside it.

        Args:
            now: a zone-aware instant.
        """
        zone = ZoneInfo(self.timezone)
        local = now.astimezone(zone)
        start, end = dt.time.fromisoformat(self.start), dt.time.fromisoformat(self.end)
        clock = local.time().replace(tzinfo=None)
        # end before start: the window spans midnight
        inside = start <= clock < end if start < end else clock >= start or clock < end
        if not inside:
            return None
        day = local.date() if clock < end else local.date() + dt.timedelta(days=1)
        return dt.datetime.combine(day, end, tzinfo=zone).astimezone(dt.UTC)


class _Channel(Strict):
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
            raise _config_error(
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
        numeric = cls.WEBHOOK or scheme in _APPRISE_HOST_SCHEMES
        refused = refused_url(value, numeric_names=numeric)
        if refused:
            raise _config_error(refused)
        return value

    def accepts(self, event: EventKind) -> bool:
        """Return whether this channel takes ``event`` (no ``events:`` list: every event)."""
        return self.events is None or event in self.events

    def secrets(self) -> list[str]:
        """Return the URL and the token-like parts of it, for ``redact``."""
        return url_secrets(self.url)


class SlackChannel(_Channel):
    """A Slack incoming webhook (``https://hooks.slack.com/services/…``); Block Kit messages."""

    type: Literal["slack"]


class TeamsChannel(_Channel):
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
            raise _config_error(
                "this is an Office 365 connector URL (outlook.office.com/webhook or "
                "*.webhook.office.com); Microsoft retired those connectors. In Teams, add the "
                "Workflows template 'Send webhook alerts to a channel' and use its URL"
            )
        return value


class GoogleChatChannel(_Channel):
    """A Google Chat space's incoming webhook (``https://chat.googleapis.com/v1/spaces/…``)."""

    type: Literal["google_chat"]


class DiscordChannel(_Channel):
    """A Discord channel webhook (``https://discord.com/api/webhooks/ID/TOKEN``)."""

    type: Literal["discord"]


class WebhookChannel(_Channel):
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


class AppriseChannel(_Channel):
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
            raise _config_error(
                f"{service} URLs are refused through apprise (its {service} plugin turns "
                f"escaped mentions back into live ones); use a channel of type: {service}"
            )
        return value


ROUTING_KEY_CHARS = 32
"""A PagerDuty routing key's length: the Events API v2 answers 400 to any other."""

PAGING_EVENTS = (EventKind.NEEDS_ATTENTION, EventKind.RUN_ERROR, EventKind.RESOLVED)
"""The events a pager takes: an incident's opening (and its reminders) and its resolution."""


class _PagingChannel(_Channel):
    """A paging service: it opens an alert per incident and closes it when the incident resolves.

    ``events`` defaults to ``PAGING_EVENTS`` and may list only those: the other
    events (``warned``, the second opinion's flags) open no incident, so nothing
    would ever close the page they made.
    """

    events: list[EventKind] | None = Field(default_factory=lambda: list(PAGING_EVENTS))

    @field_validator("events")
    @classmethod
    def _incident_events(cls, value: list[EventKind] | None) -> list[EventKind] | None:
        for event in value or []:
            if event not in PAGING_EVENTS:
                raise _config_error(
                    f"a pager takes only {', '.join(PAGING_EVENTS)}: {event} opens no incident,"
                    " so nothing would close its page"
                )
        return value


class PagerDutyChannel(_PagingChannel):
    """PagerDuty's Events API v2 (https://developer.pagerduty.com/docs/events-api-v2/overview).

    Attributes:
        routing_key: the integration key of a service's Events API v2 integration:
            32 letters and digits (PagerDuty refuses others with 400), checked at
            load after ``${VAR}`` expansion; a secret, never in an error.
        url: the enqueue endpoint (default ``https://events.pagerduty.com/v2/enqueue``;
            accounts in the EU service region ``https://events.eu.pagerduty.com/v2/enqueue``).
    """

    type: Literal["pagerduty"]
    url: str = "https://events.pagerduty.com/v2/enqueue"
    routing_key: str

    @field_validator("routing_key")
    @classmethod
    def _integration_key(cls, value: str) -> str:
        if len(value) != ROUTING_KEY_CHARS:
            raise _config_error(
                f"routing_key is {len(value)} characters long: a PagerDuty routing key (an "
                f"Events API v2 integration key) is {ROUTING_KEY_CHARS} letters and digits"
            )
        if not value.isascii() or not value.isalnum():
            raise _config_error(
                "routing_key holds a character other than a letter or digit (a space or a "
                f"quote?): a PagerDuty routing key is {ROUTING_KEY_CHARS} letters and digits"
            )
        return value

    def secrets(self) -> list[str]:
        """Return the URL's secrets and the routing key."""
        return [*url_secrets(self.url), self.routing_key]


class OpsgenieChannel(_PagingChannel):
    """Opsgenie's Alert API (https://docs.opsgenie.com/docs/alert-api).

    Attributes:
        api_key: an API integration's key, sent as ``Authorization: GenieKey KEY``; a secret.
        url: the alerts endpoint (default ``https://api.opsgenie.com/v2/alerts``; EU
            accounts ``https://api.eu.opsgenie.com/v2/alerts``).
        responders: who the alert is for, as Opsgenie's ``responders`` objects
            (``{type: team, name: data-platform}``); default the integration's team.
    """

    type: Literal["opsgenie"]
    url: str = "https://api.opsgenie.com/v2/alerts"
    api_key: str = Field(min_length=1)
    responders: list[dict[str, str]] = Field(default_factory=list)

    def secrets(self) -> list[str]:
        """Return the URL's secrets and the API key."""
        return [*url_secrets(self.url), self.api_key]


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


def url_secrets(url: str) -> list[str]:
    """Return ``url`` and the parts of it that work as credentials.

    Query values (``key=``, ``token=``, ``sig=``…), long path segments (the
    tokens inside Slack and Discord webhook paths) and the user-info (user,
    password, both decoded, and their HTTP Basic form) are returned too, so
    that a URL shown re-encoded or in pieces is still hidden by ``redact``.
    """
    parts = urlsplit(url)
    found = [url]
    found += [v for _, v in parse_qsl(parts.query) if len(v) >= 8]
    found += [seg for seg in parts.path.split("/") if len(seg) >= 16]
    if parts.password:
        found += [parts.password, unquote(parts.password)]
    if parts.username:  # user-info is a credential as a whole (``token@host``)
        found += [parts.username, unquote(parts.username)]
        pair = f"{unquote(parts.username)}:{unquote(parts.password or '')}"
        found.append(base64.b64encode(pair.encode()).decode())  # as HTTP Basic sends it
    return found


def refused_apprise_service(url: str) -> str | None:
    """Return ``"slack"`` or ``"discord"`` when Apprise would send ``url`` with that plugin."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme in _APPRISE_REFUSED_SCHEMES:
        return _APPRISE_REFUSED_SCHEMES[scheme]
    if scheme in ("http", "https"):
        return _APPRISE_REFUSED_HOSTS.get((parts.hostname or "").lower())
    return None
