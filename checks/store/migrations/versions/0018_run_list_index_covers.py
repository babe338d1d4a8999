"""runs: ix_runs_list carries the review list's and /metrics' columns (PostgreSQL)

The list reads each row's owner, tags, flags, urgency, severity, source and
times with its slot, status and finding (``worker.review.board``), and
``/metrics`` sums the flags, tokens and cost of every run
(``worker.review.stats``). On PostgreSQL the index includes those columns, so
both read the index alone instead of the runs' wide rows (each holds its
definition as JSON). SQLite has no included columns: its index is unchanged.

Revision ID: 0018
Revises: 0017
"""

from alembic import op

revision = "0018"
down_revision = "0017"
branch_labels = None
depends_on = None

_KEY = ["automation", "scheduled_for", "id", "status", "finding", "finding_source"]
_INCLUDES = [
    "owner",
    "tags",
    "flags",
    "urgency",
    "severity",
    "source",
    "definition_source",
    "finished_at",
    *(
        f"{c}_{p}"
        for c in ("agent", "decision")
        for p in ("input_tokens", "output_tokens", "cost_usd")
    ),
]


def _recreate(include: list[str]) -> None:
    op.drop_index("ix_runs_list", table_name="runs")
    op.create_index("ix_runs_list", "runs", _KEY, postgresql_include=include)


def upgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        _recreate(_INCLUDES)


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        _recreate([])
