"""hold flagged tools: a server may hold its tools that have a high finding until they are reviewed

Revision ID: 0006
Revises: 0005

"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = '0006'
down_revision = '0005'
branch_labels = None
depends_on = None


def upgrade() -> None:
    # In place (ALTER TABLE ... ADD COLUMN) on both databases: a batch rebuild of `servers` on SQLite
    # would drop the old table, and its tools with it (ON DELETE CASCADE).
    op.add_column('servers', sa.Column('hold_flagged_tools', sa.Boolean(), nullable=False,
                                       server_default=sa.false()))


def downgrade() -> None:
    op.drop_column('servers', 'hold_flagged_tools')
