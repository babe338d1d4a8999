"""pinned_plans: each automation's accepted agent report, kept for later runs; runs.pinning

Revision ID: 0014
Revises: 0013
"""

import sqlalchemy as sa
from alembic import op

from checks.store.run_tables import UTCDateTime

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "pinned_plans",
        sa.Column("automation", sa.String(length=64), nullable=False),
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("made_at", UTCDateTime(), nullable=False),
        sa.Column("definition_hash", sa.String(length=64), nullable=False),
        sa.Column("model", sa.String(length=200), nullable=False),
        sa.Column("finding", sa.String(length=24), nullable=False),
        sa.Column("finding_source", sa.String(length=16), nullable=False),
        sa.Column("summary", sa.Text(), nullable=False),
        sa.Column("confidence", sa.String(length=16), nullable=True),
        sa.Column("queries", sa.JSON(), nullable=False),
        sa.Column("check_outcomes", sa.JSON(), nullable=False),
        sa.ForeignKeyConstraint(["run_id"], ["runs.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("automation"),
    )
    with op.batch_alter_table("pinned_plans", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_pinned_plans_run_id"), ["run_id"], unique=False)
    with op.batch_alter_table("runs", schema=None) as batch_op:
        batch_op.add_column(sa.Column("pinning", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("runs", schema=None) as batch_op:
        batch_op.drop_column("pinning")
    with op.batch_alter_table("pinned_plans", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_pinned_plans_run_id"))
    op.drop_table("pinned_plans")
