"""Where calls are kept: the pending-call rows and their audit entries.

The call service (``services.calls``) runs calls; these functions read and write their records, and
are run in worker threads (they block on the database).
"""

from __future__ import annotations

import logging
from datetime import timedelta
from typing import Any

from sqlalchemy import func, insert, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from toolvet.db.models import AuditEntry, PendingCall, Server, Tool, ToolSettings
from toolvet.db.types import utcnow
from toolvet.domain.policy import ApprovalFloor, stricter
from toolvet.errors import Conflict, Forbidden, InvalidInput, NotFound
from toolvet.schemas.calls import CallOut, CallStatus
from toolvet.schemas.common import Page
from toolvet.services import audit, call_intents
from toolvet.services.auth import Permission, Principal, Role
from toolvet.services.bounds import bounded_result, bounded_value, json_size
from toolvet.services.call_journal import bounded_entries
from toolvet.services.context import Context
from toolvet.services.search import matching

log = logging.getLogger("toolvet.calls")

#: An audit entry waiting to be written, with the call's row when the call is to be stored too.
Record = tuple[dict[str, Any] | None, dict[str, Any]]


def check_arguments(ctx: Context, arguments: dict[str, Any]) -> None:
    """Refuse a call whose arguments are over ``max_argument_bytes`` (InvalidInput, naming the limit)."""
    limit = ctx.settings.max_argument_bytes
    size = json_size(arguments)
    if size > limit:
        raise InvalidInput(f"are {size} bytes of JSON, more than the limit of {limit} "
                           "(TOOLVET_MAX_ARGUMENT_BYTES)", "arguments")


def bounded_row(ctx: Context, row: dict[str, Any]) -> dict[str, Any]:
    """A call's row as stored: arguments and result within their limits (the caller got them whole)."""
    settings = ctx.settings
    arguments, result = row["arguments"], row["result"]
    kept_arguments = bounded_value(arguments, settings.max_argument_bytes)
    kept_result = bounded_result(result, settings.max_stored_result_bytes)
    if kept_arguments is arguments and kept_result is result:
        return row
    return {**row, "arguments": kept_arguments, "result": kept_result}


def store_pending(ctx: Context, principal: Principal, call: CallOut, intent: str | None = None, *,
                  waits: bool = False) -> CallOut:
    """Store a pending call, unless it repeats one (same ``intent``) that is pending, or that finished
    with no caller given its outcome: then that call, which the retry waits on or collects. ``waits``:
    this process waits on it for its client (and says so, ``heartbeat``)."""
    if intent is not None and (earlier := find_intent(ctx, intent, call)) is not None:
        return earlier
    try:
        with ctx.db.transaction() as session:
            session.add(PendingCall(**bounded_row(ctx, row_of(call)), intent=intent,
                                    waited_at=call.created_at if waits else None))
            audit.record(session, principal, "call.pending", "tool", f"tool:{call.server_type}/{call.tool_name}",
                         None, audit_view(call))
    except IntegrityError:
        # The same intent was stored by another replica a moment ago: that one is the call.
        earlier = find_intent(ctx, intent, call) if intent is not None else None
        if earlier is None:
            raise
        return earlier
    return call


def find_intent(ctx: Context, intent: str, call: CallOut) -> CallOut | None:
    """The call a retry repeats: pending with the same intent, or finished within ``approval_ttl``
    and never delivered (its waiting replica died); the latter is delivered now."""
    since = call.created_at - timedelta(seconds=ctx.settings.approval_ttl)
    with ctx.db.transaction() as session:
        row = session.scalars(
            select(PendingCall).where(PendingCall.intent == intent, PendingCall.created_at >= since,
                                      PendingCall.delivered.is_(False),
                                      PendingCall.status.notin_(("expired", "cancelled")))
            .order_by(PendingCall.created_at.desc()).limit(1)).first()
        if row is None:
            return None
        if row.status != CallStatus.PENDING.value:
            row.delivered = True
        return out_of(row)


def heartbeat(ctx: Context, call_id: str) -> None:
    """The waiting process still waits for this pending call."""
    with ctx.db.transaction() as session:
        session.execute(update(PendingCall).where(PendingCall.id == call_id).values(waited_at=utcnow()))


def delivered(ctx: Context, call_id: str) -> None:
    """A caller was given the call's outcome: a retry makes a new call."""
    with ctx.db.transaction() as session:
        session.execute(update(PendingCall).where(PendingCall.id == call_id).values(delivered=True))


def load(ctx: Context, call_id: str) -> CallOut:
    with ctx.db.transaction() as session:
        row = session.get(PendingCall, call_id)
        if row is None:
            raise NotFound(f"call {call_id} not found")
        return out_of(row)


def decide_pending(ctx: Context, principal: Principal, call_id: str, status: CallStatus,
                   allow_always: bool) -> CallOut:
    """Mark a pending call approved or denied, if it still is pending and not expired (else Conflict)."""
    now = utcnow()
    with ctx.db.transaction() as session:
        row = session.get(PendingCall, call_id)
        if row is None:
            raise NotFound(f"call {call_id} not found")
        if status is CallStatus.APPROVED:
            # The floor the call was decided under, or the tool's now if an operator raised it since.
            may_approve(principal, row.user, row.scope,
                        stricter(row.approval, current_floor(session, row.server_type, row.tool_name)))
        else:
            may_approve(principal, row.user, row.scope)  # denying runs nothing: the floor does not apply
        if row.status == CallStatus.PENDING and row.expires_at is not None and row.expires_at <= now:
            session.execute(update(PendingCall).where(PendingCall.id == call_id, PendingCall.status == "pending")
                            .values(status=CallStatus.EXPIRED.value))
            raise Conflict(f"call {call_id} expired at {row.expires_at.isoformat()}")
        won = session.execute(
            update(PendingCall).where(PendingCall.id == call_id, PendingCall.status == "pending")
            .values(status=status.value, decided_by=principal.actor, decided_at=now, allow_always=allow_always)
        ).rowcount  # type: ignore[attr-defined]
        if not won:
            session.refresh(row)
            raise Conflict(f"call {call_id} is already {row.status}")
        session.refresh(row)
        out = out_of(row)
        action = "call.approve" if status is CallStatus.APPROVED else "call.deny"
        audit.record(session, principal, action, "tool", f"tool:{row.server_type}/{row.tool_name}",
                     None, audit_view(out))
        return out


def current_floor(session: Session, server: str, tool: str) -> ApprovalFloor:
    """The approval floor that applies to the tool now (``user`` for one that is gone, and host tools)."""
    row = session.execute(
        select(Server.approval, ToolSettings.approval)
        .select_from(Tool).join(Server, Tool.server_id == Server.id).join(ToolSettings, ToolSettings.tool_id == Tool.id)
        .where(Server.name == server, Tool.name == tool)
    ).one_or_none()
    return ApprovalFloor.USER if row is None else stricter(*row)


def finish(ctx: Context, call: CallOut) -> None:
    with ctx.db.transaction() as session:
        session.execute(update(PendingCall).where(PendingCall.id == call.id)
                        .values(status=call.status.value, error=call.error,
                                result=bounded_result(call.result, ctx.settings.max_stored_result_bytes)))


def record(principal: Principal, call: CallOut, action: str, *, store: bool) -> Record:
    """The audit entry of a call's outcome (and its row, with ``store``), for :func:`write_records`."""
    entry = {"at": utcnow(), "actor": principal.actor, "action": action, "object_type": "tool",
             "object_id": f"tool:{call.server_type}/{call.tool_name}", "before": None,
             "after": audit_view(call)}
    return (row_of(call) if store else None, entry)


def stored_record(ctx: Context, principal: Principal, call: CallOut, action: str, *, store: bool) -> Record:
    """:func:`record`, bounded as it is stored (arguments, results and the audit entry within limits)."""
    row, entry = record(principal, call, action, store=store)
    return (bounded_row(ctx, row) if row is not None else None, bounded_entries([entry])[0])


def write_records(ctx: Context, batch: list[Record]) -> None:
    """Commit stored records in one transaction (raises when the database does not take them)."""
    if not batch:
        return
    # Core, not a Session: these inserts need no unit of work, and the write shares the GIL with the
    # calls it records.
    with ctx.db.engine.begin() as conn:
        rows = [row for row, _ in batch if row is not None]
        if rows:
            conn.execute(insert(PendingCall), rows)
        conn.execute(insert(AuditEntry), [entry for _, entry in batch])


def get(ctx: Context, principal: Principal, call_id: str) -> CallOut:
    call = load(ctx, call_id)
    may_see(principal, call.user, call.scope)
    return call


def list_calls(ctx: Context, principal: Principal, *, status: str | None = "pending", server: str | None = None,
               tool: str | None = None, limit: int = 100, offset: int = 0, q: str = "",
               descending: bool = True) -> Page[CallOut]:
    """Calls newest first (``descending`` False: oldest first), of one status (None: all), server and tool
    when given; expired pending calls are marked expired on the way. ``q`` searches the server, the tool
    and the user."""
    now = utcnow()
    query = select(PendingCall)
    if principal.role is Role.CONSUMER:
        query = query.where(PendingCall.user == principal.user, PendingCall.scope == principal.scope)
    else:
        principal.require(Permission.READ)
    if status:
        query = query.where(PendingCall.status == status)
    if server:
        query = query.where(PendingCall.server_type == server)
    if tool:
        query = query.where(PendingCall.tool_name == tool)
    if q:
        query = query.where(matching(q, PendingCall.server_type, PendingCall.tool_name, PendingCall.user))
    order = (PendingCall.created_at.desc(), PendingCall.id.desc()) if descending else (
        PendingCall.created_at.asc(), PendingCall.id.asc())
    with ctx.db.transaction() as session:
        session.execute(update(PendingCall).where(PendingCall.status == "pending", PendingCall.expires_at <= now)
                        .values(status=CallStatus.EXPIRED.value))
        total = session.scalar(select(func.count()).select_from(query.subquery())) or 0
        rows = session.scalars(query.order_by(*order).limit(limit).offset(offset)).all()
        return Page(items=[out_of(r) for r in rows], total=total, limit=limit, offset=offset)


def may_see(principal: Principal, user: str, scope: str) -> None:
    if principal.role is Role.CONSUMER:
        if (principal.user, principal.scope) != (user, scope):
            raise Forbidden("a consumer token sees its own user's calls only")
    else:
        principal.require(Permission.READ)


def may_approve(principal: Principal, user: str, scope: str,
                approval: ApprovalFloor = ApprovalFloor.USER) -> None:
    """Who may approve a call: the call's own consumer token (its user and scope), and operators and
    admins; under the ``operator`` approval floor only operators and admins."""
    if principal.role is Role.CONSUMER:
        if approval is ApprovalFloor.OPERATOR:
            raise Forbidden("the tool's approval floor is operator: only an operator or an admin may approve "
                            "this call, not its consumer token")
        if (principal.user, principal.scope) != (user, scope):
            raise Forbidden("a consumer token approves its own user's calls only")
    else:
        principal.require(Permission.APPROVE_CALLS)


def row_of(call: CallOut) -> dict[str, Any]:
    return {"id": call.id, "user": call.user, "scope": call.scope, "server_type": call.server_type,
            "tool_name": call.tool_name, "arguments": call.arguments, "fingerprint": call.fingerprint,
            "status": call.status.value, "auto_allow": call.auto_allow, "reasons": call.reasons,
            "created_at": call.created_at, "expires_at": call.expires_at, "decided_by": call.decided_by,
            "decided_at": call.decided_at, "allow_always": call.allow_always, "approval": call.approval.value,
            "result": call.result,
            "error": call.error}


def orphaned(row: PendingCall) -> bool:
    """Pending, and its waiter has been silent too long (``services.call_intents``)."""
    if row.status != CallStatus.PENDING.value or row.waited_at is None:
        return False
    return row.waited_at < utcnow() - timedelta(seconds=call_intents.ORPHANED_SECONDS)


def out_of(row: PendingCall) -> CallOut:
    return CallOut(id=row.id, user=row.user, scope=row.scope, server_type=row.server_type, tool_name=row.tool_name,
                   arguments=row.arguments, fingerprint=row.fingerprint, status=CallStatus(row.status),
                   auto_allow=row.auto_allow, reasons=list(row.reasons or []), created_at=row.created_at,
                   expires_at=row.expires_at, decided_by=row.decided_by, decided_at=row.decided_at,
                   allow_always=row.allow_always, approval=ApprovalFloor(row.approval), result=row.result,
                   error=row.error, orphaned=orphaned(row))


def audit_view(call: CallOut) -> dict[str, Any]:
    return {"call": call.id, "user": call.user, "scope": call.scope, "status": call.status.value,
            "arguments": call.arguments, "fingerprint": call.fingerprint, "error": call.error}
