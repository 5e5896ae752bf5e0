"""webhooks: alert webhooks and the record of every delivery

Revision ID: 0012
Revises: 0011

Two new tables, nothing else touched: ``webhooks`` (an operator's hooks, each with its secret
sealed like upstream secrets) and ``webhook_deliveries`` (one row per alert sent to a hook, unique by
hook and alert, so replicas noticing the same event send it once).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

import toolvet.db.types

revision = '0012'
down_revision = '0011'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('webhooks',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('name', sa.String(length=32), nullable=False),
    sa.Column('url', sa.Text(), nullable=False),
    sa.Column('secret_sealed', sa.Text(), nullable=False),
    sa.Column('kinds', sa.JSON(none_as_null=True), nullable=False),
    sa.Column('enabled', sa.Boolean(), nullable=False),
    sa.Column('created_at', toolvet.db.types.UTCDateTime(timezone=True), nullable=False),
    sa.Column('created_by', sa.Text(), nullable=False),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('name')
    )
    op.create_table('webhook_deliveries',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('webhook', sa.String(length=40), nullable=False),
    sa.Column('alert_key', sa.String(length=200), nullable=False),
    sa.Column('kind', sa.String(length=40), nullable=False),
    sa.Column('payload', sa.JSON(none_as_null=True), nullable=False),
    sa.Column('status', sa.String(length=12), nullable=False),
    sa.Column('attempts', sa.Integer(), nullable=False),
    sa.Column('last_status_code', sa.Integer(), nullable=True),
    sa.Column('last_error', sa.Text(), nullable=True),
    sa.Column('created_at', toolvet.db.types.UTCDateTime(timezone=True), nullable=False),
    sa.Column('finished_at', toolvet.db.types.UTCDateTime(timezone=True), nullable=True),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('webhook', 'alert_key', name='uq_webhook_deliveries_alert')
    )
    op.create_index(op.f('ix_webhook_deliveries_webhook'), 'webhook_deliveries', ['webhook'], unique=False)
    op.create_index(op.f('ix_webhook_deliveries_created_at'), 'webhook_deliveries', ['created_at'], unique=False)


def downgrade() -> None:
    op.drop_index(op.f('ix_webhook_deliveries_created_at'), table_name='webhook_deliveries')
    op.drop_index(op.f('ix_webhook_deliveries_webhook'), table_name='webhook_deliveries')
    op.drop_table('webhook_deliveries')
    op.drop_table('webhooks')
