"""The pagers, PagerDuty and Opsgenie: an alert per incident, closed when the incident resolves."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator

from checks.settings.alert_events import EventKind
from checks.settings.channel_base import ChannelBase
from checks.settings.channel_urls import url_secrets
from checks.settings.strict import config_error

ROUTING_KEY_CHARS = 32
"""A PagerDuty routing key's length: the Events API v2 answers 400 to any other."""

PAGING_EVENTS = (EventKind.NEEDS_ATTENTION, EventKind.RUN_ERROR, EventKind.RESOLVED)
"""The events a pager takes: an incident's opening (and its reminders) and its resolution."""


class PagingChannel(ChannelBase):
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
                raise config_error(
                    f"a pager takes only {', '.join(PAGING_EVENTS)}: {event} opens no incident,"
                    " so nothing would close its page"
                )
        return value


class PagerDutyChannel(PagingChannel):
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
            raise config_error(
                f"routing_key is {len(value)} characters long: a PagerDuty routing key (an "
                f"Events API v2 integration key) is {ROUTING_KEY_CHARS} letters and digits"
            )
        if not value.isascii() or not value.isalnum():
            raise config_error(
                "routing_key holds a character other than a letter or digit (a space or a "
                f"quote?): a PagerDuty routing key is {ROUTING_KEY_CHARS} letters and digits"
            )
        return value

    def secrets(self) -> list[str]:
        """Return the URL's secrets and the routing key."""
        return [*url_secrets(self.url), self.routing_key]


class OpsgenieChannel(PagingChannel):
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
