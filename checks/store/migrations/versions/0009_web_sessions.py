"""web sessions: the review page's logged-in sessions, revocable on the server

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-03 00:00:00
"""

import sqlalchemy as sa
from alembic import op

from checks.store.run_tables import UTCDateTime

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "web_sessions",
        sa.Column("id", sa.String(length=64), nullable=False),
        sa.Column("user", sa.String(length=100), nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.Column("expires_at", UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("web_sessions", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_web_sessions_user"), ["user"], unique=False)
        batch_op.create_index(
            batch_op.f("ix_web_sessions_expires_at"), ["expires_at"], unique=False
        )


def downgrade() -> None:
    with op.batch_alter_table("web_sessions", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_web_sessions_expires_at"))
        batch_op.drop_index(batch_op.f("ix_web_sessions_user"))
    op.drop_table("web_sessions")
