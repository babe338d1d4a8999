"""alerts: planned events per run, incidents, deliveries and their attempts

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-01 00:00:00
"""

import sqlalchemy as sa
from alembic import op

from checks.store.run_tables import UTCDateTime

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "alert_runs",
        sa.Column("run_id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("automation", sa.String(length=64), nullable=False),
        sa.Column("scheduled_for", UTCDateTime(), nullable=False),
        sa.Column("planned_at", UTCDateTime(), nullable=False),
        sa.Column("events", sa.JSON(), nullable=False),
        sa.Column("note", sa.Text(), nullable=True),
        sa.ForeignKeyConstraint(["run_id"], ["runs.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("run_id"),
    )
    with op.batch_alter_table("alert_runs", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_alert_runs_automation"), ["automation"], unique=False)

    op.create_table(
        "alert_incidents",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("automation", sa.String(length=64), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("open_key", sa.String(length=100), nullable=True),
        sa.Column("opened_at", UTCDateTime(), nullable=False),
        sa.Column("opened_run_id", sa.Integer(), nullable=True),
        sa.Column("last_notified_at", UTCDateTime(), nullable=False),
        sa.Column("reminders", sa.Integer(), nullable=False),
        sa.Column("closed_at", UTCDateTime(), nullable=True),
        sa.Column("closed_run_id", sa.Integer(), nullable=True),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("open_key"),
    )
    with op.batch_alter_table("alert_incidents", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_alert_incidents_automation"), ["automation"], unique=False
        )

    op.create_table(
        "alert_deliveries",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("run_id", sa.Integer(), nullable=True),
        sa.Column("event", sa.String(length=32), nullable=False),
        sa.Column("channel", sa.String(length=64), nullable=False),
        sa.Column("channel_type", sa.String(length=16), nullable=False),
        sa.Column("reminder", sa.Boolean(), nullable=False),
        sa.Column("incident_id", sa.Integer(), nullable=True),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("not_before", UTCDateTime(), nullable=True),
        sa.Column("alert", sa.JSON(), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("http_status", sa.Integer(), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.Column("claimed_at", UTCDateTime(), nullable=True),
        sa.Column("finished_at", UTCDateTime(), nullable=True),
        sa.ForeignKeyConstraint(["run_id"], ["runs.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("run_id", "event", "channel", name="uq_alert_deliveries_key"),
    )
    with op.batch_alter_table("alert_deliveries", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_alert_deliveries_run_id"), ["run_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_alert_deliveries_status"), ["status"], unique=False)

    op.create_table(
        "alert_attempts",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("delivery_id", sa.Integer(), nullable=False),
        sa.Column("number", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("at", UTCDateTime(), nullable=False),
        sa.Column("outcome", sa.String(length=16), nullable=False),
        sa.Column("http_status", sa.Integer(), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("duration_ms", sa.Integer(), nullable=True),
        sa.ForeignKeyConstraint(["delivery_id"], ["alert_deliveries.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("alert_attempts", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_alert_attempts_delivery_id"), ["delivery_id"], unique=False
        )


def downgrade() -> None:
    with op.batch_alter_table("alert_attempts", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_alert_attempts_delivery_id"))
    op.drop_table("alert_attempts")
    with op.batch_alter_table("alert_deliveries", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_alert_deliveries_status"))
        batch_op.drop_index(batch_op.f("ix_alert_deliveries_run_id"))
    op.drop_table("alert_deliveries")
    with op.batch_alter_table("alert_incidents", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_alert_incidents_automation"))
    op.drop_table("alert_incidents")
    with op.batch_alter_table("alert_runs", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_alert_runs_automation"))
    op.drop_table("alert_runs")
