"""tools: the definition's members read from the definition, not stored beside it

Revision ID: 0022
Revises: 0021

``tools`` held ``input_schema``, ``output_schema``, ``annotations``, ``icons`` and ``meta`` beside the
``definition`` they are members of: about a third of a tool's row, written with every new or changed
claim and rewritten by every pass that touches the row. The model now reads them from the definition
(``db.models.Tool``), so the columns go. Dropped in place (native ``ALTER TABLE ... DROP COLUMN`` on
SQLite too: recreating ``tools`` would drop it, and with foreign keys on, SQLite's implicit delete
would cascade into the tables that point at it; see 0005). Downgrading adds them back in place and
fills them from each tool's definition (an input schema it lacks as ``{}``); ``input_schema`` comes
back NOT NULL with a server default of ``{}``, which PostgreSQL then drops again (SQLite cannot drop a
default without recreating the table).
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from alembic import op

revision = '0022'
down_revision = '0021'
branch_labels = None
depends_on = None

#: (column, the definition's member) of each dropped column.
_MEMBERS = (('input_schema', 'inputSchema'), ('output_schema', 'outputSchema'), ('annotations', 'annotations'),
            ('icons', 'icons'), ('meta', '_meta'))
_BATCH = 5000


def _members(definition: dict[str, Any]) -> dict[str, Any]:
    """The columns' values of one definition; an input schema it lacks (toolvet writes none) is ``{}``."""
    values = {column: definition.get(member) for column, member in _MEMBERS}
    if values['input_schema'] is None:
        values['input_schema'] = {}
    return values


def upgrade() -> None:
    for column, _member in _MEMBERS:
        op.drop_column('tools', column)


def downgrade() -> None:
    op.add_column('tools', sa.Column('input_schema', sa.JSON(none_as_null=True), nullable=False, server_default='{}'))
    for column, _member in _MEMBERS[1:]:
        op.add_column('tools', sa.Column(column, sa.JSON(none_as_null=True), nullable=True))
    tools = sa.table('tools', sa.column('id', sa.Integer), sa.column('definition', sa.JSON(none_as_null=True)),
                     *(sa.column(column, sa.JSON(none_as_null=True)) for column, _member in _MEMBERS))
    conn = op.get_bind()
    last = 0
    while True:
        rows = conn.execute(sa.select(tools.c.id, tools.c.definition).where(tools.c.id > last)
                            .order_by(tools.c.id).limit(_BATCH)).all()
        if not rows:
            break
        conn.execute(tools.update().where(tools.c.id == sa.bindparam('p_id')),
                     [{'p_id': row.id, **_members(row.definition)} for row in rows])
        last = rows[-1].id
    if conn.dialect.name != 'sqlite':
        op.alter_column('tools', 'input_schema', server_default=None)
