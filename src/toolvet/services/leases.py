"""Leases in the database, so that several toolvet processes on one database never discover the same
server at the same time (SPEC §4.5). Works the same on SQLite and PostgreSQL: an insert wins a free
key; an update wins an expired one; the database's own locking serialises both."""

from __future__ import annotations

import os
import socket
import uuid
from datetime import timedelta

from sqlalchemy import Connection, bindparam, delete, insert, or_, update
from sqlalchemy.exc import IntegrityError

from toolvet.db.engine import Database
from toolvet.db.models import Lease
from toolvet.db.types import utcnow

#: This process's identity as a lease holder.
HOLDER = f"{socket.gethostname()[:30]}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


# Built once: statement construction and cache-key derivation cost more than these tiny statements.
_INSERT = insert(Lease)
_TAKE_EXPIRED = (
    update(Lease)
    .where(Lease.key == bindparam("p_key"),
           or_(Lease.expires_at < bindparam("p_now", type_=Lease.expires_at.type),
               Lease.holder == bindparam("p_holder")))
    .values(holder=bindparam("p_holder"), expires_at=bindparam("p_expires", type_=Lease.expires_at.type))
)
_DELETE = delete(Lease).where(Lease.key == bindparam("p_key"), Lease.holder == bindparam("p_holder"))


def acquire(db: Database, key: str, seconds: float, holder: str = HOLDER) -> bool:
    """Take (or renew) the lease on ``key`` for ``seconds``; False when another live holder has it."""
    now = utcnow()
    expires = now + timedelta(seconds=seconds)
    try:
        with db.engine.begin() as conn:  # Core: these tiny statements need no Session
            conn.execute(_INSERT, {"key": key, "holder": holder, "expires_at": expires})
        return True
    except IntegrityError:
        pass
    with db.engine.begin() as conn:
        result = conn.execute(
            _TAKE_EXPIRED, {"p_key": key, "p_now": now, "p_holder": holder, "p_expires": expires}
        )
        return bool(result.rowcount)


def release(db: Database, key: str, holder: str = HOLDER) -> None:
    """Give the lease back, if this holder still has it."""
    with db.engine.begin() as conn:
        release_in(conn, key, holder)


def release_in(conn: Connection, key: str, holder: str = HOLDER) -> None:
    """Give the lease back inside the caller's transaction, if this holder still has it.

    A discovery pass releases its lease in the transaction that records its run: one commit instead of
    two, and the lease ends exactly when the run becomes visible, so another process can never see the
    server free but not yet discovered. If that transaction rolls back, so does the release, and the
    caller releases on its own (see ``services.discovery.run_pass``).
    """
    conn.execute(_DELETE, {"p_key": key, "p_holder": holder})
