"""The call journal: a call's row and audit entry are written here before its answer is sent.

Nothing answered is lost, and an answer does not wait for the database. Before a call is answered its
records are appended to the process's own journal, ``HOME/calls.<pid>.<start>.journal`` (one JSON line
each, one ``write`` to the file, which the kernel keeps however the process dies: the same durability
as SQLite's WAL at ``synchronous=NORMAL``). Several processes may share a home: each holds an
exclusive ``flock`` on its journal while it lives, so another process takes over a journal only once
its owner is gone.
The call service's writer then moves them into the database in batches, a fraction of a second
later: it seals the journal (renames it to a segment of its own; new records go to a fresh file),
commits the batch, and deletes the segment. A segment whose commit failed (a locked or unreachable
database) stays, and is moved in later; a process that starts moves in every segment and journal an
earlier one left. Moving records in is idempotent: a call row already there is kept, an audit entry
already there (same time, action, object and call) is not added twice.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import time
from datetime import datetime
from pathlib import Path
from typing import Any, Final

import orjson
from sqlalchemy import and_, insert, select

from toolvet.db.models import AuditEntry, PendingCall
from toolvet.services import audit
from toolvet.services.context import Context

__all__ = ["CallJournal", "bounded_entries"]

log = logging.getLogger("toolvet.calls")

_DATETIME: Final = "$datetime"
_SEGMENT: Final = "calls.*.sealed"
_JOURNAL: Final = "calls.*.journal"

Record = tuple[dict[str, Any] | None, dict[str, Any] | None]


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


#: The fields of a call row and of an audit entry that hold datetimes (orjson writes them as text).
_ROW_TIMES: Final = ("created_at", "expires_at", "decided_at")
_ENTRY_TIMES: Final = ("at",)


def _line(row: dict[str, Any] | None, entry: dict[str, Any] | None) -> bytes:
    """One journal line: orjson where it encodes the record (it writes datetimes as ISO text), else the
    standard library with datetimes marked."""
    try:
        return orjson.dumps({"row": row, "entry": entry}) + b"\n"
    except TypeError:
        return (json.dumps({"row": _encode(row), "entry": _encode(entry)}) + "\n").encode()


def _read(value: Any, times: tuple[str, ...]) -> Any:
    value = _decode(value)
    if isinstance(value, dict):
        for key in times:
            if isinstance(value.get(key), str):
                value[key] = datetime.fromisoformat(value[key])
    return value


class CallJournal:
    """The journal of one toolvet home (see the module docstring). Appends and seals happen on the
    event loop (each one system call); moving segments in happens in a worker thread."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.home = Path(ctx.settings.home)
        self.stem = f"calls.{os.getpid()}.{time.time_ns()}"
        self.path = self.home / f"{self.stem}.journal"
        self._fd: int | None = None
        self._sealed = 0

    def append(self, records: list[Record]) -> None:
        """Write records to the journal (raises OSError when it cannot: the caller commits instead)."""
        text = b"".join(_line(row, entry) for row, entry in records)
        if self._fd is None:
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # ours while we live (a new file: never taken)
            self._fd = fd
        os.write(self._fd, text)

    def seal(self) -> Path | None:
        """Close the journal as a segment of its own (None when it holds nothing); new records start a
        fresh journal."""
        try:
            if self.path.stat().st_size == 0:
                return None
        except FileNotFoundError:
            return None
        self._sealed += 1
        segment = self.home / f"{self.stem}.{self._sealed}.sealed"
        os.replace(self.path, segment)  # renamed while still locked: no other process takes it meanwhile
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        return segment

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def leftovers(self) -> list[Path]:
        """Segments not moved in yet, oldest first."""
        return sorted(self.home.glob(_SEGMENT))

    def move_in(self, segment: Path) -> int:
        """Move one segment's records into the database (idempotently) and delete it; how many were
        moved. A failure leaves the segment for the next try."""
        try:
            records = [json.loads(line) for line in segment.read_text().splitlines() if line.strip()]
        except FileNotFoundError:
            return 0  # its owner moved it in and deleted it meanwhile
        try:
            with self.ctx.db.engine.begin() as conn:
                for record in records:
                    row, entry = _read(record["row"], _ROW_TIMES), _read(record["entry"], _ENTRY_TIMES)
                    if row is not None and conn.scalar(select(PendingCall.id).where(
                            PendingCall.id == row["id"])) is None:
                        conn.execute(insert(PendingCall), [row])
                    if entry is not None and not _entry_exists(conn, entry):
                        conn.execute(insert(AuditEntry), [entry])
        except Exception as exc:
            log.warning("journalled call records still wait (%s)", str(exc).splitlines()[0])
            return 0
        segment.unlink(missing_ok=True)
        return len(records)

    def recover(self) -> int:
        """Move in what processes that are gone left: their sealed segments, and every journal whose
        owner no longer holds its lock (it died)."""
        moved = 0
        for journal in sorted(self.home.glob(_JOURNAL)):
            if journal == self.path:
                continue
            try:
                fd = os.open(journal, os.O_RDONLY)
            except FileNotFoundError:
                continue
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                continue  # its process lives: it moves its own records in
            try:
                moved += self.move_in(journal)
            finally:
                os.close(fd)
        return moved + sum(self.move_in(segment) for segment in self.leftovers())


def _entry_exists(conn: Any, entry: dict[str, Any]) -> bool:
    found = conn.execute(select(AuditEntry.after).where(and_(
        AuditEntry.at == entry["at"], AuditEntry.action == entry["action"],
        AuditEntry.object_id == entry["object_id"]))).scalars().all()
    call = (entry.get("after") or {}).get("call")
    return any((after or {}).get("call") == call for after in found)


def bounded_entries(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Audit entries with their ``after`` bounded, as every audit entry is."""
    return [{**entry, "after": audit.bounded(entry["after"])} for entry in entries]
