"""check_series: every check's value (with its band) and numeric metrics per run, by slot time

Filled from the check results already stored, so a store upgraded today has
its history: each stored check's value and numeric metrics become points of
its run's slot time, with the band its expectation allowed.

Revision ID: 0012
Revises: 0011
"""

import json
from typing import Any

import sqlalchemy as sa
from alembic import op

from checks.store.run_tables import UTCDateTime
from checks.store.series import VALUE, expectation_band, number

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None

_BATCH = 1000


def upgrade() -> None:
    op.create_table(
        "check_series",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("automation", sa.String(length=64), nullable=False),
        sa.Column("check_name", sa.String(length=100), nullable=False),
        sa.Column("metric", sa.String(length=64), nullable=False),
        sa.Column("scheduled_for", UTCDateTime(), nullable=False),
        sa.Column("value", sa.Float(), nullable=True),
        sa.Column("low", sa.Float(), nullable=True),
        sa.Column("high", sa.Float(), nullable=True),
        sa.Column("outcome", sa.String(length=16), nullable=False),
        sa.ForeignKeyConstraint(["run_id"], ["runs.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("run_id", "check_name", "metric", name="uq_check_series_point"),
    )
    with op.batch_alter_table("check_series", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_check_series_run_id"), ["run_id"], unique=False)
        batch_op.create_index(
            "ix_check_series_lookup",
            ["automation", "check_name", "metric", "scheduled_for"],
            unique=False,
        )
    _backfill()


def _json(value: Any, *, text: bool) -> Any:
    """A JSON column read with plain SQL: text on SQLite, already parsed by psycopg."""
    return json.loads(value) if text and isinstance(value, str) else value


def _outcome(stored: str | None, passed: bool | None, error: str | None) -> str:
    if stored:
        return stored
    if error is not None:
        return "error"
    return "not_evaluated" if passed is None else ("passed" if passed else "failed")


def _backfill() -> None:
    """Points for every check already stored (the rows a finished run would have written)."""
    bind = op.get_bind()
    series = sa.table(
        "check_series",
        *(
            sa.column(name)
            for name in (
                "run_id",
                "automation",
                "check_name",
                "metric",
                "scheduled_for",
                "value",
                "low",
                "high",
                "outcome",
            )
        ),
    )
    found = bind.execute(
        sa.text(
            "SELECT c.run_id, r.automation, r.scheduled_for, c.name, c.expect, c.value,"
            " c.passed, c.error, c.outcome, c.metrics"
            " FROM check_results c JOIN runs r ON r.id = c.run_id"
            " WHERE r.status IN ('completed', 'error')"
            " ORDER BY c.run_id, c.position"
        )
    )
    text = bind.dialect.name == "sqlite"
    batch: list[dict[str, Any]] = []
    seen: set[tuple[int, str]] = set()
    for run_id, automation, slot, name, expect, value, passed, error, outcome, metrics in found:
        if (run_id, name) in seen:  # a name stored twice in one run keeps its first
            continue
        seen.add((run_id, name))
        low, high = expectation_band(expect or "")
        common = {
            "run_id": run_id,
            "automation": automation,
            "check_name": name,
            "scheduled_for": slot,
            "outcome": _outcome(outcome, passed, error),
        }
        measured = number(_json(value, text=text))
        batch.append({**common, "metric": VALUE, "value": measured, "low": low, "high": high})
        for metric, raw in (_json(metrics, text=text) or {}).items():
            point = number(raw)
            if point is not None and metric != VALUE and not isinstance(raw, bool):
                batch.append(
                    {**common, "metric": metric, "value": point, "low": None, "high": None}
                )
        if len(batch) >= _BATCH:
            bind.execute(series.insert(), batch)
            batch = []
    if batch:
        bind.execute(series.insert(), batch)


def downgrade() -> None:
    with op.batch_alter_table("check_series", schema=None) as batch_op:
        batch_op.drop_index("ix_check_series_lookup")
        batch_op.drop_index(batch_op.f("ix_check_series_run_id"))
    op.drop_table("check_series")
