"""What an alert says, independent of the chat service; escaping and safe truncation.

An ``Alert`` is built once per (run, event) from the stored report and kept
with each delivery (JSON), so a deferred delivery is sent as it was decided.
Each sender in ``worker.alerts.channels`` renders it in its service's format.

Untrusted text — the summary (model output quoting data values), the error,
the owner and the automation name — is escaped per service before it is
placed in a message (``escape_slack``, ``defang``…): no live ``<!here>``,
``<!channel>``, ``@everyone``, ``@here``, no disguised ``<url|label>`` or
``[label](url)`` links. Only Lookout's own link to the review page is live.

Long text is cut by ``fit`` at a safe boundary — never inside a code fence,
inline code, a ``<…>`` tag or link, a ``[…](…)`` link or an ``&…;`` entity —
and each renderer then adds "truncated — see the report" and the link.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from checks.opinion.second_opinion import read_opinion
from checks.report import RunReport
from checks.settings.alerts import EventKind

URGENCIES = ("nothing_to_do", "worth_a_look", "act_soon", "act_now")
"""The decision model's urgency levels, lowest first."""

TEST_EVENT = "test"
"""The event name of ``lookout notify test`` messages (never routed, never an incident)."""

TRUNCATED = "truncated — see the report"

_LABELS = {
    "needs_attention": "Needs attention",
    "clear": "Clear",
    "nothing_to_do": "Nothing to do",
    "worth_a_look": "Worth a look",
    "act_soon": "Act soon",
    "act_now": "Act now",
    "double_check_disagrees": "double-check disagrees",
    "changed_since_last_run": "changed since last run",
}
_ZWSP = "\u200b"
_MENTION_WORDS = re.compile(r"@(everyone|here|channel|all)\b", re.IGNORECASE)


@dataclass(frozen=True)
class Alert:
    """One alert's content. Fields marked untrusted must be escaped by the renderer.

    Attributes:
        event: an ``EventKind`` value, or ``"test"``.
        automation: the automation's name (untrusted: escaped like any text).
        run_id: the run announced; None for a test message.
        link: ``{review_base_url}/runs/{run_id}`` — the only live link in a message.
        status: the run's status (``completed``, ``error``…).
        finding: ``needs_attention``, ``clear`` or None.
        urgency: one of ``URGENCIES`` from the second opinion, or None.
        flags: second-opinion flags (``double_check_disagrees``, ``changed_since_last_run``).
        summary: the report summary (untrusted), already cut to ``alerts.summary_chars``.
        summary_truncated: whether ``summary`` was cut.
        owner: the automation's owner (untrusted), or None.
        severity: the automation's severity, or None.
        error: the run's error message (untrusted), or None.
        reminder: a repeat of an open incident's alert (every ``repeat_interval``).
        opened_at: ISO 8601 UTC time the incident opened, for reminders and resolutions.
        thread_key: the incident's thread (Google Chat ``thread.threadKey``), or None.
        not_evaluated: ``check: reason`` for each declared check that could not
            look at any data ("rows: 0 rows in scope: orders"); names and
            reasons are untrusted text.
        since_last_run: one line per query whose rows changed since its
            previous completed run ("C1: 3 new rows since the last run
            (N724MQ, N725MQ, …); 1 gone"; ``checks.opinion.row_diff``); the
            rows named are untrusted text.
        anomalies: ``check: value …, expected …, baseline …, score …`` for
            each check that failed as an anomaly, one line each (the check
            name is untrusted text).
        warnings: ``check: value; beyond the warning level … (expected …)``
            for each check that broke its ``warn:`` level (untrusted text).
    """

    event: str
    automation: str
    run_id: int | None
    link: str
    status: str = "completed"
    finding: str | None = None
    urgency: str | None = None
    flags: tuple[str, ...] = ()
    summary: str = ""
    summary_truncated: bool = False
    owner: str | None = None
    severity: str | None = None
    error: str | None = None
    reminder: bool = False
    opened_at: str | None = None
    thread_key: str | None = None
    not_evaluated: tuple[str, ...] = ()
    since_last_run: tuple[str, ...] = ()
    anomalies: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """Return a JSON-safe dict (stored with the delivery)."""
        data = asdict(self)
        data["flags"] = list(self.flags)
        data["not_evaluated"] = list(self.not_evaluated)
        data["since_last_run"] = list(self.since_last_run)
        data["anomalies"] = list(self.anomalies)
        data["warnings"] = list(self.warnings)
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Alert:
        """Rebuild an alert stored by ``to_json``."""
        return cls(
            **{
                **data,
                "flags": tuple(data.get("flags") or ()),
                "not_evaluated": tuple(data.get("not_evaluated") or ()),
                "since_last_run": tuple(data.get("since_last_run") or ()),
                "anomalies": tuple(data.get("anomalies") or ()),
                "warnings": tuple(data.get("warnings") or ()),
            }
        )

    @property
    def title(self) -> str:
        """A one-line headline; the automation name in it is untrusted text."""
        name = self.automation
        titles: dict[str, str] = {
            EventKind.NEEDS_ATTENTION: f"{'Still needs' if self.reminder else 'Needs'} "
            f"attention: {name}",
            EventKind.RESOLVED: f"Resolved: {name} is Clear again",
            EventKind.RUN_ERROR: f"{'Still failing' if self.reminder else 'Run error'}: {name}",
            EventKind.DOUBLE_CHECK_DISAGREES: f"Double-check disagrees: {name}",
            EventKind.CHANGED_SINCE_LAST_RUN: f"Changed since last run: {name}",
            EventKind.WARNED: f"Warning: {name} is Clear with {self._warnings_count}",
        }
        return titles.get(self.event, f"Lookout test message ({name})")

    @property
    def _warnings_count(self) -> str:
        count = len(self.warnings)
        return f"{count} warning{'' if count == 1 else 's'}"

    @property
    def body(self) -> str:
        """The untrusted text to quote: the error for a run error, else the summary."""
        if self.event == EventKind.RUN_ERROR and self.error:
            return self.error
        return self.summary

    def facts(self) -> list[tuple[str, str]]:
        """Return (label, value) pairs shown beside the text; values may be untrusted."""
        facts = [("Finding", label(self.finding) if self.finding else self.status)]
        for line in self.anomalies:
            facts.append(("Anomaly", cut(line, 300)[0]))
        if self.warnings:
            facts.append(("Warning", cut("; ".join(self.warnings), 500)[0]))
        if self.not_evaluated:
            facts.append(("Not evaluated", cut("; ".join(self.not_evaluated), 500)[0]))
        if self.urgency:
            facts.append(("Urgency", label(self.urgency)))
        if self.flags:
            facts.append(("Flags", ", ".join(label(f) for f in self.flags)))
        if self.since_last_run:
            facts.append(("Since last run", cut("; ".join(self.since_last_run), 500)[0]))
        if self.owner:
            facts.append(("Owner", self.owner))
        if self.severity:
            facts.append(("Severity", self.severity))
        if self.opened_at and (self.reminder or self.event == EventKind.RESOLVED):
            facts.append(("Open since", self.opened_at[:16].replace("T", " ") + " UTC"))
        if self.run_id is not None:
            facts.append(("Run", f"#{self.run_id}"))
        return facts

    def fallback_text(self) -> str:
        """The minimal message tried once after a permanent 4xx: "X needs attention: link"."""
        what: dict[str, str] = {
            EventKind.NEEDS_ATTENTION: "needs attention",
            EventKind.RESOLVED: "is resolved",
            EventKind.RUN_ERROR: "run error",
            EventKind.DOUBLE_CHECK_DISAGREES: "double-check disagrees",
            EventKind.CHANGED_SINCE_LAST_RUN: "changed since last run",
            EventKind.WARNED: f"is Clear with {self._warnings_count}",
        }
        return f"{self.automation} {what.get(self.event, 'test message')}: {self.link}"


def label(value: str) -> str:
    """Return the reader-facing label of a finding, urgency or flag value."""
    return _LABELS.get(value, value.replace("_", " "))


def opinion_of(report: RunReport) -> tuple[str | None, tuple[str, ...]]:
    """Return (urgency, flags) from a report's ``second_opinion`` (see ``read_opinion``)."""
    opinion = read_opinion(report.second_opinion)
    return opinion.urgency, opinion.flags


def run_link(review_base_url: str, run_id: int | None) -> str:
    """Return the review page's URL of a run (the page itself for a test message)."""
    base = review_base_url.rstrip("/")
    return f"{base}/runs/{run_id}" if run_id is not None else f"{base}/"


# -- escaping ---------------------------------------------------------------


BIDI_CONTROLS = {
    c: 0xFFFD for c in (0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A))
}
"""Unicode's bidirectional marks, embeddings, overrides and isolates (UAX #9) → U+FFFD: a
right-to-left override in a name would show ``exe.txt`` as ``txt.exe`` in a chat client."""


def defang(text: str) -> str:
    """Break mention and link syntax with a zero-width space; the text reads the same.

    Bidirectional controls become U+FFFD (``BIDI_CONTROLS``).

    ``@everyone``/``@here``/``@channel``/``@all`` get a ZWSP after the ``@``;
    every ``<`` is followed by one (no ``<url|label>``, ``<!here>``, ``<@id>``,
    ``<users/all>``); ``](`` becomes ``]``ZWSP``(`` (no Markdown ``[label](url)``).
    Used for Discord, Teams, Google Chat and Apprise text.
    """
    text = _MENTION_WORDS.sub(lambda m: f"@{_ZWSP}{m.group(1)}", text.translate(BIDI_CONTROLS))
    return text.replace("<", f"<{_ZWSP}").replace("](", f"]{_ZWSP}(")


def escape_slack(text: str) -> str:
    """Escape untrusted text for Slack mrkdwn (Slack's "Formatting text" escaping rules).

    ``&``, ``<`` and ``>`` become ``&amp;``, ``&lt;``, ``&gt;`` — that alone stops
    ``<!here>`` and disguised ``<url|label>`` links; bare ``@here``-style words
    also get a zero-width space (and text objects are sent ``verbatim``), and
    bidirectional controls become U+FFFD (``BIDI_CONTROLS``).
    """
    text = (
        text.translate(BIDI_CONTROLS)
        .replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
    )
    return _MENTION_WORDS.sub(lambda m: f"@{_ZWSP}{m.group(1)}", text)


# -- truncation -------------------------------------------------------------


_OPEN_ENTITY = re.compile(r"&#?[A-Za-z0-9]{0,10}$")


def _safe_prefix(text: str) -> str:
    """Back ``text`` (a prefix of a longer text) up until it ends outside any construct."""
    while True:
        cut = len(text)
        if text.count("```") % 2:  # inside a fenced code block
            cut = text.rfind("```")
        else:
            tail = text[text.rfind("```") + 3 :] if "```" in text else text
            if tail.count("`") % 2:  # inside inline code
                cut = text.rfind("`")
        if text.rfind("<") > text.rfind(">"):  # inside a <tag> or <url|label>
            cut = min(cut, text.rfind("<"))
        if text.rfind("[") > text.rfind("]"):  # inside a [label]
            cut = min(cut, text.rfind("["))
        link = text.rfind("](")
        if link != -1 and text.rfind(")") < link:  # inside a [label](url)
            cut = min(cut, max(text.rfind("[", 0, link), 0))
        entity = _OPEN_ENTITY.search(text)
        if entity:  # inside an &entity; (``AT&T`` followed by more text is none)
            cut = min(cut, entity.start())
        if cut >= len(text):
            return text
        text = text[:cut]


def cut(text: str, max_chars: int) -> tuple[str, bool]:
    """Return (``text`` cut to at most ``max_chars`` at a safe boundary, whether it was cut).

    The cut prefers a paragraph, line or word end within the last fifth of the
    budget, then backs out of any code fence, inline code, tag, link or entity.
    """
    if len(text) <= max_chars:
        return text, False
    head = text[:max_chars]
    floor = int(max_chars * 0.8)
    for boundary in ("\n\n", "\n", " "):
        at = head.rfind(boundary)
        if at >= floor:
            head = head[:at]
            break
    return _safe_prefix(head).rstrip(), True


def fit(
    text: str,
    limit: int,
    *,
    escape: Callable[[str], str] = lambda s: s,
    measure: Callable[[str], int] = len,
) -> tuple[str, bool]:
    """Return (escaped ``text``, cut so that ``measure`` of it is at most ``limit``; was it cut).

    The escaped text is what is cut, at a safe boundary (``cut``): an entity
    the escape made (``&amp;``) is never split, and the cut is measured on
    what is sent, so text full of ``&`` keeps all it can. ``measure`` is
    ``len`` for character limits, UTF-8 byte length for byte limits.
    """
    escaped = escape(text)
    if measure(escaped) <= limit:
        return escaped, False
    size = min(len(escaped), limit)
    while size > 0 and measure(escaped[:size]) > limit:
        size -= max(1, (measure(escaped[:size]) - limit) // 4)
    head, _ = cut(escaped, max(size, 0))
    return head, True
