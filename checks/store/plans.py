"""What the run path and ``lookout pin`` read of the pinned plans (``checks.store.plan_tables``)."""

from __future__ import annotations

import logging

from checks.report import PinnedPlan
from checks.store.plan_tables import PinnedPlanRow
from checks.store.store import Store

log = logging.getLogger("lookout.store")


def current_plan(store: Store, automation: str) -> PinnedPlan | None:
    """Return the pinned plan of ``automation``, or None when it has none.

    A row that no longer reads as a plan (edited by hand, a value of the wrong
    kind) counts as none, with a warning: the run asks the agent, and its
    accepted report replaces the row, rather than the run failing on it.
    """
    with store.session() as session:
        row = session.get(PinnedPlanRow, automation)
        if row is None:
            return None
        try:
            return row.to_plan()
        except (KeyError, TypeError, ValueError) as exc:
            log.warning("the pinned plan of %s is unreadable (%r); ignoring it", automation, exc)
            return None
