"""The audit log: who did what to which object, with the before and after (each bounded in size).

Operators' actions are kept forever; the entries that only record calls are pruned after
``call_audit_retention_days`` (``services.retention``)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Final

from pydantic import BaseModel
from sqlalchemy import select
from sqlalchemy.orm import Session

from toolvet.db.models import AuditEntry
from toolvet.db.types import utcnow
from toolvet.schemas.common import Page
from toolvet.schemas.tools import AuditOut
from toolvet.services.auth import Permission, Principal
from toolvet.services.bounds import bounded_value
from toolvet.services.context import CHANGED, Context
from toolvet.services.search import matching, page_of

#: Most bytes (compact JSON) kept of an entry's ``before`` or ``after``: the log records what changed,
#: not a copy of every body a client sent; a bigger value is kept as a marked prefix (``bounds``).
MAX_VALUE_BYTES: Final = 64 * 1024


def bounded(value: Any) -> Any:
    """An entry's ``before`` or ``after`` as it is stored."""
    return bounded_value(value, MAX_VALUE_BYTES) if value is not None else None


def snapshot(value: BaseModel | None) -> Any:
    return value.model_dump(mode="json") if value is not None else None


def record(
    session: Session, actor: Principal | str, action: str, object_type: str, object_id: str,
    before: Any = None, after: Any = None,
) -> None:
    """Add one entry inside the caller's transaction, so the change and its record commit together.

    An operator's change (any action but a call's record) is also noted on the session: once the transaction
    commits, every process drops what it cached of that kind of object (``Context._committed``)."""
    if not action.startswith("call."):
        session.info.setdefault(CHANGED, set()).add(object_type)
    session.add(AuditEntry(
        at=utcnow(), actor=actor if isinstance(actor, str) else actor.actor, action=action,
        object_type=object_type, object_id=object_id,
        before=bounded(snapshot(before) if isinstance(before, BaseModel) else before),
        after=bounded(snapshot(after) if isinstance(after, BaseModel) else after),
    ))


def list_entries(
    ctx: Context, principal: Principal, *, actor: str | None = None, object_id: str | None = None,
    action: str | None = None, since: datetime | None = None, until: datetime | None = None, q: str = "",
    descending: bool = True, limit: int = 100, offset: int = 0,
) -> Page[AuditOut]:
    """Newest first (``descending`` False: oldest first), filtered by actor, object (``server:NAME`` or
    ``tool:SERVER/TOOL``), action, a time range (``since`` included, ``until`` not) and ``q`` (a
    substring of the actor or the object)."""
    principal.require(Permission.READ)
    query = select(AuditEntry)
    if actor:
        query = query.where(AuditEntry.actor == actor)
    if object_id:
        query = query.where(AuditEntry.object_id == object_id)
    if action:
        query = query.where(AuditEntry.action == action)
    if since is not None:
        query = query.where(AuditEntry.at >= since)
    if until is not None:
        query = query.where(AuditEntry.at < until)
    if q:
        query = query.where(matching(q, AuditEntry.actor, AuditEntry.object_id))
    with ctx.db.transaction() as session:
        return page_of(session, query, [AuditEntry.id.desc() if descending else AuditEntry.id.asc()], limit,
                       offset, lambda row: AuditOut.model_validate(row, from_attributes=True))


def known_actions(ctx: Context, principal: Principal) -> list[str]:
    """Every action the log holds, for a filter's choices."""
    principal.require(Permission.READ)
    with ctx.db.transaction() as session:
        return list(session.scalars(select(AuditEntry.action).distinct().order_by(AuditEntry.action)))
