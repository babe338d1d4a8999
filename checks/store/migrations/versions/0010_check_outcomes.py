"""check_results: kind, outcome (not_evaluated beside passed, failed, error), reason, metrics

Revision ID: 0010
Revises: 0009
"""

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("check_results", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("kind", sa.String(length=32), nullable=False, server_default="sql")
        )
        batch_op.add_column(sa.Column("outcome", sa.String(length=16), nullable=True))
        batch_op.add_column(sa.Column("reason", sa.Text(), nullable=True))
        batch_op.add_column(sa.Column("metrics", sa.JSON(), nullable=True))
        batch_op.add_column(sa.Column("warnings", sa.JSON(), nullable=True))
        batch_op.add_column(sa.Column("sample_id", sa.String(length=16), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("check_results", schema=None) as batch_op:
        for column in ("sample_id", "warnings", "metrics", "reason", "outcome", "kind"):
            batch_op.drop_column(column)
