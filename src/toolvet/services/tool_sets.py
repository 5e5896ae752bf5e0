"""Tool sets: an operator's named allow-lists of tools, each served at ``/mcp/sets/{name}``.

Operators and admins write them (``manage-tool-sets``), readers read them; every change writes one
audit entry (``tool_set.create``, ``tool_set.replace``, ``tool_set.delete`` on ``tool_set:NAME``). A
member may name a server that is not registered yet: a set is an allow-list, and what the gateway
lists of it is what is offered, whenever it is.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from toolvet.db.models import ToolSet
from toolvet.db.types import utcnow
from toolvet.errors import Conflict, InvalidInput, NotFound
from toolvet.schemas.common import Page
from toolvet.schemas.tool_sets import ToolSetMember, ToolSetOut, ToolSetPut, check_tool_set_name
from toolvet.services import audit
from toolvet.services.auth import Permission, Principal
from toolvet.services.context import Context
from toolvet.services.servers import validated

SET_PATH = "/mcp/sets/{name}"
#: Most sets one read for the gateway asks for at once (its started endpoints are fewer).
MAX_READ = 1000


def _checked_name(name: str) -> str:
    try:
        return check_tool_set_name(name)
    except ValueError as exc:
        raise InvalidInput(str(exc), "name") from None


def _parsed(data: ToolSetPut | dict[str, Any]) -> ToolSetPut:
    return validated(ToolSetPut, data)


def to_out(row: ToolSet) -> ToolSetOut:
    return ToolSetOut(
        name=row.name, title=row.title, description=row.description,
        members=[ToolSetMember.model_validate(m) for m in row.members or []],
        endpoint=SET_PATH.format(name=row.name), created_at=row.created_at, updated_at=row.updated_at,
    )


def _load(session: Session, name: str) -> ToolSet:
    row = session.scalar(select(ToolSet).where(ToolSet.name == name))
    if row is None:
        raise NotFound(f"tool set {name!r} not found")
    return row


def _members(data: ToolSetPut) -> list[dict[str, Any]]:
    return [member.model_dump(mode="json") for member in data.members]


def list_tool_sets(ctx: Context, principal: Principal, *, limit: int = 100, offset: int = 0) -> Page[ToolSetOut]:
    """Sets by name."""
    principal.require(Permission.READ)
    with ctx.db.transaction() as session:
        total = session.scalar(select(func.count()).select_from(ToolSet)) or 0
        rows = session.scalars(select(ToolSet).order_by(ToolSet.name).limit(limit).offset(offset)).all()
        items = [to_out(row) for row in rows]
    return Page(items=items, total=total, limit=limit, offset=offset)


def get_tool_set(ctx: Context, principal: Principal, name: str) -> ToolSetOut:
    principal.require(Permission.READ)
    with ctx.db.transaction() as session:
        return to_out(_load(session, name))


def create_tool_set(ctx: Context, principal: Principal, name: str, data: ToolSetPut | dict[str, Any]) -> ToolSetOut:
    """A new set; Conflict when one of that name exists."""
    out, created = _save(ctx, principal, name, data, create=True, replace=False)
    assert created
    return out


def replace_tool_set(ctx: Context, principal: Principal, name: str, data: ToolSetPut | dict[str, Any]) -> ToolSetOut:
    """The whole definition of an existing set, replaced; NotFound when there is none."""
    out, _ = _save(ctx, principal, name, data, create=False, replace=True)
    return out


def put_tool_set(
    ctx: Context, principal: Principal, name: str, data: ToolSetPut | dict[str, Any]
) -> tuple[ToolSetOut, bool]:
    """Create the set, or replace it whole when it exists: (the set, whether it was created)."""
    return _save(ctx, principal, name, data, create=True, replace=True)


def _save(
    ctx: Context, principal: Principal, name: str, data: ToolSetPut | dict[str, Any], *, create: bool, replace: bool
) -> tuple[ToolSetOut, bool]:
    principal.require(Permission.MANAGE_TOOL_SETS)
    name = _checked_name(name)
    definition = _parsed(data)
    try:
        with ctx.db.transaction() as session:
            row = session.scalar(select(ToolSet).where(ToolSet.name == name))
            if row is None and not create:
                raise NotFound(f"tool set {name!r} not found")
            if row is not None and not replace:
                raise Conflict(f"tool set {name!r} already exists")
            before = to_out(row) if row is not None else None
            now = utcnow()
            if row is None:
                row = ToolSet(name=name, created_at=now)
                session.add(row)
            row.title, row.description = definition.title, definition.description
            row.members = _members(definition)
            row.updated_at = now  # a replacement is a change even when it sets the same values
            session.flush()
            out = to_out(row)
            action = "tool_set.create" if before is None else "tool_set.replace"
            audit.record(session, principal, action, "tool_set", f"tool_set:{name}", before, out)
    except IntegrityError:  # created by another writer between the read and the insert
        raise Conflict(f"tool set {name!r} already exists") from None
    return out, before is None


def delete_tool_set(ctx: Context, principal: Principal, name: str) -> None:
    """Remove a set; its endpoint stops serving (its connected clients' sessions end)."""
    principal.require(Permission.MANAGE_TOOL_SETS)
    with ctx.db.transaction() as session:
        row = _load(session, name)
        before = to_out(row)
        session.delete(row)
        audit.record(session, principal, "tool_set.delete", "tool_set", f"tool_set:{name}", before, None)


def read_tool_sets(ctx: Context, names: Iterable[str]) -> dict[str, ToolSetOut]:
    """The named sets that exist, by name: what the gateway serves (it applies each caller's access
    itself, so no principal is asked here). One query; at most :data:`MAX_READ` names."""
    wanted = sorted(set(names))[:MAX_READ]
    if not wanted:
        return {}
    with ctx.db.transaction() as session:
        rows = session.scalars(select(ToolSet).where(ToolSet.name.in_(wanted))).all()
        return {row.name: to_out(row) for row in rows}
