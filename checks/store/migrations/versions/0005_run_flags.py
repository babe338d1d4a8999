"""runs.flags: the second opinion's flags, filterable on every database

Revision ID: 0005
Revises: 0004
"""

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("runs", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("flags", sa.String(length=200), nullable=False, server_default="")
        )
        batch_op.create_index("ix_runs_flags", ["flags"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("runs", schema=None) as batch_op:
        batch_op.drop_index("ix_runs_flags")
        batch_op.drop_column("flags")
