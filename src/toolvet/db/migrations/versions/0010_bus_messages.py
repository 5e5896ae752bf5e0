"""bus messages: events too big for one PostgreSQL NOTIFY

Revision ID: 0010
Revises: 0009

One new table, ``bus_messages``: an event whose payload does not fit a ``NOTIFY`` (8000 bytes) is
stored here and its id notified instead; the receivers read it by id. Rows live for minutes. SQLite
gets the table too (one schema for both databases) and never writes it.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

import toolvet.db.types

revision = '0010'
down_revision = '0009'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('bus_messages',
    sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
    sa.Column('topic', sa.String(length=32), nullable=False),
    sa.Column('payload', sa.Text(), nullable=False),
    sa.Column('created_at', toolvet.db.types.UTCDateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('id'),
    )
    op.create_index(op.f('ix_bus_messages_created_at'), 'bus_messages', ['created_at'], unique=False)


def downgrade() -> None:
    op.drop_index(op.f('ix_bus_messages_created_at'), table_name='bus_messages')
    op.drop_table('bus_messages')
