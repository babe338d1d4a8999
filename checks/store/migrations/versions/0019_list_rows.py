"""list_rows: the review list's rows, stored (each automation's latest report, each open
incident's newest run of its kind, with the run's list columns)

Each request of the list scanned every stored run twice to find them; every
writer of runs and incidents now keeps them (``checks.store.list_rows``).
Filled here from the runs and incidents already stored, with the same rules
as ``checks.store.list_rows.scanned`` (written out here: a migration keeps
the rules it was written with).

Revision ID: 0019
Revises: 0018
"""

import sqlalchemy as sa
from alembic import op

revision = "0019"
down_revision = "0018"
branch_labels = None
depends_on = None

_COPIED = """
    r.id AS run_id, r.scheduled_for AS scheduled_for,
    CASE WHEN r.status IN ('completed', 'error') THEN 1 ELSE 0 END AS reported,
    r.owner AS owner, r.tags AS tags, coalesce(r.source, r.definition_source) AS source,
    r.flags AS flags, r.urgency AS urgency, r.severity AS severity, r.status AS status,
    r.finding AS finding, coalesce(r.finished_at, r.scheduled_for) AS at
"""
_COLUMNS = (
    "automation, incident_id, run_id, scheduled_for, reported, owner, tags, source, flags,"
    " urgency, severity, status, finding, at"
)
_REPORTS = f"""
INSERT INTO list_rows ({_COLUMNS})
SELECT {_COLUMNS} FROM (
    SELECT r.automation AS automation, 0 AS incident_id, {_COPIED},
        row_number() OVER (
            PARTITION BY r.automation
            ORDER BY CASE WHEN r.status IN ('completed', 'error') THEN 1 ELSE 0 END DESC,
                r.scheduled_for DESC
        ) AS n
    FROM runs r WHERE r.status IN ('completed', 'error', 'skipped')
) AS ranked
WHERE n = 1
"""
_INCIDENTS = f"""
INSERT INTO list_rows ({_COLUMNS})
SELECT {_COLUMNS} FROM (
    SELECT r.automation AS automation, i.id AS incident_id, {_COPIED},
        row_number() OVER (PARTITION BY i.id ORDER BY r.scheduled_for DESC, r.id DESC) AS n
    FROM alert_incidents i JOIN runs r
        ON r.automation = i.automation AND r.id >= coalesce(i.opened_run_id, 0)
        AND ((i.kind = 'error' AND r.status = 'error')
            OR (i.kind <> 'error' AND r.status = 'completed' AND r.finding = 'needs_attention'))
    WHERE i.open_key IS NOT NULL
) AS ranked
WHERE n = 1
"""


def upgrade() -> None:
    op.create_table(
        "list_rows",
        sa.Column("automation", sa.String(length=64), nullable=False),
        sa.Column("incident_id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column(
            "run_id",
            sa.Integer(),
            sa.ForeignKey("runs.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("scheduled_for", sa.DateTime(), nullable=False),
        sa.Column("reported", sa.Integer(), nullable=False),
        sa.Column("owner", sa.Text(), nullable=True),
        sa.Column("tags", sa.Text(), nullable=False),
        sa.Column("source", sa.Text(), nullable=True),
        sa.Column("flags", sa.String(length=200), nullable=False),
        sa.Column("urgency", sa.String(length=16), nullable=True),
        sa.Column("severity", sa.String(length=16), nullable=True),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("finding", sa.String(length=24), nullable=True),
        sa.Column("at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("automation", "incident_id"),
    )
    op.create_index("ix_list_rows_run_id", "list_rows", ["run_id"])
    op.execute(_REPORTS)
    op.execute(_INCIDENTS)


def downgrade() -> None:
    op.drop_table("list_rows")
