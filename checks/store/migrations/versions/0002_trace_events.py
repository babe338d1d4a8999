"""trace events of the agent loop

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-30 02:00:00
"""

import sqlalchemy as sa
from alembic import op

from checks.store.run_tables import UTCDateTime

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "trace_events",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("at", UTCDateTime(), nullable=False),
        sa.Column("kind", sa.String(length=32), nullable=False),
        sa.Column("payload", sa.JSON(), nullable=False),
        sa.ForeignKeyConstraint(["run_id"], ["runs.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("run_id", "seq", name="uq_trace_events_seq"),
    )
    with op.batch_alter_table("trace_events", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_trace_events_run_id"), ["run_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("trace_events", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_trace_events_run_id"))
    op.drop_table("trace_events")
