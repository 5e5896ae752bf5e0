"""approval floor: an operator's floor under the users' choices, on servers and on tools

Revision ID: 0008
Revises: 0007

``servers.approval`` and ``tool_settings.approval`` (``user``, ``always`` or ``operator``; the
stricter of a tool's and its server's applies), and ``calls.approval``, the floor a call was decided
under, so an ``operator`` call is never approved by its own consumer token. Every existing row gets
``user``: nothing changes until an operator sets a floor.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = '0008'
down_revision = '0007'
branch_labels = None
depends_on = None

_TABLES = ('servers', 'tool_settings', 'calls')


def upgrade() -> None:
    # In place (ALTER TABLE ... ADD COLUMN) on both databases: a batch rebuild of `servers` or
    # `tool_settings` on SQLite would drop the old table, and every row referencing it (ON DELETE CASCADE).
    for table in _TABLES:
        op.add_column(table, sa.Column('approval', sa.String(length=10), nullable=False, server_default='user'))


def downgrade() -> None:
    # DROP COLUMN in place too (SQLite 3.35+), for the same reason.
    for table in reversed(_TABLES):
        op.drop_column(table, 'approval')
