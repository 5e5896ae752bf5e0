"""Engine and session factory for SQLite (default) and PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.orm import Session, sessionmaker

from toolvet.jsontext import compact


def make_engine(url: str) -> Engine:
    """An engine for ``url``; for SQLite, the parent directory is created and foreign keys enforced.
    JSON columns are written as :func:`toolvet.jsontext.compact` text on both databases."""
    if url.startswith("sqlite"):
        path = url.split("///", 1)[1] if "///" in url else ""
        if path and path != ":memory:":
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(url, connect_args={"timeout": 30, "check_same_thread": False}, json_serializer=compact)

        @event.listens_for(engine, "connect")
        def _sqlite_pragmas(dbapi_conn: Any, _record: Any) -> None:
            cur = dbapi_conn.cursor()
            cur.execute("PRAGMA foreign_keys=ON")
            cur.execute("PRAGMA journal_mode=WAL")
            cur.execute("PRAGMA synchronous=NORMAL")
            cur.close()

        return engine
    return create_engine(url, pool_pre_ping=True, pool_size=10, max_overflow=20, json_serializer=compact)


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
