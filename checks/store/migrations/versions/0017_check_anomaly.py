"""check_results.anomaly and check_results.buckets: what an anomaly expectation computed, and
the time buckets of a check with over:

Revision ID: 0017
Revises: 0016
"""

import sqlalchemy as sa
from alembic import op

revision = "0017"
down_revision = "0016"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("check_results", schema=None) as batch_op:
        batch_op.add_column(sa.Column("anomaly", sa.JSON(), nullable=True))
        batch_op.add_column(sa.Column("buckets", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("check_results", schema=None) as batch_op:
        batch_op.drop_column("buckets")
        batch_op.drop_column("anomaly")
