"""``/tools`` and ``/servers/{name}/tools``: listing, an operator's flags, hand registration, review,
history and the review diff (docs/api.md#tools).

Tool names are case sensitive and may contain dots, spaces or even ``/``, so the tool segment is a
``path`` parameter. The ``/review``, ``/history`` and ``/diff`` routes are declared before the plain
tool routes so they take precedence."""

from __future__ import annotations

from typing import Annotated, Literal, get_args

from fastapi import APIRouter, Body, Query, Response

from toolvet.api.deps import ContextDep, Limit, Offset, PrincipalDep
from toolvet.domain.policy import ReviewState
from toolvet.schemas.common import Page
from toolvet.schemas.tools import DefinitionOut, DiffOut, ReviewCreate, ToolOut, ToolPatch, ToolRegistration
from toolvet.services import review, tools

router = APIRouter(tags=["tools"])

#: ``?findings=``: any or none, or at least a severity.
Severity = Literal["info", "warning", "high"]
FindingsFilter = Literal["true", "false", Severity]
_SEVERITIES = get_args(Severity)


@router.get("/tools")
def list_tools(
    ctx: ContextDep,
    principal: PrincipalDep,
    server: Annotated[str | None, Query(description="Only this server's tools.")] = None,
    available: Annotated[bool | None, Query(description="Tool and server both enabled.")] = None,
    offered: Annotated[
        bool | None, Query(description="Available and not held for a changed contract.")
    ] = None,
    review_state: Annotated[ReviewState | None, Query()] = None,
    findings: Annotated[
        FindingsFilter | None,
        Query(description="Only tools with (true) or without (false) findings, or with a finding at least "
                          "this severe (info, warning, high)."),
    ] = None,
    limit: Limit = 100,
    offset: Offset = 0,
) -> Page[ToolOut]:
    """Tools by server and name, filtered on the derived fields."""
    return tools.list_tools(
        ctx,
        principal,
        server=server,
        available=available,
        offered_=offered,
        state=review_state,
        has_findings=None if findings is None or findings in _SEVERITIES else findings == "true",
        min_severity=findings if findings in _SEVERITIES else None,  # type: ignore[arg-type]
        limit=limit,
        offset=offset,
    )


@router.post("/servers/{name}/tools", status_code=201)
def register_tool(ctx: ContextDep, principal: PrincipalDep, name: str, data: ToolRegistration) -> ToolOut:
    """Register a tool by hand on a ``manual`` server; its definition is checked like a discovered one."""
    return tools.register_tool(ctx, principal, name, data)


@router.post("/servers/{name}/tools/{tool:path}/review")
def review_tool(
    ctx: ContextDep,
    principal: PrincipalDep,
    name: str,
    tool: str,
    data: Annotated[ReviewCreate | None, Body()] = None,
) -> ToolOut:
    """Record a review of the tool's current definition (``review_state`` becomes ``reviewed``).
    ``writable`` sets the operator's decision with it, and is required (422 naming it) when the tool's
    read-only claim, annotations or required parameters moved since its last review."""
    return review.review_tool(ctx, principal, name, tool, data.note if data else None,
                              data.writable if data else None)


@router.get("/servers/{name}/tools/{tool:path}/history")
def tool_history(
    ctx: ContextDep, principal: PrincipalDep, name: str, tool: str, limit: Limit = 100, offset: Offset = 0
) -> Page[DefinitionOut]:
    """Every distinct definition the tool has had, oldest first."""
    return review.history(ctx, principal, name, tool, limit=limit, offset=offset)


@router.get("/servers/{name}/tools/{tool:path}/diff")
def tool_diff(
    ctx: ContextDep,
    principal: PrincipalDep,
    name: str,
    tool: str,
    against: Annotated[
        str | None,
        Query(description="A digest or fingerprint from the tool's history to compare with, instead of "
                          "the reviewed definition (an unambiguous prefix will do)."),
    ] = None,
) -> DiffOut:
    """What changed between the reviewed definition (or ``against``) and the current one."""
    return review.diff(ctx, principal, name, tool, against=against)


@router.get("/servers/{name}/tools/{tool:path}")
def get_tool(ctx: ContextDep, principal: PrincipalDep, name: str, tool: str) -> ToolOut:
    """One tool."""
    return tools.get_tool(ctx, principal, name, tool)


@router.patch("/servers/{name}/tools/{tool:path}")
def update_tool(ctx: ContextDep, principal: PrincipalDep, name: str, tool: str, patch: ToolPatch) -> ToolOut:
    """Set ``enabled`` and ``writable``; on a ``manual`` server also the definition's fields."""
    return tools.update_tool(ctx, principal, name, tool, patch)


@router.delete("/servers/{name}/tools/{tool:path}", status_code=204, response_class=Response)
def delete_tool(ctx: ContextDep, principal: PrincipalDep, name: str, tool: str) -> None:
    """Remove a tool (on an ``auto`` server, discovery lists it again if the server still has it)."""
    tools.delete_tool(ctx, principal, name, tool)
