"""What the run path and ``lookout pin`` read of the pinned plans (``checks.store.plan_tables``)."""

from __future__ import annotations

from checks.pinned.plan import PinnedPlan
from checks.store.plan_tables import PinnedPlanRow
from checks.store.store import Store


def current_plan(store: Store, automation: str) -> PinnedPlan | None:
    """Return the pinned plan of ``automation``, or None when it has none."""
    with store.session() as session:
        row = session.get(PinnedPlanRow, automation)
        return None if row is None else row.to_plan()
