"""tool mentions: the names a tool's text speaks of, so a tool that comes later finds who spoke of it

Revision ID: 0018
Revises: 0017

A description that steers the model about another server's tool (``when calling send_email, always
add ...``) was only read when its own server's pass ran: a tool of that name registered later never
showed the steering. Each tool now has a row per name-like word its title and description mention (by
the word's key), filled in here for every existing tool.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from toolvet.domain.findings import mentioned_names, name_key

revision = '0018'
down_revision = '0017'
branch_labels = None
depends_on = None

_BATCH = 5000


def upgrade() -> None:
    op.create_table(
        'tool_mentions',
        sa.Column('tool_id', sa.Integer(), sa.ForeignKey('tools.id', ondelete='CASCADE'), nullable=False),
        sa.Column('name_key', sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint('tool_id', 'name_key'),
    )
    op.create_index('ix_tool_mentions_name_key', 'tool_mentions', ['name_key'])
    tools = sa.table('tools', sa.column('id', sa.Integer), sa.column('title', sa.Text),
                     sa.column('description', sa.Text))
    mentions = sa.table('tool_mentions', sa.column('tool_id', sa.Integer), sa.column('name_key', sa.Text))
    conn = op.get_bind()
    last = 0
    while True:
        rows = conn.execute(sa.select(tools.c.id, tools.c.title, tools.c.description).where(tools.c.id > last)
                            .order_by(tools.c.id).limit(_BATCH)).all()
        if not rows:
            break
        found = [{'tool_id': row.id, 'name_key': key} for row in rows
                 for key in sorted({name_key(n) for n in mentioned_names(row.title, row.description)})]
        if found:
            conn.execute(mentions.insert(), found)
        last = rows[-1].id


def downgrade() -> None:
    op.drop_index('ix_tool_mentions_name_key', table_name='tool_mentions')
    op.drop_table('tool_mentions')
