"""A person's review of a tool's current definition, and the definitions a tool has had (SPEC §4.3)."""

from __future__ import annotations

from sqlalchemy import select, update

from toolvet.db.models import Review, Tool, ToolDefinition
from toolvet.db.ownership import REVIEW_COLUMNS, only
from toolvet.db.types import utcnow
from toolvet.schemas.tools import DefinitionOut, ToolOut
from toolvet.services import audit
from toolvet.services.auth import Permission, Principal
from toolvet.services.context import Context
from toolvet.services.tools import load, to_out


def review_tool(ctx: Context, principal: Principal, server_name: str, name: str, note: str | None = None) -> ToolOut:
    """Record that ``principal`` reviewed the tool's current definition. ``enabled`` is not touched."""
    principal.require(Permission.REVIEW)
    now = utcnow()
    with ctx.db.transaction() as session:
        tool, server = load(session, server_name, name)
        before = to_out(tool, server)
        session.add(Review(tool_id=tool.id, fingerprint=tool.definition_fingerprint, digest=tool.definition_digest,
                           reviewed_by=principal.actor, reviewed_at=now, note=note))
        session.execute(update(Tool).where(Tool.id == tool.id).values(**only(REVIEW_COLUMNS, {
            "reviewed_fingerprint": tool.definition_fingerprint, "reviewed_digest": tool.definition_digest,
            "reviewed_at": now, "reviewed_by": principal.actor,
        }, "review")))
        session.refresh(tool)
        after = to_out(tool, server)
        audit.record(session, principal, "tool.review", "tool", f"tool:{server_name}/{name}", before,
                     {**after.model_dump(mode="json"), "note": note})
    return after


def history(ctx: Context, principal: Principal, server_name: str, name: str) -> list[DefinitionOut]:
    """Every distinct definition the tool has had, oldest first."""
    principal.require(Permission.READ)
    with ctx.db.transaction() as session:
        tool, _ = load(session, server_name, name)
        rows = session.scalars(
            select(ToolDefinition).where(ToolDefinition.tool_id == tool.id).order_by(ToolDefinition.id)
        ).all()
        return [
            DefinitionOut(fingerprint=row.fingerprint, digest=row.digest, definition=row.definition,
                          first_seen_at=row.first_seen_at, current=row.digest == tool.definition_digest,
                          reviewed=row.digest == tool.reviewed_digest)
            for row in rows
        ]
