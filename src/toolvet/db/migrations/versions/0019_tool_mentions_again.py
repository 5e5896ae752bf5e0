"""tool mentions read again: every word a steering sentence may name a tool by

Revision ID: 0019
Revises: 0018

0018 stored only the words joined by ``_``, ``.`` or ``-`` (``send_email``) of a tool's title and
description. The check reads more as a tool's name: a word with an inner capital or a digit
(``sendEmail``), a quoted word (```search```) and a word followed by "tool" ("the fetch tool"), in a
sentence that steers, and none in a sentence that does not; and it reads the annotations' title too.
The mentions of every stored tool are worked out again with the current rule
(``domain.findings.mentioned_names``), so a tool that spoke of such a name before is found when a tool
of that name comes.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from toolvet.domain.findings import annotations_title, mentioned_names, name_key

revision = '0019'
down_revision = '0018'
branch_labels = None
depends_on = None

_BATCH = 5000


def upgrade() -> None:
    tools = sa.table('tools', sa.column('id', sa.Integer), sa.column('title', sa.Text),
                     sa.column('description', sa.Text), sa.column('annotations', sa.JSON))
    mentions = sa.table('tool_mentions', sa.column('tool_id', sa.Integer), sa.column('name_key', sa.Text))
    conn = op.get_bind()
    last = 0
    while True:
        rows = conn.execute(sa.select(tools.c.id, tools.c.title, tools.c.description, tools.c.annotations)
                            .where(tools.c.id > last)
                            .order_by(tools.c.id).limit(_BATCH)).all()
        if not rows:
            break
        conn.execute(mentions.delete().where(mentions.c.tool_id.in_([row.id for row in rows])))
        found = [{'tool_id': row.id, 'name_key': key} for row in rows
                 for key in sorted({name_key(n) for n in mentioned_names(
                     row.title, row.description, annotations_title(row.annotations))})]
        if found:
            conn.execute(mentions.insert(), found)
        last = rows[-1].id


def downgrade() -> None:
    # The rows stay: each is a word a tool's text speaks of, which 0018's readers take as they are.
    pass
