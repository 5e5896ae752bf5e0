"""The API's routers. ``create_app`` mounts every router in ``ROUTERS`` under ``/api/v1`` behind
authentication, so adding a group of routes is one import and one entry here.

``OPEN_ROUTERS`` hold the two routes a caller without a token may use, as on ``/mcp``: making a call
and asking for its decision, at a ``noauth`` tool. They read the token themselves (``deps.CallerDep``)
and the services refuse a caller without one anywhere else (``services.access``)."""

from __future__ import annotations

from fastapi import APIRouter

from toolvet.api.routes import (
    audit,
    calls,
    catalog,
    discovery,
    entries,
    preferences,
    servers,
    tokens,
    tool_sets,
    tools,
    webhooks,
)

ROUTERS: list[APIRouter] = [
    servers.router,
    tools.router,
    entries.router,
    tool_sets.router,
    audit.router,
    tokens.router,
    discovery.router,
    preferences.router,
    catalog.router,
    calls.router,
    webhooks.router,
]
OPEN_ROUTERS: list[APIRouter] = [calls.open_router, catalog.open_router]
