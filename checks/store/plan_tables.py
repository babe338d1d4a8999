"""The pinned plans table: one automation's accepted agent report, kept for later runs.

Migration ``0014``. One row per automation (its primary key), replaced when a
later accepted report makes a new plan (``Store.finish_run``, in the same
transaction as the run, so a refused result never pins). ``run_id`` is the run
the plan came from; ``queries`` the cited evidence as
``checks.pinned.plan.PinnedQuery.to_dict``; ``check_outcomes`` the declared
checks' ``[name, outcome]`` pairs. Times are naive UTC in the database and
aware UTC in Python (``UTCDateTime``).
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy import JSON, ForeignKey, String, Text
from sqlalchemy.orm import Mapped, Session, mapped_column

from checks.report import Finding, FindingSource, PinnedPlan, PinnedQuery
from checks.store.run_tables import Base, UTCDateTime, dialect_insert


class PinnedPlanRow(Base):
    """The current pinned plan of one automation (see the module docstring)."""

    __tablename__ = "pinned_plans"

    automation: Mapped[str] = mapped_column(String(64), primary_key=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), index=True)
    made_at: Mapped[dt.datetime] = mapped_column(UTCDateTime())
    definition_hash: Mapped[str] = mapped_column(String(64))
    model: Mapped[str] = mapped_column(String(200))
    finding: Mapped[str] = mapped_column(String(24))
    finding_source: Mapped[str] = mapped_column(String(16))
    summary: Mapped[str] = mapped_column(Text)
    confidence: Mapped[str | None] = mapped_column(String(16))
    queries: Mapped[list[dict[str, Any]]] = mapped_column(JSON)
    check_outcomes: Mapped[list[list[str]]] = mapped_column(JSON)

    def to_plan(self) -> PinnedPlan:
        """The plan this row holds."""
        return PinnedPlan(
            automation=self.automation,
            run_id=self.run_id,
            made_at=self.made_at,
            definition_hash=self.definition_hash,
            model=self.model,
            finding=Finding(self.finding),
            finding_source=FindingSource(self.finding_source),
            summary=self.summary,
            confidence=self.confidence,
            queries=tuple(PinnedQuery.from_dict(q) for q in self.queries),
            check_outcomes=tuple((str(n), str(o)) for n, o in self.check_outcomes),
        )


def write_plan(session: Session, plan: PinnedPlan, run_id: int) -> None:
    """Make ``plan`` (made by run ``run_id``) its automation's plan, replacing any older one.

    One statement, ``INSERT … ON CONFLICT (automation) DO UPDATE``: two runs of
    one automation finishing at once (``overlap: allow``) both write, and the
    later one waits for the other's row and replaces it instead of failing its run.
    """
    table = PinnedPlanRow.__table__
    values = {
        "run_id": run_id,
        "made_at": plan.made_at,
        "definition_hash": plan.definition_hash,
        "model": plan.model,
        "finding": str(plan.finding),
        "finding_source": str(plan.finding_source),
        "summary": plan.summary,
        "confidence": plan.confidence,
        "queries": [q.to_dict() for q in plan.queries],
        "check_outcomes": [[n, o] for n, o in plan.check_outcomes],
    }
    insert = dialect_insert(table, session.get_bind().dialect.name)
    session.execute(
        insert.values(automation=plan.automation, **values).on_conflict_do_update(
            index_elements=["automation"], set_=values
        )
    )
