"""What the review page reads of a run's JSON, kept as plain columns of ``runs``.

The list (``worker.review.board``) filters, orders and pages in SQL over every
automation's latest report, and ``/metrics`` (``worker.review.stats``) sums
over every run. What they need of a run's ``definition`` (owner, severity,
tags, description, the source it names), of its ``second_opinion`` (the
urgency; the decision model's tokens and cost) and of its ``agent`` (tokens and
cost) is copied into columns when the run is written, so a request never
parses thousands of JSON documents. ``RunRow`` keeps them in step with its JSON
on every ORM write; a Core insert of runs (the dispatcher's slots) adds
``definition_columns`` itself, and ``Store.finish_run``'s update all of them;
migration ``0016`` filled them for the runs stored before.
"""

from __future__ import annotations

from typing import Any

TAG_SEPARATOR = "\x1f"
"""Between tags in ``runs.tags`` (and around them): the ASCII unit separator, never in a tag."""

SEVERITIES = ("low", "medium", "high")
"""An automation's severities, lowest first (``checks.automation.model``; default ``medium``)."""


def _text(value: Any) -> str | None:
    return None if value is None or value == "" else str(value)


def tags_column(tags: Any) -> str:
    """``runs.tags`` for a definition's tags: ``␟a␟b␟`` (unit separators), ``""`` for none.

    A filter on one tag is then ``tags LIKE '%␟tag␟%'``, exact on every database.
    """
    names = [str(t).replace(TAG_SEPARATOR, "") for t in tags or [] if t is not None]
    names = [n for n in names if n]
    return f"{TAG_SEPARATOR}{TAG_SEPARATOR.join(names)}{TAG_SEPARATOR}" if names else ""


def split_tags(column: str | None) -> tuple[str, ...]:
    """The tags ``tags_column`` joined, in their order."""
    return tuple(t for t in (column or "").split(TAG_SEPARATOR) if t)


def definition_columns(definition: dict[str, Any] | None) -> dict[str, Any]:
    """The list's columns from a run's definition: owner, severity, tags, description, source.

    Missing or empty values are None (``tags``: ``""``); a severity the model
    does not know is kept as written, cut to 16 characters.
    """
    data = definition if isinstance(definition, dict) else {}
    severity = _text(data.get("severity"))
    tags = data.get("tags")
    return {
        "owner": _text(data.get("owner")),
        "severity": severity[:16] if severity else None,
        "tags": tags_column(tags if isinstance(tags, list) else []),
        "description": _text(data.get("description")),
        "definition_source": _text(data.get("source")),
    }


def urgency_column(second_opinion: dict[str, Any] | None) -> str | None:
    """The second opinion's urgency (``read_opinion``), or None without one."""
    if not second_opinion:
        return None
    from checks.opinion.second_opinion import read_opinion  # only runs with an opinion need it

    return read_opinion(second_opinion).urgency


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def usage_columns(component: str, usage: dict[str, Any] | None) -> dict[str, Any]:
    """The tokens and cost columns of one component (``agent`` or ``decision``).

    ``{component}_input_tokens``, ``…_output_tokens``, ``…_cost_usd`` from the
    run's ``agent`` or ``second_opinion``; None where the value is not a number.
    """
    data = usage if isinstance(usage, dict) else {}
    tokens = {k: _number(data.get(k)) for k in ("input_tokens", "output_tokens")}
    return {
        **{f"{component}_{k}": None if v is None else int(v) for k, v in tokens.items()},
        f"{component}_cost_usd": _number(data.get("cost_usd")),
    }
