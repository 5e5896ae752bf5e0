"""tool sets: operator-defined allow-lists served at /mcp/sets/{name}

Revision ID: 0007
Revises: 0006

One new table, ``tool_sets``. A set's ``members`` are a JSON list of ``{"server", "tool"}`` (``tool``
null: every offered tool of that server). Members name servers by name, not by id, and carry no
foreign key: a set may name a server registered later, and removing a server leaves the sets that
name it as they were (the gateway lists what is offered of them, which is then nothing).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

import toolvet.db.types

revision = '0007'
down_revision = '0006'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('tool_sets',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('name', sa.String(length=32), nullable=False),
    sa.Column('title', sa.Text(), nullable=True),
    sa.Column('description', sa.Text(), nullable=True),
    sa.Column('members', sa.JSON(none_as_null=True), nullable=False),
    sa.Column('created_at', toolvet.db.types.UTCDateTime(timezone=True), nullable=False),
    sa.Column('updated_at', toolvet.db.types.UTCDateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('name')
    )


def downgrade() -> None:
    op.drop_table('tool_sets')
