"""``/audit``: the append-only log of every operator action."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from toolvet.api.deps import ContextDep, Limit, Offset, PrincipalDep
from toolvet.schemas.common import Page
from toolvet.schemas.tools import AuditOut
from toolvet.services import audit

router = APIRouter(tags=["audit"])


@router.get("/audit")
def list_audit(
    ctx: ContextDep,
    principal: PrincipalDep,
    actor: Annotated[str | None, Query(description="e.g. `token:ops`.")] = None,
    object_id: Annotated[
        str | None, Query(alias="object", description="`server:NAME`, `tool:SERVER/TOOL` or `token:ID`.")
    ] = None,
    action: Annotated[str | None, Query(description="e.g. `server.create`, `tool.review`.")] = None,
    limit: Limit = 100,
    offset: Offset = 0,
) -> Page[AuditOut]:
    """Entries newest first, with who, what, before and after."""
    return audit.list_entries(
        ctx, principal, actor=actor, object_id=object_id, action=action, limit=limit, offset=offset
    )
