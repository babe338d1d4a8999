"""calibrations: isotonic maps of the decision model's probabilities, fitted on ops' verdicts

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-05 00:00:00
"""

import sqlalchemy as sa
from alembic import op

from checks.store.run_tables import UTCDateTime

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "calibrations",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("backend", sa.String(length=32), nullable=False),
        sa.Column("model", sa.String(length=200), nullable=True),
        sa.Column("question", sa.String(length=32), nullable=False),
        sa.Column("method", sa.String(length=16), nullable=False),
        sa.Column("reviews", sa.Integer(), nullable=False),
        sa.Column("points", sa.JSON(), nullable=False),
        sa.Column("scores", sa.JSON(), nullable=False),
        sa.Column("fitted_at", UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("calibrations", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_calibrations_backend"), ["backend"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("calibrations", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_calibrations_backend"))
    op.drop_table("calibrations")
