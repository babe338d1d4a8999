"""Ranking data sets for ``list_data_sets``: lexical relevance to the goal and the query.

A simple, documented token-overlap score: the fallback when no decision model
ranks them (``checks.agent.dataset_ranking``). Only matching tokens count: nothing in a
name — however it is worded — earns a boost of its own.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

_STOP_WORDS = frozenset(  # common English words that carry no table meaning
    [
        "a",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "by",
        "each",
        "every",
        "for",
        "from",
        "in",
        "is",
        "it",
        "no",
        "not",
        "of",
        "on",
        "or",
        "per",
        "should",
        "than",
        "that",
        "the",
        "this",
        "to",
        "under",
        "over",
        "with",
        "was",
        "were",
        "which",
        "who",
    ]
)


def tokens(text: str) -> set[str]:
    """Split text into ranking tokens.

    Lower-case runs of letters and digits (``_``, ``.``, spaces and punctuation
    all split), at least 2 characters, common English stop words dropped, and a
    trailing ``s`` removed from tokens longer than 3 characters (``flights`` →
    ``flight``).
    """
    found = set()
    for word in re.findall(r"[a-z0-9]+", text.lower()):
        if len(word) < 2 or word in _STOP_WORDS:
            continue
        found.add(word[:-1] if len(word) > 3 and word.endswith("s") else word)
    return found


def relevance(name: str, columns: Sequence[str], goal: str, query: str | None) -> float:
    """Score how well a data set (name, column names) matches the goal and query.

    Token overlap only (see ``tokens``).

    Each distinct token of the query weighs 2, of the goal 1 (the larger
    weight when in both). A data set's score is::

        2 * sum(weight of tokens in its name) / sqrt(#name tokens)
          + sum(weight of the other tokens in its column names) / sqrt(#column tokens)

    The square roots keep a long name or a very wide table from winning by
    size alone: a name stuffed with words (such as one written like an
    instruction) is diluted, never boosted. Nothing but token matches counts.
    """
    weights = dict.fromkeys(tokens(goal), 1.0)
    weights.update(dict.fromkeys(tokens(query or ""), 2.0))
    name_tokens = tokens(name)
    column_tokens = set().union(*(tokens(c) for c in columns)) - name_tokens
    score = 0.0
    if name_tokens:
        score += 2 * sum(weights.get(t, 0.0) for t in name_tokens) / math.sqrt(len(name_tokens))
    if column_tokens:
        score += sum(weights.get(t, 0.0) for t in column_tokens) / math.sqrt(len(column_tokens))
    return score
