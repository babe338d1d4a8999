"""``alerts.routes`` as a list: rules that send an automation's alerts by owner, tags and severity.

::

    alerts:
      default_channels: [ops-slack]
      routes:
        - {severity: high, events: [needs_attention, run_error, resolved], channels: [pagerduty]}
        - {owner: finance-data, channels: [finance-slack], stop: true}
        - {tags: [pii, gdpr], channels: [privacy-team]}

A rule matches an event of an automation when every key it gives holds:
``owner`` (one name or a list: the automation's ``owner:`` is one of them),
``tags`` (any of them is among the automation's ``tags:``), ``severity`` (one
or a list of ``low``, ``medium``, ``high``: the automation's ``severity:``) and
``events`` (the event is one of them; default every event but ``warned``,
which only a rule listing it takes, as ``alerts.on_warning`` is opt-in). A
rule with no key but ``channels`` matches every automation.

**Every** matching rule adds its channels, in order, until a matching rule with
``stop: true``: the rules after it are not read. The automation's own
``notify:`` channels are added too; ``alerts.default_channels`` is used only when
neither ``notify:`` nor any rule gave a channel. Each channel still takes only
the events its ``events:`` lists (``worker.alerts.routing``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from pydantic import Field, field_validator

from checks.settings.alert_events import EventKind
from checks.settings.strict import Strict

Severity = Literal["low", "medium", "high"]


class RouteRule(Strict):
    """One rule of ``alerts.routes`` (the module docstring says how rules match).

    Attributes:
        owner: the owners it matches (a name is read as a list of one).
        tags: it matches an automation with any of these tags.
        severity: the severities it matches.
        events: the events it matches; None: every event but ``warned``.
        channels: the channels it sends to (configured names).
        stop: a match ends the matching: the rules after it are not read.
    """

    owner: list[str] | None = None
    tags: list[str] | None = None
    severity: list[Severity] | None = None
    events: list[EventKind] | None = None
    channels: list[str] = Field(min_length=1)
    stop: bool = False

    @field_validator("owner", "severity", mode="before")
    @classmethod
    def _one_or_a_list(cls, value: object) -> object:
        return [value] if isinstance(value, str) else value

    def matches(
        self, event: EventKind, owner: str | None, tags: Sequence[str], severity: str | None
    ) -> bool:
        """Whether this rule takes ``event`` of an automation with this owner, tags, severity."""
        if self.events is None:
            if event is EventKind.WARNED:
                return False
        elif event not in self.events:
            return False
        if self.owner is not None and owner not in self.owner:
            return False
        if self.tags is not None and not set(self.tags) & set(tags):
            return False
        return self.severity is None or severity in self.severity


def routed(
    rules: Sequence[RouteRule],
    event: EventKind,
    owner: str | None,
    tags: Sequence[str],
    severity: str | None,
) -> list[str]:
    """The channels the matching rules name, in order, up to the first matching ``stop``."""
    chosen: list[str] = []
    for rule in rules:
        if not rule.matches(event, owner, tags, severity):
            continue
        chosen += [name for name in rule.channels if name not in chosen]
        if rule.stop:
            break
    return chosen
