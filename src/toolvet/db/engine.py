"""Engine and session factory for SQLite (default) and PostgreSQL."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, event, make_url
from sqlalchemy.orm import Session, sessionmaker

from toolvet.db.models import complete_for_dialect
from toolvet.jsontext import compact

#: Seconds to wait for a PostgreSQL server to accept a connection.
PG_CONNECT_TIMEOUT = 10


def private_sqlite_file(path: Path) -> None:
    """Create the database file (and its directory) readable by its owner alone, unless it exists.

    SQLite gives the ``-wal`` and ``-shm`` files the permissions of the database file, so they are
    0600 too. The file holds tool results, call arguments and token hashes: no other local user
    should read it whatever the process's umask. An existing file is left as its owner set it."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    with suppress(FileExistsError):
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))


def make_engine(url: str) -> Engine:
    """An engine for ``url``; for SQLite, the file is created private (:func:`private_sqlite_file`) and
    foreign keys enforced; for PostgreSQL, the models get that dialect's options
    (:func:`toolvet.db.models.complete_for_dialect`). JSON columns are written as
    :func:`toolvet.jsontext.compact` text on both databases."""
    if url.startswith("sqlite"):
        path = make_url(url).database or ""
        if path and path != ":memory:" and not path.startswith("file:"):
            private_sqlite_file(Path(path))
        engine = create_engine(url, connect_args={"timeout": 30, "check_same_thread": False}, json_serializer=compact)

        @event.listens_for(engine, "connect")
        def _sqlite_pragmas(dbapi_conn: Any, _record: Any) -> None:
            cur = dbapi_conn.cursor()
            cur.execute("PRAGMA foreign_keys=ON")
            cur.execute("PRAGMA journal_mode=WAL")
            cur.execute("PRAGMA synchronous=NORMAL")
            cur.close()

        return engine
    # A PostgreSQL server that does not answer (a dropped packet, a wrong host) fails within the
    # connect timeout instead of hanging the command or the server start.
    engine = create_engine(url, pool_pre_ping=True, pool_size=10, max_overflow=20, json_serializer=compact,
                           connect_args={"connect_timeout": PG_CONNECT_TIMEOUT})
    complete_for_dialect(engine.dialect.name)
    return engine


class Database:
    """One engine and its session factory; ``transaction()`` is the unit of work every service uses."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.engine = make_engine(url)
        self.sessions = sessionmaker(self.engine, expire_on_commit=False)

    @contextmanager
    def transaction(self) -> Iterator[Session]:
        """A session inside one transaction: committed on success, rolled back on any error."""
        with self.sessions() as session, session.begin():
            yield session

    def dispose(self) -> None:
        self.engine.dispose()
