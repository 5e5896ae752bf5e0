"""``toolvet db upgrade``: bring the database to the newest schema."""

from __future__ import annotations

import typer

from toolvet.cli import render
from toolvet.cli.runtime import open_context

db_app = typer.Typer(help="The database toolvet keeps its registry in.", no_args_is_help=True)


def register(app: typer.Typer) -> None:
    """Add the ``db`` group to the root app."""
    app.add_typer(db_app, name="db")


@db_app.command("upgrade")
def upgrade() -> None:
    """Apply the migrations the database lacks (opening it does exactly that)."""
    with open_context() as ctx:
        url = ctx.db.engine.url.render_as_string(hide_password=True)
    render.say(f"database is up to date: {url}")
