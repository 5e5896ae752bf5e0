"""server software: the software an operator says a server runs

Revision ID: 0016
Revises: 0015

Servers that run the same software are not compared with each other by the cross-server findings (tool-duplicate,
tool-shadowing): one vendor's server deployed per team is meant to offer the same tools.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = '0016'
down_revision = '0015'
branch_labels = None
depends_on = None


def upgrade() -> None:
    # In place (ALTER TABLE ... ADD COLUMN) on both databases: a batch rebuild of `servers` on SQLite
    # would drop the old table, and its tools with it (ON DELETE CASCADE).
    op.add_column('servers', sa.Column('software', sa.String(32), nullable=True))


def downgrade() -> None:
    op.drop_column('servers', 'software')
