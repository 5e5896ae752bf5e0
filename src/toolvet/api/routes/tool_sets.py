"""``/tool-sets``: operators' named allow-lists of tools, each served at ``/mcp/sets/{name}``."""

from __future__ import annotations

from fastapi import APIRouter, Response

from toolvet.api.deps import ContextDep, Limit, Offset, PrincipalDep
from toolvet.schemas.common import Page
from toolvet.schemas.tool_sets import ToolSetOut, ToolSetPut
from toolvet.services import tool_sets

router = APIRouter(tags=["tool sets"])


@router.get("/tool-sets")
def list_tool_sets(
    ctx: ContextDep, principal: PrincipalDep, limit: Limit = 100, offset: Offset = 0
) -> Page[ToolSetOut]:
    """Tool sets by name."""
    return tool_sets.list_tool_sets(ctx, principal, limit=limit, offset=offset)


@router.get("/tool-sets/{name}")
def get_tool_set(ctx: ContextDep, principal: PrincipalDep, name: str) -> ToolSetOut:
    """One tool set."""
    return tool_sets.get_tool_set(ctx, principal, name)


@router.put("/tool-sets/{name}", responses={201: {"model": ToolSetOut, "description": "Created"}})
def put_tool_set(
    ctx: ContextDep, principal: PrincipalDep, name: str, data: ToolSetPut, response: Response
) -> ToolSetOut:
    """Create the set (201), or replace its whole definition (200). Members may name servers that are
    not registered yet."""
    out, created = tool_sets.put_tool_set(ctx, principal, name, data)
    if created:
        response.status_code = 201
    return out


@router.delete("/tool-sets/{name}", status_code=204, response_class=Response)
def delete_tool_set(ctx: ContextDep, principal: PrincipalDep, name: str) -> None:
    """Remove a set; its endpoint stops serving."""
    tool_sets.delete_tool_set(ctx, principal, name)
