"""What the second opinion reads of the store for one run, in one transaction.

The automation's previous completed run (with its checks and evidence), each
query's row record in its own newest completed run (``checks.store.row_sets``)
and the decision model's current recalibrations
(``checks.store.review_reads``): three reads the run path makes one after
another once the run's report is decided, read together so they cost one
transaction instead of three.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field

from checks.opinion.calibration import Recalibration
from checks.opinion.row_diff import PreviousRows
from checks.report import RunReport
from checks.store.review_reads import read_recalibrations
from checks.store.row_sets import previous_rows
from checks.store.store import Store, last_completed


@dataclass(frozen=True)
class OpinionInputs:
    """What ``second_opinion`` is given from the store (empty: a first run, no recalibration).

    Attributes:
        previous: the automation's newest completed run other than this one, or None.
        rows: by query key, each query's row record in its newest completed run.
        recalibrations: the newest recalibration of each question of the decision model.
    """

    previous: RunReport | None = None
    rows: dict[str, PreviousRows] = field(default_factory=dict)
    recalibrations: list[Recalibration] = field(default_factory=list)


def opinion_inputs(
    store: Store,
    automation: str,
    keys: Collection[str],
    *,
    backend: str,
    model: str | None,
    before_run: int | None = None,
) -> OpinionInputs:
    """Read the second opinion's inputs for one run of ``automation`` in one transaction.

    Args:
        store: the open store.
        automation: the automation's name.
        keys: the query keys of the run's evidence that carry row sets.
        backend: the decision model's backend (``checks.opinion.decision_model``).
        model: the decision model's model name, or None.
        before_run: this run's id, never read as its own previous run.
    """
    with store.session() as session:
        return OpinionInputs(
            last_completed(session, automation, before_run=before_run),
            previous_rows(session, automation, keys, before_run=before_run),
            read_recalibrations(session, backend, model),
        )
