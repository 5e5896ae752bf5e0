"""server oauth: the authorization of OAuth-protected upstreams

Revision ID: 0013
Revises: 0012

One new table, ``server_oauth``, one row per server whose ``auth`` is ``oauth2``: the grant type,
client id and scope in the clear, the client secret, registered client and tokens sealed, the
status shown to operators and a version for compare-and-set refreshes. ``servers`` is left as it
is (a server without a row keeps its static headers), so no existing row changes.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

import toolvet.db.types

revision = '0013'
down_revision = '0012'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('server_oauth',
    sa.Column('server_id', sa.Integer(), nullable=False),
    sa.Column('grant', sa.String(length=24), nullable=False),
    sa.Column('client_id', sa.Text(), nullable=True),
    sa.Column('scope', sa.Text(), nullable=True),
    sa.Column('secret', sa.Text(), nullable=True),
    sa.Column('status', sa.String(length=20), nullable=False),
    sa.Column('error', sa.Text(), nullable=True),
    sa.Column('expires_at', toolvet.db.types.UTCDateTime(timezone=True), nullable=True),
    sa.Column('version', sa.Integer(), nullable=False),
    sa.Column('updated_at', toolvet.db.types.UTCDateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['server_id'], ['servers.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('server_id')
    )


def downgrade() -> None:
    op.drop_table('server_oauth')
