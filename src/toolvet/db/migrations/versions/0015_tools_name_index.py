"""an index on tools (name, id): the earliest tools of other servers that bear a name

Revision ID: 0015
Revises: 0013

Cross-server findings compare a pass's new and changed tools with the earliest tools of other servers
that bear the same name. Without this index each pass read the tools table from its start until it had
enough matches, which on a registry of tens of thousands of tools was most of the table per pass.
"""

from __future__ import annotations

from alembic import op

revision = '0015'
down_revision = '0013'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index('ix_tools_name_id', 'tools', ['name', 'id'])


def downgrade() -> None:
    op.drop_index('ix_tools_name_id', table_name='tools')
