"""four indexes dropped that a unique constraint's first column already gives

Revision ID: 0021
Revises: 0020

``ix_tools_server_id``, ``ix_tool_definitions_tool_id``, ``ix_entries_server_id`` and
``ix_entry_definitions_entry_id`` each indexed the first column of a unique constraint of the same
table (``uq_tools_server_name`` on server and name, ``uq_tool_definitions_digest`` on tool and digest,
and the entries' two alike). Both databases answer a lookup by that column, and the cascade of a
deleted server or tool, from the constraint's index, so each new tool or history row paid for an
index nothing needed. Downgrading makes them again.
"""

from __future__ import annotations

from alembic import op

revision = '0021'
down_revision = '0020'
branch_labels = None
depends_on = None

#: (index, table, column) of each dropped index.
_DROPPED = (
    ('ix_tools_server_id', 'tools', 'server_id'),
    ('ix_tool_definitions_tool_id', 'tool_definitions', 'tool_id'),
    ('ix_entries_server_id', 'entries', 'server_id'),
    ('ix_entry_definitions_entry_id', 'entry_definitions', 'entry_id'),
)


def upgrade() -> None:
    for index, table, _column in _DROPPED:
        op.drop_index(index, table_name=table)


def downgrade() -> None:
    for index, table, column in _DROPPED:
        op.create_index(index, table, [column], unique=False)
