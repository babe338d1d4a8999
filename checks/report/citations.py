"""The ids a report's summary cites: ``[Q1]``, ``[C2]``, ``[Q1, Q3]``, ``[S2; C1]``.

``Q…`` is an agent query, ``C…`` a declared check's result, ``S…`` the sample
of a check's violating rows (``Evidence.id``). The agent's contract checks that
every cited id ran (``checks.agent.contract``); a pinned plan keeps the
evidence its report cites (``checks.pinned.plan``).
"""

from __future__ import annotations

import re

CITATION = re.compile(r"\[\s*([QCS]\d+(?:\s*[,;]\s*[QCS]\d+)*)\s*\]")
"""One bracketed citation of one or more ids, separated by commas or semicolons."""


def cited_ids(summary: str) -> list[str]:
    """Return the ids cited as ``[Q1]``, ``[C2]`` or ``[Q1, Q3]``, in order, once each."""
    found: list[str] = []
    for group in CITATION.findall(summary):
        for part in re.split(r"\s*[,;]\s*", group):
            if part not in found:
                found.append(part)
    return found
