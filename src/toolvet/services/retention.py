"""How long call records are kept: rows of ``calls`` and the audit entries that only record calls.

``toolvet serve``'s scheduler prunes both once an hour, in batches of bounded size, each in its own
short transaction, so pruning a large backlog never holds a long lock; a run stops after a bounded
number of batches and the next run goes on. Everything else in the audit log, operators' and users'
decisions included (``call.approve``, ``call.deny``), is kept forever.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Final

from sqlalchemy import delete, or_, select

from toolvet.db.models import AuditEntry, PendingCall
from toolvet.db.types import utcnow
from toolvet.schemas.calls import CallStatus
from toolvet.services.context import Context

#: Audit actions that only record a call being made or run; decisions about calls are not among them.
CALL_RECORD_ACTIONS: Final = ("call.pending", "call.run", "call.invalid")
BATCH: Final = 500
MAX_BATCHES: Final = 200


@dataclass(frozen=True)
class Pruned:
    """How many rows one :func:`prune` removed."""

    calls: int
    audit_entries: int


def _delete_in_batches(ctx: Context, model: Any, key: Any, where: list[Any], batch: int, max_batches: int) -> int:
    removed = 0
    for _ in range(max_batches):
        with ctx.db.transaction() as session:
            ids = session.scalars(select(key).where(*where).order_by(key).limit(batch)).all()
            if ids:
                session.execute(delete(model).where(key.in_(ids)))
        removed += len(ids)
        if len(ids) < batch:
            break
    return removed


def prune(ctx: Context, now: datetime | None = None, *, batch: int = BATCH, max_batches: int = MAX_BATCHES) -> Pruned:
    """Delete call rows older than ``call_retention_days`` (a pending call only once it has expired) and
    call-record audit entries older than ``call_audit_retention_days``; 0 days keeps them forever."""
    now = now or utcnow()
    settings = ctx.settings
    calls = entries = 0
    if settings.call_retention_days > 0:
        cutoff = now - timedelta(days=settings.call_retention_days)
        finished = or_(PendingCall.status != CallStatus.PENDING.value, PendingCall.expires_at <= now)
        calls = _delete_in_batches(ctx, PendingCall, PendingCall.id, [PendingCall.created_at < cutoff, finished],
                                   batch, max_batches)
    if settings.call_audit_retention_days > 0:
        cutoff = now - timedelta(days=settings.call_audit_retention_days)
        entries = _delete_in_batches(
            ctx, AuditEntry, AuditEntry.id, [AuditEntry.action.in_(CALL_RECORD_ACTIONS), AuditEntry.at < cutoff],
            batch, max_batches,
        )
    return Pruned(calls, entries)
