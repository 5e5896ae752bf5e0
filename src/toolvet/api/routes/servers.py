"""``/servers``: registering, showing, changing and removing upstream servers."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Response

from toolvet.api.deps import ContextDep, Limit, Offset, PrincipalDep
from toolvet.schemas.common import Page
from toolvet.schemas.servers import ServerCreate, ServerOut, ServerPatch
from toolvet.services import servers

router = APIRouter(tags=["servers"])


@router.get("/servers")
def list_servers(
    ctx: ContextDep,
    principal: PrincipalDep,
    q: Annotated[str, Query(description="Servers whose name, title, URL, command or software contains this "
                                        "text (case-insensitive; at most 200 characters).")] = "",
    software: Annotated[str | None, Query(description="Only the servers that run this software (as named).")] = None,
    limit: Limit = 100,
    offset: Offset = 0,
) -> Page[ServerOut]:
    """Servers by name. Header and env values are never shown, only their names."""
    return servers.list_servers(ctx, principal, q=q, software=software, limit=limit, offset=offset)


@router.post("/servers", status_code=201)
def create_server(ctx: ContextDep, principal: PrincipalDep, data: ServerCreate) -> ServerOut:
    """Register a server. stdio servers (commands run on the host) need an admin."""
    return servers.create_server(ctx, principal, data)


@router.get("/servers/{name}")
def get_server(ctx: ContextDep, principal: PrincipalDep, name: str) -> ServerOut:
    """One server."""
    return servers.get_server(ctx, principal, name)


@router.patch("/servers/{name}")
def update_server(ctx: ContextDep, principal: PrincipalDep, name: str, patch: ServerPatch) -> ServerOut:
    """Change the fields the body sets; absent fields are left alone."""
    return servers.update_server(ctx, principal, name, patch)


@router.delete("/servers/{name}", status_code=204, response_class=Response)
def delete_server(ctx: ContextDep, principal: PrincipalDep, name: str) -> None:
    """Remove a server and every tool it has."""
    servers.delete_server(ctx, principal, name)
