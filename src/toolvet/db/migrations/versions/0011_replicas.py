"""replicas: handshake-era MCP sessions, call intents, and fleet-wide rate windows

Revision ID: 0011
Revises: 0010

``mcp_sessions`` keeps what a handshake-era session's client changed after ``initialize`` (its log
level) and that it ended; the rest travels in the signed session id. ``calls`` gains ``intent`` (a
digest of who asked for what; one pending call per intent, so a retry resumes the call it repeats),
``waited_at`` (the waiting process's heartbeat) and ``delivered`` (whether a caller was given the
outcome). ``rate_windows`` counts each token's requests per minute. Existing calls get no intent:
only calls made from now on are matched to their retries.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from toolvet.db.types import UTCDateTime

revision = '0011'
down_revision = '0010'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        'mcp_sessions',
        sa.Column('id', sa.String(length=64), primary_key=True),
        sa.Column('endpoint', sa.Text(), nullable=False),
        sa.Column('log_level', sa.String(length=16), nullable=True),
        sa.Column('ended', sa.Boolean(), nullable=False),
        sa.Column('updated_at', UTCDateTime(timezone=True), nullable=False),
    )
    op.create_index('ix_mcp_sessions_updated_at', 'mcp_sessions', ['updated_at'])
    op.create_table(
        'rate_windows',
        sa.Column('key', sa.String(length=64), nullable=False),
        sa.Column('window', sa.Integer(), autoincrement=False, nullable=False),
        sa.Column('count', sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint('key', 'window'),
    )
    # In place (ALTER TABLE ... ADD COLUMN): never a batch rebuild of a referenced table on SQLite.
    op.add_column('calls', sa.Column('intent', sa.String(length=64), nullable=True))
    op.add_column('calls', sa.Column('waited_at', UTCDateTime(timezone=True), nullable=True))
    op.add_column('calls', sa.Column('delivered', sa.Boolean(), nullable=False, server_default=sa.false()))
    op.create_index('ix_calls_pending_intent', 'calls', ['intent'], unique=True,
                    sqlite_where=sa.text("status = 'pending'"), postgresql_where=sa.text("status = 'pending'"))


def downgrade() -> None:
    op.drop_index('ix_calls_pending_intent', table_name='calls')
    for column in ('delivered', 'waited_at', 'intent'):
        op.drop_column('calls', column)
    op.drop_table('rate_windows')
    op.drop_index('ix_mcp_sessions_updated_at', table_name='mcp_sessions')
    op.drop_table('mcp_sessions')
