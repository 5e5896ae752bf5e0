"""The call journal keeps a call's records before its answer, and moves them into the database once,
however often the move is tried (a commit that died before its segment was deleted)."""

from __future__ import annotations

from cryptography.fernet import Fernet
from sqlalchemy import func, select

from toolvet.db.models import AuditEntry, PendingCall
from toolvet.db.types import utcnow
from toolvet.services.call_journal import CallJournal
from toolvet.services.context import Context
from toolvet.settings import Settings


def _record(call_id: str) -> tuple[dict, dict]:
    now = utcnow()
    row = {"id": call_id, "user": "alice", "scope": "default", "server_type": "demo", "tool_name": "t",
           "arguments": {"a": 1}, "fingerprint": "sha256:" + "0" * 64, "status": "done", "auto_allow": True,
           "reasons": [], "created_at": now, "expires_at": None, "decided_by": None, "decided_at": None,
           "allow_always": False, "result": {"content": []}, "error": None}
    entry = {"at": now, "actor": "token:1", "action": "call.run", "object_type": "tool",
             "object_id": "tool:demo/t", "before": None, "after": {"call": call_id, "status": "done"}}
    return row, entry


def _counts(ctx: Context) -> tuple[int, int]:
    with ctx.db.transaction() as session:
        return (session.scalar(select(func.count()).select_from(PendingCall)) or 0,
                session.scalar(select(func.count()).select_from(AuditEntry).where(AuditEntry.action == "call.run"))
                or 0)


def test_journalled_records_survive_their_process_and_are_moved_in_exactly_once(tmp_path, database_url):
    settings = Settings(home=tmp_path, database_url=database_url, secret_key=Fernet.generate_key().decode())
    first = Context.open(settings)
    try:
        journal = CallJournal(first)
        journal.append([_record("a" * 32), _record("b" * 32)])
        assert (journal.path.stat().st_mode & 0o777) == 0o600
        segment = journal.seal()
        assert segment is not None and not journal.path.exists()
        journal.append([_record("c" * 32)])  # a call answered after the seal: a fresh journal
        assert _counts(first) == (0, 0)
        copy = tmp_path / "calls.journal.1.sealed"  # the same segment, as if its delete had not happened
        copy.write_bytes(segment.read_bytes())
        journal.close()
    finally:
        first.close()
    later = Context.open(settings)  # the next process, after the first died with all of it unmoved
    try:
        again = CallJournal(later)
        assert again.recover() == 5  # two segments of two records each, and the journal of one
        assert again.recover() == 0 and again.leftovers() == [] and not again.path.exists()
        assert _counts(later) == (3, 3)
    finally:
        later.close()


def test_a_live_processs_journal_is_left_to_it_and_taken_over_once_it_is_gone(tmp_path):
    settings = Settings(home=tmp_path, database_url=f"sqlite:///{tmp_path}/toolvet.sqlite3",
                        secret_key=Fernet.generate_key().decode())
    ctx = Context.open(settings)
    try:
        alive, other = CallJournal(ctx), CallJournal(ctx)  # two processes sharing one home
        alive.append([_record("d" * 32)])
        assert other.recover() == 0 and alive.path.exists()  # its owner holds it: not taken
        alive.close()  # the owner is gone (a killed process's lock goes with it)
        assert other.recover() == 1 and not alive.path.exists()
        assert _counts(ctx) == (1, 1)
    finally:
        ctx.close()
