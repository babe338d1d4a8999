"""evidence.query_key and evidence_row_sets: each query's row hashes, for the row diff

Revision ID: 0015
Revises: 0014
"""

import sqlalchemy as sa
from alembic import op

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("evidence", schema=None) as batch_op:
        batch_op.add_column(sa.Column("query_key", sa.String(length=64), nullable=True))
    op.create_table(
        "evidence_row_sets",
        sa.Column("evidence_id", sa.Integer(), nullable=False),
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("automation", sa.String(length=64), nullable=False),
        sa.Column("query_key", sa.String(length=64), nullable=False),
        sa.Column("hashed", sa.Integer(), nullable=False),
        sa.Column("capped", sa.Boolean(), nullable=False),
        sa.Column("hashes", sa.LargeBinary(), nullable=False),
        sa.Column("sample", sa.LargeBinary(), nullable=False),
        sa.ForeignKeyConstraint(["evidence_id"], ["evidence.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["run_id"], ["runs.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("evidence_id"),
    )
    op.create_index("ix_evidence_row_sets_query", "evidence_row_sets", ["automation", "query_key"])
    op.create_index("ix_evidence_row_sets_run_id", "evidence_row_sets", ["run_id"])


def downgrade() -> None:
    op.drop_index("ix_evidence_row_sets_run_id", table_name="evidence_row_sets")
    op.drop_index("ix_evidence_row_sets_query", table_name="evidence_row_sets")
    op.drop_table("evidence_row_sets")
    with op.batch_alter_table("evidence", schema=None) as batch_op:
        batch_op.drop_column("query_key")
