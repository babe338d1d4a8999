"""service: run source and send time, schedule cursors

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-01 00:00:00
"""

import sqlalchemy as sa
from alembic import op

from checks.store.run_tables import UTCDateTime

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("runs", schema=None) as batch_op:
        batch_op.add_column(sa.Column("source", sa.String(length=64), nullable=True))
        batch_op.add_column(sa.Column("enqueued_at", UTCDateTime(), nullable=True))
    op.create_table(
        "schedule_cursors",
        sa.Column("automation", sa.String(length=64), nullable=False),
        sa.Column("schedule_key", sa.Text(), nullable=False),
        sa.Column("cursor_at", UTCDateTime(), nullable=False),
        sa.Column("updated_at", UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("automation"),
    )


def downgrade() -> None:
    op.drop_table("schedule_cursors")
    with op.batch_alter_table("runs", schema=None) as batch_op:
        batch_op.drop_column("enqueued_at")
        batch_op.drop_column("source")
