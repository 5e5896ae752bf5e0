"""The API's routers. ``create_app`` mounts every router in ``ROUTERS`` under ``/api/v1`` behind
authentication, so adding a group of routes is one import and one entry here."""

from __future__ import annotations

from fastapi import APIRouter

from toolvet.api.routes import audit, calls, catalog, discovery, preferences, servers, tokens, tool_sets, tools

ROUTERS: list[APIRouter] = [
    servers.router,
    tools.router,
    tool_sets.router,
    audit.router,
    tokens.router,
    discovery.router,
    preferences.router,
    catalog.router,
    calls.router,
]
