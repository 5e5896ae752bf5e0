"""Leases in the database, so that several toolvet processes on one database never discover the same
server at the same time (SPEC §4.5). Works the same on SQLite and PostgreSQL: an insert wins a free
key; an update wins an expired one; the database's own locking serialises both."""

from __future__ import annotations

import os
import socket
import uuid
from datetime import timedelta

from sqlalchemy import delete, insert, or_, update
from sqlalchemy.exc import IntegrityError

from toolvet.db.engine import Database
from toolvet.db.models import Lease
from toolvet.db.types import utcnow

#: This process's identity as a lease holder.
HOLDER = f"{socket.gethostname()[:30]}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def acquire(db: Database, key: str, seconds: float, holder: str = HOLDER) -> bool:
    """Take (or renew) the lease on ``key`` for ``seconds``; False when another live holder has it."""
    now = utcnow()
    expires = now + timedelta(seconds=seconds)
    try:
        with db.transaction() as session:
            session.execute(insert(Lease).values(key=key, holder=holder, expires_at=expires))
        return True
    except IntegrityError:
        pass
    with db.transaction() as session:
        result = session.execute(
            update(Lease)
            .where(Lease.key == key, or_(Lease.expires_at < now, Lease.holder == holder))
            .values(holder=holder, expires_at=expires)
        )
        return bool(result.rowcount)  # type: ignore[attr-defined]


def release(db: Database, key: str, holder: str = HOLDER) -> None:
    """Give the lease back, if this holder still has it."""
    with db.transaction() as session:
        session.execute(delete(Lease).where(Lease.key == key, Lease.holder == holder))
