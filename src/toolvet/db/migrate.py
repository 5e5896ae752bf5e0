"""Applying the Alembic migrations shipped inside the package."""

from __future__ import annotations

import fcntl
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Final

from sqlalchemy import Connection, Engine, text
from sqlalchemy.exc import DBAPIError

if TYPE_CHECKING:
    from alembic.config import Config

MIGRATIONS = Path(__file__).parent / "migrations"
#: The PostgreSQL advisory lock every toolvet process takes to migrate ("toolvet" + 1, as 64 bits).
MIGRATION_LOCK: Final = 0x746F6F6C76657431


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
    """Bring the database to ``revision`` (the newest by default); safe to run on every start, by
    any number of processes at once: the migrations run under a database-wide lock (PostgreSQL's
    advisory lock, a file lock beside a SQLite database), and a process that waited for it finds the
    work done (Alembic reads the version again under the lock)."""
    if revision == "head" and current_revision(engine) == head_revision():
        return
    from alembic import command

    cfg = alembic_config(engine.url.render_as_string(hide_password=False))
    with _sqlite_file_lock(engine), engine.begin() as connection:
        _advisory_lock(connection)
        cfg.attributes["connection"] = connection
        command.upgrade(cfg, revision)


def _advisory_lock(connection: Connection) -> None:
    """On PostgreSQL, wait for the migration lock; it is held until this transaction ends."""
    if connection.dialect.name == "postgresql":
        connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": MIGRATION_LOCK})


@contextmanager
def _sqlite_file_lock(engine: Engine) -> Iterator[None]:
    """On a SQLite file, hold an exclusive lock on ``FILE.migrate-lock`` while the block runs."""
    database = engine.url.database or ""
    if engine.dialect.name != "sqlite" or not database or database == ":memory:" or database.startswith("file:"):
        yield
        return
    path = Path(database).with_name(Path(database).name + ".migrate-lock")
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)  # beside a private database, private too
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock
