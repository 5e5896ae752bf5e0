"""A low-level SDK upstream whose tools exercise what the gateway must pass through or enforce:
a 2026-only output schema, securitySchemes (noauth, oauth2 scopes), an MCP Apps tool with a ``ui://``
resource, and a description that a test can change (a rug pull)."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import mcp.types as types
import uvicorn
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel.server import Server
from mcp.server.mcpserver import MCPServer

from tests.upstreams import START_TIMEOUT, STOP_TIMEOUT, Upstream, _Server

WIDGET = "ui://lab/widget.html"
WIDGET_HTML = "<!doctype html><p>lab widget</p>"


@dataclass
class Lab:
    """The upstream's mutable state: what it advertises and how often it was called."""

    echo_description: str = "Echoes its text."
    widget_html: str = WIDGET_HTML  # what its ui:// resource holds
    calls: list[str] = field(default_factory=list)

    def tools(self) -> list[types.Tool]:
        text_in = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
        return [
            types.Tool(
                name="echo",
                description=self.echo_description,
                input_schema=text_in,
                output_schema={
                    "type": "object",
                    "properties": {"text": {"type": "string"}},
                    "required": ["text"],
                },
            ),
            types.Tool(
                name="numbers",
                title="Numbers",
                description="The first n numbers.",
                input_schema={
                    "type": "object",
                    "properties": {"n": {"type": "integer", "minimum": 0}},
                    "required": ["n"],
                },
                output_schema={"type": "array", "items": {"type": "integer"}},
            ),
            types.Tool(
                name="open",
                description="Anyone may call this.",
                input_schema={"type": "object"},
                meta={"securitySchemes": [{"type": "noauth"}]},
            ),
            types.Tool(
                name="files",
                description="Needs files.read.",
                input_schema={"type": "object"},
                meta={"securitySchemes": [{"type": "oauth2", "scopes": ["files.read"]}]},
            ),
            types.Tool(
                name="widget",
                description="Shows a widget.",
                input_schema={"type": "object"},
                meta={"ui": {"resourceUri": WIDGET, "visibility": ["app"]}},
            ),
        ]

    def server(self) -> Server[Any]:
        async def list_tools(ctx: ServerRequestContext[Any], params: Any) -> types.ListToolsResult:
            return types.ListToolsResult(tools=self.tools(), ttl_ms=0, cache_scope="public")

        async def call_tool(
            ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
        ) -> types.CallToolResult:
            self.calls.append(params.name)
            args = params.arguments or {}
            if params.name == "echo":
                return types.CallToolResult(
                    content=[types.TextContent(type="text", text=args["text"])],
                    structured_content={"text": args["text"]},
                )
            if params.name == "numbers":
                values = list(range(args["n"]))
                return types.CallToolResult(
                    content=[types.TextContent(type="text", text=str(values))], structured_content=values
                )
            return types.CallToolResult(content=[types.TextContent(type="text", text=params.name)])

        async def read_resource(
            ctx: ServerRequestContext[Any], params: types.ReadResourceRequestParams
        ) -> types.ReadResourceResult:
            return types.ReadResourceResult(
                contents=[
                    types.TextResourceContents(
                        uri=str(params.uri), mime_type="text/html;profile=mcp-app", text=self.widget_html
                    )
                ]
            )

        return Server(
            "lab",
            version="1.0",
            on_list_tools=list_tools,
            on_call_tool=call_tool,
            on_read_resource=read_resource,
        )


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def serve_at(server: Server[Any] | MCPServer, port: int) -> Iterator[Upstream]:
    """Serve an SDK server's streamable HTTP app on a given loopback port (so it can come back there)."""
    app = server.streamable_http_app()
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    config = uvicorn.Config(
        app, log_level="warning", lifespan="auto", http="h11", ws="none", timeout_graceful_shutdown=1
    )
    runner = _Server(config)
    thread = threading.Thread(target=runner.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        if not runner.ready.wait(START_TIMEOUT):
            raise RuntimeError(f"upstream on port {port} did not start")
        yield Upstream(url=f"http://127.0.0.1:{port}/mcp")
    finally:
        runner.should_exit = True
        thread.join(STOP_TIMEOUT)
        sock.close()


@contextmanager
def lab_server(lab: Lab | None = None, port: int | None = None) -> Iterator[tuple[Upstream, Lab]]:
    state = lab or Lab()
    with serve_at(state.server(), port or free_port()) as up:
        yield up, state
