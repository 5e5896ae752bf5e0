"""Discovery: run a pass over one server now, and read the recorded runs."""

from __future__ import annotations

from fastapi import APIRouter

from toolvet.api.deps import ContextDep, Limit, Offset, PrincipalDep
from toolvet.schemas.common import Page
from toolvet.schemas.tools import DiscoveryRunOut
from toolvet.services import discovery

router = APIRouter(tags=["discovery"])


@router.post("/servers/{name}/discover")
async def discover_server(ctx: ContextDep, principal: PrincipalDep, name: str) -> DiscoveryRunOut:
    """List the server's tools now and reconcile them. A pass that fails is still answered 200: the
    run's ``status`` and ``error`` say what the upstream did."""
    [run] = await discovery.discover(ctx, principal, [name])
    return run


@router.get("/discovery/runs")
def list_runs(
    ctx: ContextDep,
    principal: PrincipalDep,
    server: str | None = None,
    status: str | None = None,
    limit: Limit = 100,
    offset: Offset = 0,
) -> Page[DiscoveryRunOut]:
    """Discovery runs, newest first, by ``server`` and ``status`` (ok, incomplete, failed)."""
    return discovery.list_runs(ctx, principal, server=server, status=status, limit=limit, offset=offset)
