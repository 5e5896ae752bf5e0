"""Applying the Alembic migrations shipped inside the package."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import Engine, text
from sqlalchemy.exc import DBAPIError

if TYPE_CHECKING:
    from alembic.config import Config

MIGRATIONS = Path(__file__).parent / "migrations"


def alembic_config(url: str) -> Config:
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    cfg.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return cfg


@cache
def head_revision() -> str:
    """The newest shipped revision, read from the migration files without importing Alembic (every
    CLI command opens the database, and Alembic takes a third of a second to import)."""
    revisions: set[str] = set()
    parents: set[str] = set()
    for path in (MIGRATIONS / "versions").glob("*.py"):
        source = path.read_text()
        revisions.update(re.findall(r"^revision\s*=\s*['\"]([^'\"]+)['\"]", source, re.M))
        parents.update(re.findall(r"^down_revision\s*=\s*['\"]([^'\"]+)['\"]", source, re.M))
    heads = revisions - parents
    if len(heads) != 1:
        raise RuntimeError(f"migrations must have exactly one head, found {sorted(heads)}")
    return heads.pop()


def current_revision(engine: Engine) -> str | None:
    """The revision the database is at, or None for a database Alembic has not touched."""
    try:
        with engine.connect() as conn:
            return conn.execute(text("SELECT version_num FROM alembic_version")).scalar()
    except DBAPIError:
        return None


def upgrade(engine: Engine, revision: str = "head") -> None:
    """Bring the database to ``revision`` (the newest by default); safe to run on every start."""
    if revision == "head" and current_revision(engine) == head_revision():
        return
    from alembic import command

    cfg = alembic_config(engine.url.render_as_string(hide_password=False))
    with engine.begin() as connection:
        cfg.attributes["connection"] = connection
        command.upgrade(cfg, revision)
