"""What needs a person, counted for the console's navigation: tools held for review, tools with a
``high`` finding, and calls waiting for an approver. Three counts in one read transaction."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import func, or_, select
from sqlalchemy.orm import Session

from toolvet.db.models import PendingCall, Server, Tool
from toolvet.db.types import utcnow
from toolvet.services.auth import Permission, Principal
from toolvet.services.context import Context
from toolvet.services.tool_search import held_sql
from toolvet.services.tools import TOOL_RECORDS, sql_has_high_finding


@dataclass(frozen=True)
class Attention:
    held: int
    high: int
    pending: int


def attention(ctx: Context, principal: Principal) -> Attention:
    principal.require(Permission.READ)
    live = Tool.retired_at.is_(None)
    with ctx.db.transaction() as session:
        held = session.scalar(select(func.count()).select_from(TOOL_RECORDS).join(Server, Tool.server_id == Server.id)
                              .where(live, held_sql())) or 0
        high = session.scalar(select(func.count()).select_from(Tool).where(live, sql_has_high_finding())) or 0
        pending = pending_calls(session)
    return Attention(held=held, high=high, pending=pending)


def pending_calls(session: Session) -> int:
    """Calls waiting for an approver now (not expired)."""
    return session.scalar(select(func.count()).select_from(PendingCall).where(
        PendingCall.status == "pending",
        or_(PendingCall.expires_at.is_(None), PendingCall.expires_at > utcnow()))) or 0
