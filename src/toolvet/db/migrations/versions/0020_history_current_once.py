"""tool_definitions: a tool's current definition stored once, in its claim; when each was left

Revision ID: 0020
Revises: 0019

Every tool's current definition was stored twice: in its claim (``tools.definition``) and in its
history row. A history row now holds NULL while it is its tool's current definition, and gets its text
when the claim moves on (a discovery pass or an edit writes the outgoing text first). Existing rows
whose digest is their tool's current one are emptied here, which gives back about a third of what a
tool takes in the database; downgrading writes the claims' texts back into them.

``left_at`` notes when the claim moved off a definition, so the one a tool had before its current one
is the one it left last (a tool that went A, B, A, C had A before C; the rows' order says B); the same
for prompts, resources and templates (``entry_definitions.left_at``). Rows kept before this revision
have none.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

import toolvet.db.types

revision = '0020'
down_revision = '0019'
branch_labels = None
depends_on = None

_history = sa.table('tool_definitions', sa.column('tool_id', sa.Integer), sa.column('digest', sa.String),
                    sa.column('definition', sa.JSON))
_tools = sa.table('tools', sa.column('id', sa.Integer), sa.column('definition_digest', sa.String),
                  sa.column('definition', sa.JSON))
_current = (sa.select(_tools.c.id)
            .where(_tools.c.id == _history.c.tool_id, _tools.c.definition_digest == _history.c.digest)
            .exists())


def upgrade() -> None:
    # SQLite rebuilds tool_definitions to drop NOT NULL (no other table references it).
    with op.batch_alter_table('tool_definitions', schema=None) as batch_op:
        batch_op.alter_column('definition', existing_type=sa.JSON(none_as_null=True), nullable=True)
        batch_op.add_column(sa.Column('left_at', toolvet.db.types.UTCDateTime(timezone=True), nullable=True))
    op.add_column('entry_definitions', sa.Column('left_at', toolvet.db.types.UTCDateTime(timezone=True), nullable=True))
    op.get_bind().execute(_history.update().where(_current).values(definition=sa.null()))


def downgrade() -> None:
    with op.batch_alter_table('entry_definitions', schema=None) as batch_op:
        batch_op.drop_column('left_at')
    claim = (sa.select(_tools.c.definition).where(_tools.c.id == _history.c.tool_id).scalar_subquery())
    op.get_bind().execute(_history.update().where(_history.c.definition.is_(None)).values(definition=claim))
    with op.batch_alter_table('tool_definitions', schema=None) as batch_op:
        batch_op.drop_column('left_at')
        batch_op.alter_column('definition', existing_type=sa.JSON(none_as_null=True), nullable=False)
