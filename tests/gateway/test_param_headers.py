"""A tool that routes on ``x-mcp-header`` arguments is callable through toolvet: its ``Mcp-Param-*``
headers are sent upstream in the 2026-07-28 era, through the REST door and through ``/mcp`` alike."""

from __future__ import annotations

from typing import Annotated, Any

import anyio
import mcp.types as types
import pytest
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel.server import Server
from mcp.server.mcpserver import MCPServer
from pydantic import Field

from tests.gateway.conftest import ADMIN, BOUND, Toolvet
from tests.upstreams import RecordedRequest, Upstream, modern_http_server
from toolvet.services import preferences

pytestmark = pytest.mark.anyio

ZURICH = "Zürich"  # not printable ASCII: sent base64-wrapped, and decoded by the upstream's check


def _routing_server() -> MCPServer:
    """An upstream whose ``route`` tool declares a string and a bool argument as headers."""
    server = MCPServer("routing", log_level="WARNING")

    @server.tool(description="Says where and how it ran.")
    def route(
        region: Annotated[str, Field(json_schema_extra={"x-mcp-header": "Region"})],
        urgent: Annotated[bool, Field(json_schema_extra={"x-mcp-header": "Urgent"})] = False,
        note: str = "",
    ) -> str:
        return f"ran in {region}, urgent={urgent}, {note}"

    return server


def _upstream_calls(up: Upstream) -> list[RecordedRequest]:
    return [r for r in up.requests if isinstance(r.body, dict) and r.body.get("method") == "tools/call"]


def _text(result: dict[str, Any]) -> str:
    return str(result["content"][0]["text"])


async def test_a_rest_call_sends_the_tools_mcp_param_headers_upstream(toolvet: Toolvet):
    with modern_http_server(_routing_server()) as up:
        await toolvet.register("geo", up.url)
        preferences.set_permission_mode(toolvet.ctx, ADMIN, "alice", "allow")
        with toolvet.serve(), anyio.fail_after(BOUND):
            async with toolvet.http(toolvet.alice) as http:
                answers = [await http.post(f"{toolvet.base}/api/v1/calls", json={
                    "server_type": "geo", "tool_name": "route", "arguments": arguments})
                    for arguments in ({"region": "eu-west", "urgent": True, "note": "plain"},
                                      {"region": ZURICH, "note": "wrapped"})]
    done = [a.json() for a in answers]
    assert [d["status"] for d in done] == ["done", "done"], [d["error"] for d in done]
    assert [d["result"].get("isError") for d in done] == [False, False]
    assert _text(done[0]["result"]) == "ran in eu-west, urgent=True, plain"
    assert _text(done[1]["result"]) == f"ran in {ZURICH}, urgent=False, wrapped"
    sent = [r.headers for r in _upstream_calls(up)]
    assert sent[0]["mcp-param-region"] == "eu-west" and sent[0]["mcp-param-urgent"] == "true"
    assert sent[1]["mcp-param-region"].startswith("=?base64?") and "mcp-param-urgent" not in sent[1]


@pytest.mark.parametrize("mode", ["2026-07-28", "legacy"])
async def test_an_mcp_call_of_a_header_routed_tool_reaches_the_upstream(toolvet: Toolvet, mode: str):
    with modern_http_server(_routing_server()) as up:
        await toolvet.register("geo", up.url)
        preferences.set_permission_mode(toolvet.ctx, ADMIN, "alice", "allow")
        with toolvet.serve(), anyio.fail_after(BOUND):
            async with toolvet.client(toolvet.alice, mode=mode) as client:
                await client.list_tools()  # the SDK's client mirrors headers only for a listed tool
                result = await client.call_tool("geo_route", {"region": ZURICH, "urgent": False})
    assert not result.is_error, result.content
    assert result.content[0].text == f"ran in {ZURICH}, urgent=False, "  # type: ignore[union-attr]
    (call,) = _upstream_calls(up)
    if mode == "legacy":  # a handshake-era caller's call goes upstream in that era: no such headers
        assert not [name for name in call.headers if name.startswith("mcp-param-")]
    else:
        assert call.headers["mcp-param-urgent"] == "false"
        assert call.headers["mcp-param-region"].startswith("=?base64?")


def _invalid_annotation_server() -> Server[Any]:
    """An upstream (the SDK's low-level server, which lists what it is given) whose tool declares a
    valid ``x-mcp-header`` beside one the protocol forbids (on a number)."""
    schema = {"type": "object", "properties": {"region": {"type": "string", "x-mcp-header": "Region"},
                                               "size": {"type": "number", "x-mcp-header": "Size"}}}

    async def list_tools(ctx: ServerRequestContext[Any], params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[types.Tool(name="measure", input_schema=schema)])

    async def call_tool(ctx: ServerRequestContext[Any], params: types.CallToolRequestParams) -> types.CallToolResult:
        return types.CallToolResult(content=[types.TextContent(type="text", text=f"measured {params.arguments}")])

    return Server("measuring", version="1.0", on_list_tools=list_tools, on_call_tool=call_tool)


async def test_a_tool_with_an_invalid_x_mcp_header_is_called_with_no_param_headers(toolvet: Toolvet):
    """As the SDK's client does: such a tool mirrors nothing (and the SDK's server checks nothing)."""
    with modern_http_server(_invalid_annotation_server()) as up:  # type: ignore[arg-type]
        await toolvet.register("lab", up.url)
        preferences.set_permission_mode(toolvet.ctx, ADMIN, "alice", "allow")
        with toolvet.serve(), anyio.fail_after(BOUND):
            async with toolvet.http(toolvet.alice) as http:
                answer = await http.post(f"{toolvet.base}/api/v1/calls", json={
                    "server_type": "lab", "tool_name": "measure", "arguments": {"region": "eu", "size": 1.5}})
    done = answer.json()
    assert done["status"] == "done", done["error"]
    assert _text(done["result"]) == "measured {'region': 'eu', 'size': 1.5}"
    (call,) = _upstream_calls(up)
    assert call.headers["mcp-name"] == "measure"  # stamped for the era as ever
    assert not [name for name in call.headers if name.startswith("mcp-param-")]


async def test_a_tool_whose_name_is_not_ascii_is_called_with_its_mcp_name_wrapped(toolvet: Toolvet):
    """A raw non-ASCII ``Mcp-Name`` cannot go into an HTTP header at all: it is base64-wrapped, as the
    SDK's client sends it, and the SDK's server matches it with the body's name."""
    server = MCPServer("weather", log_level="WARNING")  # the SDK warns about such a name, and serves it

    @server.tool(name="météo", description="Says the weather.")
    def meteo(city: str) -> str:
        return f"sunny in {city}"

    with modern_http_server(server) as up:
        await toolvet.register("geo", up.url)
        preferences.set_permission_mode(toolvet.ctx, ADMIN, "alice", "allow")
        with toolvet.serve(), anyio.fail_after(BOUND):
            async with toolvet.http(toolvet.alice) as http:
                answer = await http.post(f"{toolvet.base}/api/v1/calls", json={
                    "server_type": "geo", "tool_name": "météo", "arguments": {"city": ZURICH}})
    assert answer.status_code == 200, answer.text
    assert _text(answer.json()["result"]) == f"sunny in {ZURICH}"
    (call,) = _upstream_calls(up)
    assert call.headers["mcp-name"].startswith("=?base64?")
