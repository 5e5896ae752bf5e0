"""a tool's claim, settings and review as separate records

Revision ID: 0005
Revises: 0004

Until now one ``tools`` row held three owners' columns: what the server claims (discovery's), the
operator's ``enabled``/``writable`` and the reviewer's ``reviewed_*``. A statement on that row could
write any of them, so keeping discovery off the operator's columns was a matter of care. From here:

- ``tools`` keeps the claim only. It stays the tool's identity (its id is what ``tool_definitions``,
  ``reviews`` and the new tables reference), so nothing that points at a tool moves;
- ``tool_settings`` (1:1, keyed by the tool's id) holds ``enabled`` and ``writable``;
- ``tool_reviews`` (at most one row per tool, keyed by its id) holds the current review. It is a
  table of its own, not derived from the ``reviews`` history: every read of a tool's review state
  (listings, the offered set, the catalog, each call's snapshot) is then one outer join on the id,
  where deriving it would mean a newest-review-per-tool subquery in each of them. ``reviews`` stays
  the log of every review with its note; both are written together, by a review only.

Upgrade copies every tool's settings and every reviewed tool's review, then drops the old columns
(native ``ALTER TABLE ... DROP COLUMN`` on SQLite too: recreating ``tools`` would drop it, and with
foreign keys on, SQLite's implicit delete would cascade into the history and the new tables).
Downgrade puts the columns back with their values and drops the new tables; for the same reason it
adds ``enabled``/``writable`` in place, NOT NULL with a server default of true (which PostgreSQL then
drops again; SQLite cannot drop a default without recreating the table).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

import toolvet.db.types

revision = '0005'
down_revision = '0004'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('tool_settings',
    sa.Column('tool_id', sa.Integer(), nullable=False),
    sa.Column('enabled', sa.Boolean(), nullable=False),
    sa.Column('writable', sa.Boolean(), nullable=False),
    sa.ForeignKeyConstraint(['tool_id'], ['tools.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('tool_id')
    )
    op.create_table('tool_reviews',
    sa.Column('tool_id', sa.Integer(), nullable=False),
    sa.Column('fingerprint', sa.String(length=71), nullable=False),
    sa.Column('digest', sa.String(length=71), nullable=False),
    sa.Column('reviewed_at', toolvet.db.types.UTCDateTime(timezone=True), nullable=False),
    sa.Column('reviewed_by', sa.Text(), nullable=False),
    sa.ForeignKeyConstraint(['tool_id'], ['tools.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('tool_id')
    )
    op.execute("INSERT INTO tool_settings (tool_id, enabled, writable) SELECT id, enabled, writable FROM tools")
    op.execute("INSERT INTO tool_reviews (tool_id, fingerprint, digest, reviewed_at, reviewed_by) "
               "SELECT id, reviewed_fingerprint, reviewed_digest, reviewed_at, reviewed_by FROM tools "
               "WHERE reviewed_fingerprint IS NOT NULL")
    for column in ('enabled', 'writable', 'reviewed_fingerprint', 'reviewed_digest', 'reviewed_at', 'reviewed_by'):
        op.drop_column('tools', column)


def downgrade() -> None:
    for name in ('enabled', 'writable'):
        op.add_column('tools', sa.Column(name, sa.Boolean(), nullable=False, server_default=sa.true()))
    op.add_column('tools', sa.Column('reviewed_fingerprint', sa.String(length=71), nullable=True))
    op.add_column('tools', sa.Column('reviewed_digest', sa.String(length=71), nullable=True))
    op.add_column('tools', sa.Column('reviewed_at', toolvet.db.types.UTCDateTime(timezone=True), nullable=True))
    op.add_column('tools', sa.Column('reviewed_by', sa.Text(), nullable=True))
    op.execute("UPDATE tools SET "
               "enabled = (SELECT s.enabled FROM tool_settings s WHERE s.tool_id = tools.id), "
               "writable = (SELECT s.writable FROM tool_settings s WHERE s.tool_id = tools.id) "
               "WHERE id IN (SELECT tool_id FROM tool_settings)")
    op.execute("UPDATE tools SET "
               "reviewed_fingerprint = (SELECT r.fingerprint FROM tool_reviews r WHERE r.tool_id = tools.id), "
               "reviewed_digest = (SELECT r.digest FROM tool_reviews r WHERE r.tool_id = tools.id), "
               "reviewed_at = (SELECT r.reviewed_at FROM tool_reviews r WHERE r.tool_id = tools.id), "
               "reviewed_by = (SELECT r.reviewed_by FROM tool_reviews r WHERE r.tool_id = tools.id) "
               "WHERE id IN (SELECT tool_id FROM tool_reviews)")
    if op.get_bind().dialect.name != 'sqlite':
        for name in ('enabled', 'writable'):
            op.alter_column('tools', name, server_default=None)
    op.drop_table('tool_reviews')
    op.drop_table('tool_settings')
