"""Leases in the database, so that several toolvet processes on one database never discover the same
server at the same time (SPEC §4.5). Works the same on SQLite and PostgreSQL: an insert wins a free
key; an update wins an expired one; the database's own locking serialises both."""

from __future__ import annotations

import os
import socket
import uuid
from collections.abc import Sequence
from datetime import timedelta

from sqlalchemy import Connection, bindparam, delete, or_, select, update
from sqlalchemy.dialects import postgresql, sqlite

from toolvet.db.engine import Database
from toolvet.db.models import Lease
from toolvet.db.types import utcnow

#: This process's identity as a lease holder.
HOLDER = f"{socket.gethostname()[:30]}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


# Built once: statement construction and cache-key derivation cost more than these tiny statements.
_DELETE = delete(Lease).where(Lease.key == bindparam("p_key"), Lease.holder == bindparam("p_holder"))
_EXPIRES = Lease.expires_at.type
# acquire_many: insert the free keys (a taken one is left alone, on both databases), read who holds
# each, and only if some lease lapsed (or is this holder's own, older one) take those over.
_INSERT_FREE = {
    "sqlite": sqlite.insert(Lease).on_conflict_do_nothing(index_elements=[Lease.key]),
    "postgresql": postgresql.insert(Lease).on_conflict_do_nothing(index_elements=[Lease.key]),
}
_HOLDERS = select(Lease.key, Lease.holder, Lease.expires_at).where(Lease.key.in_(bindparam("p_keys", expanding=True)))
_TAKE_EXPIRED_MANY = (
    update(Lease)
    .where(Lease.key.in_(bindparam("p_keys", expanding=True)),
           or_(Lease.expires_at < bindparam("p_now", type_=_EXPIRES), Lease.holder == bindparam("p_holder")))
    .values(holder=bindparam("p_holder"), expires_at=bindparam("p_expires", type_=_EXPIRES))
    .returning(Lease.key)
)


def acquire(db: Database, key: str, seconds: float, holder: str = HOLDER) -> bool:
    """Take (or renew) the lease on ``key`` for ``seconds``; False when another live holder has it."""
    with db.engine.begin() as conn:  # Core: these tiny statements need no Session
        return key in acquire_many(conn, [key], seconds, holder)


def acquire_many(conn: Connection, keys: Sequence[str], seconds: float, holder: str = HOLDER) -> set[str]:
    """Take (or renew) the leases on ``keys`` for ``seconds`` in the caller's transaction; the keys
    now held: a free key is taken, a lapsed lease or this holder's own is taken over, another live
    holder's is left alone. Two statements for any number of keys (three when a lease lapsed): a sweep
    takes the leases of its next passes together, one commit for all."""
    if not keys:
        return set()
    now = utcnow()
    expires = now + timedelta(seconds=seconds)
    insert_free = _INSERT_FREE.get(conn.dialect.name)
    if insert_free is None:  # pragma: no cover - toolvet runs on SQLite and PostgreSQL only
        raise NotImplementedError(f"leases on {conn.dialect.name}")
    conn.execute(insert_free, [{"key": key, "holder": holder, "expires_at": expires} for key in keys])
    held: set[str] = set()
    others: list[str] = []
    for row in conn.execute(_HOLDERS, {"p_keys": list(keys)}):
        if row.holder == holder and row.expires_at == expires:
            held.add(row.key)  # inserted just now
        elif row.expires_at < now or row.holder == holder:
            others.append(row.key)  # lapsed, or this holder's own: taken over below (re-checked there)
    if others:
        held.update(conn.scalars(_TAKE_EXPIRED_MANY, {"p_keys": others, "p_now": now, "p_holder": holder,
                                                      "p_expires": expires}))
    return held


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
