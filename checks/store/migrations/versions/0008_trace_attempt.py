"""trace events: the attempt that wrote each one

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-03 00:00:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("trace_events", schema=None) as batch_op:
        batch_op.add_column(sa.Column("attempt", sa.Integer(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("trace_events", schema=None) as batch_op:
        batch_op.drop_column("attempt")
