"""Who receives a run's events, and when (quiet hours).

Recipients of one event of one automation (documented in ``checks.settings.alerts``):
the automation's ``notify:`` channels — or ``alerts.default_channels`` when it
names none — that accept the event (their ``events:``), plus
``alerts.routes[event]``. ``warned`` goes only where ``alerts.on_warning``
asks (``true``: those same channels; a list: the channels named), plus
``alerts.routes.warned``. A name not in ``channels:`` is kept, so its delivery
is recorded as failed ("unknown channel") instead of vanishing.

One message per channel per run: when several of a run's events go to one
channel, the first in ``PRIORITY`` order is sent and carries the others as
flags (a Needs attention run that also changed since the last run is one
message, not two).

Quiet hours hold an alert until the channel's window ends, unless the run's
urgency is ``act_now``.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from checks.settings.alerts import EventKind
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
class Route:
    """One message to send: an event of the run to one channel."""

    event: AlertEvent
    channel: str


def recipients(event: EventKind, notify: list[str], settings: Settings) -> list[str]:
    """Return the channel names that receive ``event`` of an automation with ``notify``."""
    chosen: list[str] = []
    own = notify or settings.alerts.default_channels
    if event is EventKind.WARNED:  # opt-in: a Clear run's warnings reach only who asked
        wanted = settings.alerts.on_warning
        own = list(wanted) if isinstance(wanted, list) else own if wanted else []
    for name in own:
        channel = settings.channels.get(name)
        if (channel is None or channel.accepts(event)) and name not in chosen:
            chosen.append(name)
    for name in settings.alerts.routes.get(event, []):
        if name not in chosen:
            chosen.append(name)
    return chosen


def routes(events: list[AlertEvent], notify: list[str], settings: Settings) -> list[Route]:
    """Return one route per channel: its highest-priority event of the run."""
    ordered = sorted(events, key=lambda e: PRIORITY.index(e.kind))
    taken: dict[str, Route] = {}
    for event in ordered:
        for name in recipients(event.kind, notify, settings):
            taken.setdefault(name, Route(event, name))
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
