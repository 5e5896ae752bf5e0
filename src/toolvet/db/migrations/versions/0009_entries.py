"""a server's prompts, resources and resource templates, vetted like its tools

Revision ID: 0009
Revises: 0008

Four new tables, in the tools' split of owners: ``entries`` (the claim discovery writes: kind, key,
the definition verbatim, its fingerprint and digest, findings), ``entry_settings`` (the operator's
``enabled``), ``entry_reviews`` (the current review) and ``entry_definitions`` (every distinct
definition, for the review diff). Nothing existing is touched; a downgrade drops the four tables.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

import toolvet.db.types

revision = '0009'
down_revision = '0008'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('entries',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('server_id', sa.Integer(), nullable=False),
    sa.Column('kind', sa.String(length=10), nullable=False),
    sa.Column('key', sa.Text(), nullable=False),
    sa.Column('name', sa.Text(), nullable=True),
    sa.Column('title', sa.Text(), nullable=True),
    sa.Column('description', sa.Text(), nullable=True),
    sa.Column('definition', sa.JSON(none_as_null=True), nullable=False),
    sa.Column('fingerprint', sa.String(length=71), nullable=False),
    sa.Column('digest', sa.String(length=71), nullable=False),
    sa.Column('first_seen_at', toolvet.db.types.UTCDateTime(timezone=True), nullable=False),
    sa.Column('last_seen_at', toolvet.db.types.UTCDateTime(timezone=True), nullable=False),
    sa.Column('retired_at', toolvet.db.types.UTCDateTime(timezone=True), nullable=True),
    sa.Column('findings', sa.JSON(none_as_null=True), nullable=False),
    sa.ForeignKeyConstraint(['server_id'], ['servers.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('server_id', 'kind', 'key', name='uq_entries_server_kind_key')
    )
    op.create_index(op.f('ix_entries_server_id'), 'entries', ['server_id'], unique=False)
    op.create_table('entry_settings',
    sa.Column('entry_id', sa.Integer(), nullable=False),
    sa.Column('enabled', sa.Boolean(), nullable=False),
    sa.ForeignKeyConstraint(['entry_id'], ['entries.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('entry_id')
    )
    op.create_table('entry_reviews',
    sa.Column('entry_id', sa.Integer(), nullable=False),
    sa.Column('fingerprint', sa.String(length=71), nullable=False),
    sa.Column('digest', sa.String(length=71), nullable=False),
    sa.Column('reviewed_at', toolvet.db.types.UTCDateTime(timezone=True), nullable=False),
    sa.Column('reviewed_by', sa.Text(), nullable=False),
    sa.ForeignKeyConstraint(['entry_id'], ['entries.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('entry_id')
    )
    op.create_table('entry_definitions',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('entry_id', sa.Integer(), nullable=False),
    sa.Column('digest', sa.String(length=71), nullable=False),
    sa.Column('fingerprint', sa.String(length=71), nullable=False),
    sa.Column('definition', sa.JSON(none_as_null=True), nullable=False),
    sa.Column('first_seen_at', toolvet.db.types.UTCDateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['entry_id'], ['entries.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('entry_id', 'digest', name='uq_entry_definitions_digest')
    )
    op.create_index(op.f('ix_entry_definitions_entry_id'), 'entry_definitions', ['entry_id'], unique=False)


def downgrade() -> None:
    op.drop_index(op.f('ix_entry_definitions_entry_id'), table_name='entry_definitions')
    op.drop_table('entry_definitions')
    op.drop_table('entry_reviews')
    op.drop_table('entry_settings')
    op.drop_index(op.f('ix_entries_server_id'), table_name='entries')
    op.drop_table('entries')
