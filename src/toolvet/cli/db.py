"""``toolvet db upgrade``: bring the database to the newest schema."""

from __future__ import annotations

from toolvet.cli import render
from toolvet.cli.group import command_group
from toolvet.cli.runtime import open_context

db_app = command_group("The database toolvet keeps its registry in.")



@db_app.command("upgrade")
def upgrade() -> None:
    """Apply the migrations the database lacks (opening it does exactly that)."""
    with open_context() as ctx:
        url = ctx.db.engine.url.render_as_string(hide_password=True)
    render.say(f"database is up to date: {url}")
