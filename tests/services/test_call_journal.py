"""Call records the database could not take at once wait in the journal, and a later process moves
them in exactly once."""

from __future__ import annotations

import sqlite3

from cryptography.fernet import Fernet
from sqlalchemy import func, select

from toolvet.db.models import AuditEntry, PendingCall
from toolvet.db.types import utcnow
from toolvet.services.call_journal import CallJournal
from toolvet.services.context import Context
from toolvet.settings import Settings


def _records(call_id: str) -> tuple[list[dict], list[dict]]:
    now = utcnow()
    row = {"id": call_id, "user": "alice", "scope": "default", "server_type": "demo", "tool_name": "t",
           "arguments": {"a": 1}, "fingerprint": "sha256:" + "0" * 64, "status": "done", "auto_allow": True,
           "reasons": [], "created_at": now, "expires_at": None, "decided_by": None, "decided_at": None,
           "allow_always": False, "result": {"content": []}, "error": None}
    entry = {"at": now, "actor": "token:1", "action": "call.run", "object_type": "tool",
             "object_id": "tool:demo/t", "before": None, "after": {"call": call_id, "status": "done"}}
    return [row], [entry]


def _counts(ctx: Context) -> tuple[int, int]:
    with ctx.db.transaction() as session:
        return (session.scalar(select(func.count()).select_from(PendingCall)) or 0,
                session.scalar(select(func.count()).select_from(AuditEntry).where(AuditEntry.action == "call.run"))
                or 0)


def test_records_a_locked_database_refuses_are_journalled_and_drained_exactly_once(tmp_path):
    # SQLite's: its one write lock is what another process can hold (PostgreSQL takes these inserts).
    settings = Settings(home=tmp_path, database_url=f"sqlite:///{tmp_path}/toolvet.sqlite3",
                        secret_key=Fernet.generate_key().decode())
    ctx = Context.open(settings)
    try:
        journal = CallJournal(ctx)
        rows, entries = _records("a" * 32)
        holder = sqlite3.connect(settings.resolved_database_url().removeprefix("sqlite:///"), timeout=0,
                                 isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")
        try:
            journal.write(rows, entries)
        finally:
            holder.execute("ROLLBACK")
            holder.close()
        assert journal.pending() and _counts(ctx) == (0, 0)
        assert (journal.path.stat().st_mode & 0o777) == 0o600
    finally:
        ctx.close()
    later = Context.open(settings)  # another process, after the first died with the journal unread
    try:
        again = CallJournal(later)
        # A drain that committed but died before emptying the journal: the next one adds nothing twice.
        again.append([(rows[0], None), (None, entries[0])])
        assert again.drain() == 4  # the row and the entry journalled, and the same two again
        assert again.drain() == 0 and not again.pending()
        assert _counts(later) == (1, 1)
    finally:
        later.close()
