"""Call records that could not be committed at once, kept in a journal file until they can.

A call's row and audit entry are committed before its answer is sent (``services.calls``). When the
database cannot take them within :data:`LOCK_WAIT` (another process holds SQLite's write lock, a
failover is under way), they are appended to ``HOME/calls.journal`` instead, one JSON line per
record, before the answer: a process killed after answering leaves them in the kernel's page cache,
and they reach the database on the next drain (the call service retries every second, and drains the
journal when it starts). Replaying is idempotent: a call row already there is kept, an audit entry
already there (same time, action, object and call) is not added twice.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from datetime import datetime
from pathlib import Path
from typing import Any, Final

from sqlalchemy import and_, insert, select, text

from toolvet.db.models import AuditEntry, PendingCall
from toolvet.services import audit
from toolvet.services.context import Context

__all__ = ["LOCK_WAIT", "CallJournal"]

log = logging.getLogger("toolvet.calls")

#: How long a commit of call records waits for SQLite's write lock before they go to the journal.
LOCK_WAIT: Final = 0.2
_DATETIME: Final = "$datetime"
_lock = threading.Lock()  # one writer of the journal file per process

Record = tuple[dict[str, Any] | None, dict[str, Any]]


def _encode(value: Any) -> Any:
    if isinstance(value, datetime):
        return {_DATETIME: value.isoformat()}
    if isinstance(value, dict):
        return {key: _encode(item) for key, item in value.items()}
    return value


def _decode(value: Any) -> Any:
    if isinstance(value, dict):
        if set(value) == {_DATETIME}:
            return datetime.fromisoformat(value[_DATETIME])
        return {key: _decode(item) for key, item in value.items()}
    return value


class CallJournal:
    """The journal of one toolvet home (see the module docstring)."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.path = Path(ctx.settings.home) / "calls.journal"

    def write(self, rows: list[dict[str, Any]], entries: list[dict[str, Any]]) -> None:
        """Commit rows and entries, waiting at most :data:`LOCK_WAIT` for the lock; journal them if not."""
        try:
            with self.ctx.db.engine.begin() as conn:
                if conn.dialect.name == "sqlite":
                    conn.execute(text(f"PRAGMA busy_timeout = {int(LOCK_WAIT * 1000)}"))
                try:
                    if rows:
                        conn.execute(insert(PendingCall), rows)
                    conn.execute(insert(AuditEntry), entries)
                finally:
                    if conn.dialect.name == "sqlite":
                        conn.execute(text("PRAGMA busy_timeout = 30000"))
        except Exception as exc:
            log.warning("call records journalled (the database did not take them: %s)", str(exc).splitlines()[0])
            self.append([(row, None) for row in rows] + [(None, entry) for entry in entries])

    def append(self, records: list[tuple[dict[str, Any] | None, dict[str, Any] | None]]) -> None:
        lines = "".join(json.dumps({"row": _encode(row), "entry": _encode(entry)}) + "\n" for row, entry in records)
        with _lock:
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                os.write(fd, lines.encode())
            finally:
                os.close(fd)

    def pending(self) -> bool:
        """Whether records wait in the journal."""
        try:
            return self.path.stat().st_size > 0
        except FileNotFoundError:
            return False

    def drain(self) -> int:
        """Move journalled records into the database (idempotently); how many were moved. A failure
        leaves the journal as it was, for the next drain."""
        with _lock:
            try:
                lines = self.path.read_text().splitlines()
            except FileNotFoundError:
                return 0
            records = [json.loads(line) for line in lines if line.strip()]
            if not records:
                return 0
            try:
                with self.ctx.db.engine.begin() as conn:
                    for record in records:
                        row, entry = _decode(record["row"]), _decode(record["entry"])
                        if row is not None and conn.scalar(select(PendingCall.id).where(
                                PendingCall.id == row["id"])) is None:
                            conn.execute(insert(PendingCall), [row])
                        if entry is not None and not _entry_exists(conn, entry):
                            conn.execute(insert(AuditEntry), [entry])
            except Exception as exc:
                log.warning("journalled call records still wait (%s)", str(exc).splitlines()[0])
                return 0
            os.truncate(self.path, 0)
            return len(records)


def _entry_exists(conn: Any, entry: dict[str, Any]) -> bool:
    found = conn.execute(select(AuditEntry.after).where(and_(
        AuditEntry.at == entry["at"], AuditEntry.action == entry["action"],
        AuditEntry.object_id == entry["object_id"]))).scalars().all()
    call = (entry.get("after") or {}).get("call")
    return any((after or {}).get("call") == call for after in found)


def bounded_entries(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Audit entries with their ``after`` bounded, as every audit entry is."""
    return [{**entry, "after": audit.bounded(entry["after"])} for entry in entries]
