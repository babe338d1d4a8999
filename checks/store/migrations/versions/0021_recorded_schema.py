"""check_results.recorded_schema: the columns a schema check with changes saw

Revision ID: 0021
Revises: 0020
"""

import sqlalchemy as sa
from alembic import op

revision = "0021"
down_revision = "0020"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("check_results", schema=None) as batch_op:
        batch_op.add_column(sa.Column("recorded_schema", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("check_results", schema=None) as batch_op:
        batch_op.drop_column("recorded_schema")
