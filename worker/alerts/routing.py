"""Who receives a run's events, and when (quiet hours).

Recipients of one event of one automation (documented in ``checks.settings.alerts``):
the automation's ``notify:`` channels — or ``alerts.default_channels`` when it
names none — that accept the event (their ``events:``), plus
``alerts.routes[event]``. ``warned`` goes only where ``alerts.on_warning``
asks (``true``: those same channels; a list: the channels named), plus
``alerts.routes.warned``. A name not in ``channels:`` is kept, so its delivery
is recorded as failed ("unknown channel") instead of vanishing.

With ``alerts.routes`` a list of rules (``checks.settings.alert_routes``), the
rules matching the automation's owner, tags and severity add their channels to
its ``notify:`` ones, and ``alerts.default_channels`` is used only when neither
gave a channel; each channel still takes only the events it accepts.

One message per chat channel per run: when several of a run's events go to one
channel, the first in ``PRIORITY`` order is sent (a Needs attention run that
also changed since the last run is one message, not two). A pager
(``pagerduty``, ``opsgenie``) gets each of its events: a run that resolves one
incident and opens another closes one page and opens the other.

Quiet hours hold an alert until the channel's window ends, unless the run's
urgency is ``act_now``.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from checks.settings.alert_routes import routed
from checks.settings.alerts import PAGING_EVENTS, EventKind, OpsgenieChannel, PagerDutyChannel
from checks.settings.config import Settings
from checks.store.incidents import AlertEvent

PRIORITY = (
    EventKind.RUN_ERROR,
    EventKind.NEEDS_ATTENTION,
    EventKind.RESOLVED,
    EventKind.DOUBLE_CHECK_DISAGREES,
    EventKind.CHANGED_SINCE_LAST_RUN,
    EventKind.WARNED,
)


@dataclass(frozen=True)
class About:
    """What the routing rules read of an automation: its owner, tags and severity."""

    owner: str | None = None
    tags: tuple[str, ...] = ()
    severity: str | None = None

    @classmethod
    def of(cls, definition: dict[str, Any]) -> About:
        """From a stored run's ``definition`` (the automation as it ran)."""
        owner = definition.get("owner")
        tags = tuple(t for t in definition.get("tags") or [] if isinstance(t, str))
        severity = definition.get("severity")
        return cls(
            owner if isinstance(owner, str) else None,
            tags,
            severity if isinstance(severity, str) else None,
        )


@dataclass(frozen=True)
class Route:
    """One message to send: an event of the run to one channel."""

    event: AlertEvent
    channel: str


def recipients(
    event: EventKind, notify: list[str], settings: Settings, about: About | None = None
) -> list[str]:
    """Return the channel names that receive ``event`` of an automation with ``notify``."""
    rules = settings.alerts.routes
    by_rule: list[str] = []
    if isinstance(rules, list):
        who = about or About()
        by_rule = routed(rules, event, who.owner, who.tags, who.severity)
    own = [*notify, *(n for n in by_rule if n not in notify)]
    if not own:
        own = list(settings.alerts.default_channels)
    if event is EventKind.WARNED:  # opt-in: a Clear run's warnings reach only who asked
        wanted = settings.alerts.on_warning
        own = list(wanted) if isinstance(wanted, list) else own if wanted else []
        own += [n for n in by_rule if n not in own]  # a rule listing warned asked for it
    chosen: list[str] = []
    for name in own:
        channel = settings.channels.get(name)
        if (channel is None or channel.accepts(event)) and name not in chosen:
            chosen.append(name)
    for name in rules.get(event, []) if isinstance(rules, dict) else []:
        if name not in chosen:
            chosen.append(name)
    return chosen


def routes(
    events: list[AlertEvent], notify: list[str], settings: Settings, about: About | None = None
) -> list[Route]:
    """Return one route per chat channel (its highest-priority event), every event per pager."""
    ordered = sorted(events, key=lambda e: PRIORITY.index(e.kind))
    taken: dict[tuple[str, str], Route] = {}
    for event in ordered:
        for name in recipients(event.kind, notify, settings, about):
            pager = isinstance(settings.channels.get(name), PagerDutyChannel | OpsgenieChannel)
            key = (name, str(event.kind) if pager and event.kind in PAGING_EVENTS else "")
            taken.setdefault(key, Route(event, name))
    return list(taken.values())


def hold_until(
    channel: str, urgency: str | None, settings: Settings, now: dt.datetime
) -> dt.datetime | None:
    """Return when a held alert may go (the end of the channel's quiet hours), or None to send now.

    Urgency ``act_now`` is never held.
    """
    config = settings.channels.get(channel)
    if config is None or config.quiet_hours is None or urgency == "act_now":
        return None
    return config.quiet_hours.window_end(now)
