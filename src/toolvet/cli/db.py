"""``toolvet db upgrade``: bring the database to the newest schema."""

from __future__ import annotations

from toolvet.cli import render
from toolvet.cli.group import command_group
from toolvet.cli.runtime import load_settings, open_context
from toolvet.db.engine import make_engine
from toolvet.db.migrate import current_revision, head_revision

db_app = command_group("The database toolvet keeps its registry in.")


def _revision_now(url: str) -> str | None:
    """The revision the database is at before this command, None when it has none (or cannot be read:
    opening it next says why)."""
    engine = make_engine(url)
    try:
        return current_revision(engine)
    finally:
        engine.dispose()


@db_app.command("upgrade")
def upgrade() -> None:
    """Apply the migrations the database lacks (opening it does exactly that), and say what it did."""
    before = _revision_now(load_settings().resolved_database_url())
    with open_context() as ctx:
        url = ctx.db.engine.url.render_as_string(hide_password=True)
    head = head_revision()
    if before == head:
        render.say(f"database is up to date: {url}")
    elif before is None:
        render.say(f"database created at revision {head}: {url}")
    else:
        render.say(f"database upgraded from revision {before} to {head}: {url}")
