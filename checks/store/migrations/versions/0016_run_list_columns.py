"""runs: the review page's columns (owner, severity, tags, …, urgency, tokens, cost); indexes

The list filters, orders and pages in SQL (``worker.review.board``) and
``/metrics`` sums in SQL: what they read of a run's definition, agent and
second opinion becomes plain columns (``checks.store.list_columns``), filled
here from the runs already stored.
Indexes for the list: each automation's runs by slot with their id, status,
finding and who decided it (each automation's latest report, each open
incident's run and the runs counted by kind, read from the index alone),
deliveries by incident.

Revision ID: 0016
Revises: 0015
"""

import json
from typing import Any

import sqlalchemy as sa
from alembic import op

from checks.store.list_columns import definition_columns, urgency_column, usage_columns

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None

_BATCH = 1000
_USAGE = tuple(
    f"{component}_{part}"
    for component in ("agent", "decision")
    for part in ("input_tokens", "output_tokens", "cost_usd")
)
_COLUMNS = ("owner", "severity", "tags", "description", "definition_source", "urgency", *_USAGE)


def upgrade() -> None:
    with op.batch_alter_table("runs", schema=None) as batch_op:
        batch_op.add_column(sa.Column("owner", sa.Text(), nullable=True))
        batch_op.add_column(sa.Column("severity", sa.String(length=16), nullable=True))
        batch_op.add_column(sa.Column("tags", sa.Text(), nullable=False, server_default=""))
        batch_op.add_column(sa.Column("description", sa.Text(), nullable=True))
        batch_op.add_column(sa.Column("definition_source", sa.Text(), nullable=True))
        batch_op.add_column(sa.Column("urgency", sa.String(length=16), nullable=True))
        for column in _USAGE:
            kind = sa.Float() if column.endswith("cost_usd") else sa.Integer()
            batch_op.add_column(sa.Column(column, kind, nullable=True))
        batch_op.create_index(
            "ix_runs_list",
            ["automation", "scheduled_for", "id", "status", "finding", "finding_source"],
        )
    with op.batch_alter_table("alert_deliveries", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_alert_deliveries_incident_id"), ["incident_id"])
    _backfill()


def _json(value: Any, *, text: bool) -> Any:
    """A JSON column read with plain SQL: text on SQLite, already parsed by psycopg."""
    return json.loads(value) if text and isinstance(value, str) else value


def _backfill() -> None:
    bind = op.get_bind()
    text = bind.dialect.name == "sqlite"
    runs = sa.table("runs", sa.column("id"), *(sa.column(c) for c in _COLUMNS))
    update = (
        runs.update()
        .where(runs.c.id == sa.bindparam("run_id"))
        .values({c: sa.bindparam(f"new_{c}") for c in _COLUMNS})
    )
    found = bind.execute(
        sa.text("SELECT id, definition, second_opinion, agent FROM runs ORDER BY id")
    )
    batch: list[dict[str, Any]] = []
    for run_id, definition, opinion, agent in found.all():
        columns = definition_columns(_json(definition, text=text))
        columns["urgency"] = urgency_column(_json(opinion, text=text))
        columns.update(usage_columns("decision", _json(opinion, text=text)))
        columns.update(usage_columns("agent", _json(agent, text=text)))
        batch.append({"run_id": run_id, **{f"new_{c}": v for c, v in columns.items()}})
        if len(batch) >= _BATCH:
            bind.execute(update, batch)
            batch = []
    if batch:
        bind.execute(update, batch)


def downgrade() -> None:
    with op.batch_alter_table("alert_deliveries", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_alert_deliveries_incident_id"))
    with op.batch_alter_table("runs", schema=None) as batch_op:
        batch_op.drop_index("ix_runs_list")
        for column in reversed(_COLUMNS):
            batch_op.drop_column(column)
