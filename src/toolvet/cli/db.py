"""``toolvet db upgrade``: bring the database to the newest schema."""

from __future__ import annotations

from toolvet.cli import render
from toolvet.cli.group import command_group
from toolvet.cli.runtime import load_settings, open_context
from toolvet.services.context import schema_revisions

db_app = command_group("The database toolvet keeps its registry in.")


@db_app.command("upgrade")
def upgrade() -> None:
    """Apply the migrations the database lacks (opening it does exactly that), and say what it did."""
    before, head = schema_revisions(load_settings())
    with open_context() as ctx:
        url = ctx.db.engine.url.render_as_string(hide_password=True)
    if before == head:
        render.say(f"database is up to date: {url}")
    elif before is None:
        render.say(f"database created at revision {head}: {url}")
    else:
        render.say(f"database upgraded from revision {before} to {head}: {url}")
