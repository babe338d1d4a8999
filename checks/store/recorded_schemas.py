"""The schema a ``schema`` check with ``changes`` recorded, read back for its next run.

Each finished run keeps, with each such check's result, the columns it saw
(``check_results.recorded_schema``: ``checks.declared.schema_changes.recorded``).
The next run compares with the newest one of the same automation and check
in a run that finished (completed or in error: a run in error may have read
its schema) strictly before its slot; a run whose check recorded none (it
was in error) is passed over: stored as SQL NULL, and a JSON ``null`` is
skipped too.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy import Text, cast, select
from sqlalchemy.orm import Session

from checks.store.run_tables import CheckRow, RunRow
from checks.store.series import FINISHED


def last_recorded_schema(
    session: Session, automation: str, check: str, *, before: dt.datetime
) -> dict[str, Any] | None:
    """The newest recorded schema of ``check`` in ``automation`` before ``before``, or None."""
    query = (
        select(CheckRow.recorded_schema)
        .join(RunRow, RunRow.id == CheckRow.run_id)
        .where(
            RunRow.automation == automation,
            CheckRow.name == check,
            CheckRow.recorded_schema.is_not(None),
            # rows written before "no schema" was stored as SQL NULL hold the JSON text null
            cast(CheckRow.recorded_schema, Text) != "null",
            RunRow.status.in_(list(FINISHED)),
            RunRow.scheduled_for < before,
        )
        .order_by(RunRow.scheduled_for.desc(), RunRow.id.desc())
        .limit(1)
    )
    found = session.scalars(query).first()
    return found if isinstance(found, dict) else None
