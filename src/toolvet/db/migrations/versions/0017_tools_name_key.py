"""tools name_key: other servers' tools found by the key of a name, whatever its spelling

Revision ID: 0017
Revises: 0016

Cross-server findings compared a pass's new tools only with other servers' tools of the very same name, so
a copy named ``Create-Issue`` or with a Cyrillic letter in ``create_issue`` was never compared with the
tool it copies. Each tool now stores the key of its name (``domain.findings.name_key``: folded, separators
taken out), filled in here for every existing tool, and the candidates' index is on it instead of the name.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from toolvet.domain.findings import name_key

revision = '0017'
down_revision = '0016'
branch_labels = None
depends_on = None

_BATCH = 5000


def upgrade() -> None:
    # In place on both databases (ALTER TABLE ... ADD COLUMN), nullable: a batch rebuild of `tools` on
    # SQLite would drop the old table and its settings, reviews and history with it (ON DELETE CASCADE).
    op.add_column('tools', sa.Column('name_key', sa.Text(), nullable=True))
    tools = sa.table('tools', sa.column('id', sa.Integer), sa.column('name', sa.Text),
                     sa.column('name_key', sa.Text))
    conn = op.get_bind()
    last = 0
    while True:
        rows = conn.execute(sa.select(tools.c.id, tools.c.name).where(tools.c.id > last)
                            .order_by(tools.c.id).limit(_BATCH)).all()
        if not rows:
            break
        conn.execute(tools.update().where(tools.c.id == sa.bindparam('p_id'))
                     .values(name_key=sa.bindparam('p_key')),
                     [{'p_id': row.id, 'p_key': name_key(row.name)} for row in rows])
        last = rows[-1].id
    op.create_index('ix_tools_name_key_id', 'tools', ['name_key', 'id'])
    op.drop_index('ix_tools_name_id', table_name='tools')


def downgrade() -> None:
    op.create_index('ix_tools_name_id', 'tools', ['name', 'id'])
    op.drop_index('ix_tools_name_key_id', table_name='tools')
    op.drop_column('tools', 'name_key')
