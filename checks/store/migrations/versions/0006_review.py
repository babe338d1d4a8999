"""review: actions people took on runs, and resolved runs as labelled outcomes

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-02 00:00:00
"""

import sqlalchemy as sa
from alembic import op

from checks.store.run_tables import UTCDateTime

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "review_actions",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("automation", sa.String(length=64), nullable=False),
        sa.Column("incident_id", sa.Integer(), nullable=True),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("actor", sa.String(length=100), nullable=False),
        sa.Column("at", UTCDateTime(), nullable=False),
        sa.Column("assignee", sa.String(length=100), nullable=True),
        sa.Column("until", UTCDateTime(), nullable=True),
        sa.Column("reason", sa.String(length=24), nullable=True),
        sa.Column("comment", sa.Text(), nullable=True),
        sa.Column("queued_run_id", sa.Integer(), nullable=True),
        sa.ForeignKeyConstraint(["run_id"], ["runs.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("review_actions", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_review_actions_run_id"), ["run_id"], unique=False)
        batch_op.create_index(
            batch_op.f("ix_review_actions_automation"), ["automation"], unique=False
        )
        batch_op.create_index(
            batch_op.f("ix_review_actions_incident_id"), ["incident_id"], unique=False
        )

    op.create_table(
        "review_outcomes",
        sa.Column("run_id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("automation", sa.String(length=64), nullable=False),
        sa.Column("incident_id", sa.Integer(), nullable=True),
        sa.Column("reason", sa.String(length=24), nullable=False),
        sa.Column("comment", sa.Text(), nullable=True),
        sa.Column("labelled_by", sa.String(length=100), nullable=False),
        sa.Column("labelled_at", UTCDateTime(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("finding", sa.String(length=24), nullable=True),
        sa.Column("finding_source", sa.String(length=16), nullable=True),
        sa.Column("backend", sa.String(length=32), nullable=True),
        sa.Column("goal_met", sa.Float(), nullable=True),
        sa.Column("urgency", sa.String(length=24), nullable=True),
        sa.Column("flags", sa.JSON(), nullable=False),
        sa.ForeignKeyConstraint(["run_id"], ["runs.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("run_id"),
    )
    with op.batch_alter_table("review_outcomes", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_review_outcomes_automation"), ["automation"], unique=False
        )
        batch_op.create_index(batch_op.f("ix_review_outcomes_reason"), ["reason"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("review_outcomes", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_review_outcomes_reason"))
        batch_op.drop_index(batch_op.f("ix_review_outcomes_automation"))
    op.drop_table("review_outcomes")
    with op.batch_alter_table("review_actions", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_review_actions_incident_id"))
        batch_op.drop_index(batch_op.f("ix_review_actions_automation"))
        batch_op.drop_index(batch_op.f("ix_review_actions_run_id"))
    op.drop_table("review_actions")
