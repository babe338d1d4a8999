"""alert_incidents.last_notified_at may be NULL: an incident opened by a run that announced nothing

Incidents now move on every stored run, with or without alerts; NULL means
the incident was never announced, so the first announcing run announces it.

Revision ID: 0011
Revises: 0010
"""

from alembic import op

from checks.store.run_tables import UTCDateTime

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("alert_incidents", schema=None) as batch_op:
        batch_op.alter_column("last_notified_at", existing_type=UTCDateTime(), nullable=True)


def downgrade() -> None:
    op.execute(
        "UPDATE alert_incidents SET last_notified_at = opened_at WHERE last_notified_at IS NULL"
    )
    with op.batch_alter_table("alert_incidents", schema=None) as batch_op:
        batch_op.alter_column("last_notified_at", existing_type=UTCDateTime(), nullable=False)
