"""Leases in the database, so that several toolvet processes on one database never discover the same
server at the same time, and watch each server for list changes once per fleet. Works the
same on SQLite and PostgreSQL: an insert wins a free key; an update wins an expired one; the
database's own locking serialises both.

A lease is short (``lease_seconds``, 10 s by default) and its live holder renews every lease it holds
every third of that (:func:`keep_renewed`, one statement for all of them; the sweep, the scheduler and
the alerts of one process each keep their leases renewed, and share one renewal), so a holder that died
(kill -9, a lost machine) frees its servers within ``lease_seconds``. A lease whose holder is a
process on this very host that no longer exists is free at once: ``toolvet discover`` never says
another process is discovering a server when none is.
"""

from __future__ import annotations

import logging
import os
import socket
import time
import uuid
import weakref
from collections.abc import Sequence
from datetime import timedelta

import anyio
import anyio.to_thread
from sqlalchemy import Connection, bindparam, delete, or_, select, update
from sqlalchemy.dialects import postgresql, sqlite

from toolvet.db.engine import Database
from toolvet.db.models import Lease
from toolvet.db.types import utcnow
from toolvet.errors import first_line

log = logging.getLogger("toolvet.leases")

_HOST = socket.gethostname()[:30]
#: This process's identity as a lease holder: host, process id, and a random part (a pid is reused).
HOLDER = f"{_HOST}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


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
_TAKE_FROM = (
    update(Lease)
    .where(Lease.key == bindparam("p_key"), Lease.holder == bindparam("p_old"))
    .values(holder=bindparam("p_holder"), expires_at=bindparam("p_expires", type_=_EXPIRES))
    .returning(Lease.key)
)
_RENEW = (
    update(Lease).where(Lease.holder == bindparam("p_holder"))
    .values(expires_at=bindparam("p_expires", type_=_EXPIRES)).returning(Lease.key)
)


def dead_here(holder: str) -> bool:
    """Whether ``holder`` names a process of this host that no longer runs (its leases are free)."""
    host, _, rest = holder.partition(":")
    pid_text = rest.partition(":")[0]
    if host != _HOST or not pid_text.isdigit() or holder == HOLDER:
        return False
    try:
        os.kill(int(pid_text), 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False  # a process of another user: alive
    return False


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
    orphans: list[tuple[str, str]] = []
    for row in conn.execute(_HOLDERS, {"p_keys": list(keys)}):
        if row.holder == holder and row.expires_at == expires:
            held.add(row.key)  # inserted just now
        elif row.expires_at < now or row.holder == holder:
            others.append(row.key)  # lapsed, or this holder's own: taken over below (re-checked there)
        elif dead_here(row.holder):
            orphans.append((row.key, row.holder))  # its holder died on this host: free now
    if others:
        held.update(conn.scalars(_TAKE_EXPIRED_MANY, {"p_keys": others, "p_now": now, "p_holder": holder,
                                                      "p_expires": expires}))
    for key, old in orphans:
        held.update(conn.scalars(_TAKE_FROM, {"p_key": key, "p_old": old, "p_holder": holder,
                                              "p_expires": expires}))
    return held


def renew(db: Database, seconds: float, holder: str = HOLDER) -> set[str]:
    """Extend every lease ``holder`` has to ``seconds`` from now (one statement); the keys it holds."""
    with db.engine.begin() as conn:
        return set(conn.scalars(_RENEW, {"p_holder": holder, "p_expires": utcnow() + timedelta(seconds=seconds)}))


#: When each (holder, seconds) last renewed its leases on a database (``time.monotonic``), for
#: :func:`keep_renewed`: one renewal serves every loop of this process renewing the same leases.
_RENEWED: weakref.WeakKeyDictionary[Database, dict[tuple[str, float], float]] = weakref.WeakKeyDictionary()
#: A beat renews unless another loop renewed the same leases less than this share of a beat ago.
_SHARED_BEAT = 0.9


async def keep_renewed(db: Database, seconds: float, holder: str = HOLDER) -> None:
    """Renew this holder's leases every third of ``seconds``, until cancelled. A failed renewal (the
    database briefly away) is tried again at the next beat; the leases lapse only after two more.

    Several loops of one process (a sweep, the scheduler, the alerts) renewing the same holder's leases
    for the same ``seconds`` on one database share the work: a loop whose beat comes less than 90 % of a
    beat after another's renewal leaves it at that, since that statement renewed every lease the holder
    has. So the leases are renewed once a beat, however many loops run, and still every beat while any
    does (a loop that stops leaves the renewing to the others' next beats)."""
    beat, key = seconds / 3, (holder, seconds)
    renewed = _RENEWED.setdefault(db, {})
    while True:
        await anyio.sleep(beat)
        last, now = renewed.get(key, -float("inf")), time.monotonic()
        if now - last < beat * _SHARED_BEAT:
            continue
        renewed[key] = now  # claimed before the thread hop: loops whose beats come together renew once
        try:
            await anyio.to_thread.run_sync(renew, db, seconds, holder)
        except Exception as exc:
            if renewed.get(key) == now:
                renewed[key] = last  # not renewed: the next beat of any loop tries again
            log.warning("renewing leases failed (%s)", first_line(exc))


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
