"""A small MCP server built with the official SDK, showing the kinds of tool toolvet cares about:
a read-only tool, a destructive one, one with an ``outputSchema``, one only an app may call
(``_meta.ui.visibility``), and a server that wants an ``Authorization`` header."""

from __future__ import annotations

import hmac
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations
from pydantic import BaseModel
from starlette.types import ASGIApp, Receive, Scope, Send

NOTES: dict[str, str] = {"welcome": "toolvet keeps what servers claim apart from what people decide."}


class Forecast(BaseModel):
    city: str
    temperature_c: float
    summary: str


def build() -> MCPServer:
    """The demo server's tools."""
    server = MCPServer("toolvet-demo", version="1.0.0", log_level="WARNING",
                       instructions="A demo upstream for toolvet: notes and weather.")

    @server.tool(title="Read a note", description="Read one note by its key.",
                 annotations=ToolAnnotations(read_only_hint=True, destructive_hint=False))
    def read_note(key: str) -> str:
        return NOTES.get(key, "")

    @server.tool(title="Delete a note", description="Delete a note for good.",
                 annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True))
    def delete_note(key: str) -> str:
        return "deleted" if NOTES.pop(key, None) is not None else "no such note"

    @server.tool(title="Weather forecast", description="Tomorrow's forecast for a city.",
                 annotations=ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=True))
    def forecast(city: str) -> Forecast:
        return Forecast(city=city, temperature_c=21.5, summary="sunny")

    @server.tool(title="Chart refresh", description="Refresh the weather chart view (called by the app).",
                 meta={"ui": {"visibility": ["app"], "resourceUri": "ui://toolvet-demo/chart"}})
    def refresh_chart(city: str) -> str:
        return f"chart for {city} refreshed"

    @server.tool(title="Write a note", description="Create or replace a note.",
                 meta={"securitySchemes": [{"type": "oauth2", "scopes": ["notes:write"]}]})
    def write_note(key: str, text: str) -> str:
        NOTES[key] = text
        return "saved"

    return server


class RequireBearer:
    """ASGI middleware: every request needs ``Authorization: Bearer <key>`` (so toolvet must send the
    server's stored header, which it keeps encrypted)."""

    def __init__(self, app: ASGIApp, key: str) -> None:
        self.app, self.expected = app, f"Bearer {key}".encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            given = dict(scope["headers"]).get(b"authorization", b"")
            if not hmac.compare_digest(given, self.expected):
                await send({"type": "http.response.start", "status": 401,
                            "headers": [(b"content-type", b"text/plain"), (b"www-authenticate", b"Bearer")]})
                await send({"type": "http.response.body", "body": b"demo server: bearer token required"})
                return
        await self.app(scope, receive, send)


def app(key: str) -> Any:
    """The demo server's streamable-HTTP app at ``/mcp``, behind the bearer check."""
    return RequireBearer(build().streamable_http_app(), key)
