"""``/mcp`` seen by the SDK's own client, in both protocol eras."""

from __future__ import annotations

from typing import Annotated, Any

import anyio
import pytest
from mcp.server.mcpserver import MCPServer
from mcp.shared.exceptions import MCPError
from mcp.types import CLIENT_CAPABILITIES_META_KEY, CLIENT_INFO_META_KEY, PROTOCOL_VERSION_META_KEY
from mcp_types.jsonrpc import HEADER_MISMATCH
from pydantic import Field

from tests.gateway.conftest import ADMIN, BOUND, Toolvet
from tests.gateway.lab import WIDGET, WIDGET_HTML, lab_server
from tests.upstreams import modern_http_server
from toolvet.gateway.offered import Offered, OfferedTool
from toolvet.services import preferences
from toolvet.services.access import requirement

pytestmark = pytest.mark.anyio

ERAS = ["2026-07-28", "legacy"]
LAB = ["lab_echo", "lab_files", "lab_numbers", "lab_open", "lab_widget"]
HOST = ["toolvet_discover_server", "toolvet_list_servers", "toolvet_list_tools", "toolvet_tool_diff"]


@pytest.mark.parametrize("mode", ERAS)
async def test_tools_list_names_every_offered_tool_server_underscore_tool_with_its_fields(
    toolvet: Toolvet, mode
):
    with modern_http_server() as up:
        await toolvet.register("demo", up.url)
        with toolvet.serve(), anyio.fail_after(BOUND):
            async with toolvet.client(toolvet.alice, mode=mode) as client:
                listed = {t.name: t for t in (await client.list_tools()).tools}
    assert sorted(listed) == ["demo_tool_0", "demo_tool_1", "demo_tool_2", *HOST]
    zero = listed["demo_tool_0"]
    assert zero.title == "Tool Zero" and zero.description == "Adds two numbers."
    assert zero.input_schema["required"] == ["a", "b"] and zero.output_schema is not None
    assert zero.annotations is not None and zero.annotations.read_only_hint is True
    assert zero.icons is not None and zero.icons[0].src == "https://example.invalid/icon.png"
    assert zero.meta == {"vendor/extra": {"kept": True}}


@pytest.mark.parametrize("mode", ERAS)
async def test_an_auto_allowed_call_is_forwarded_and_its_structured_result_returned(toolvet: Toolvet, mode):
    with modern_http_server() as up:
        await toolvet.register("demo", up.url)
        preferences.set_permission_mode(toolvet.ctx, ADMIN, "alice", "allow")
        with toolvet.serve(), anyio.fail_after(BOUND):
            async with toolvet.client(toolvet.alice, mode=mode) as client:
                await client.list_tools()
                result = await client.call_tool("demo_tool_0", {"a": 2, "b": 40})
    assert not result.is_error and result.structured_content == {"result": 42}
    assert (
        "io.modelcontextprotocol/serverInfo" not in (result.meta or {})
        or result.meta["io.modelcontextprotocol/serverInfo"]["name"] == "toolvet"
    )


async def test_a_2026_only_output_schema_is_dropped_for_a_handshake_client_and_kept_for_a_modern_one(toolvet):
    with lab_server() as (up, _):
        await toolvet.register("lab", up.url)
        preferences.set_permission_mode(toolvet.ctx, ADMIN, "alice", "allow")
        with toolvet.serve(), anyio.fail_after(BOUND):
            async with toolvet.client(toolvet.alice, mode="legacy") as old:
                old_tools = {t.name: t for t in (await old.list_tools()).tools}
                old_result = await old.call_tool("lab_numbers", {"n": 3})
            async with toolvet.client(toolvet.alice) as new:
                new_tools = {t.name: t for t in (await new.list_tools()).tools}
                new_result = await new.call_tool("lab_numbers", {"n": 3})
    assert sorted(old_tools) == sorted(new_tools) == [*LAB, *HOST]  # the whole list, in both eras
    assert old_tools["lab_numbers"].output_schema is None
    assert old_tools["lab_echo"].output_schema is not None  # object-rooted schemas stay
    assert new_tools["lab_numbers"].output_schema == {"type": "array", "items": {"type": "integer"}}
    assert old_result.structured_content is None and old_result.content[0].text == "[0, 1, 2]"
    assert new_result.structured_content == [0, 1, 2]


async def test_app_only_tools_are_listed_with_their_meta_and_their_ui_resource_is_read_upstream(toolvet):
    with lab_server() as (up, _):
        await toolvet.register("lab", up.url)
        with toolvet.serve(), anyio.fail_after(BOUND):
            async with toolvet.client(toolvet.alice) as client:
                widget = {t.name: t for t in (await client.list_tools()).tools}["lab_widget"]
                read = await client.read_resource(WIDGET)
                with pytest.raises(MCPError, match="not found"):
                    await client.read_resource("ui://lab/nothing.html")
    assert widget.meta == {"ui": {"resourceUri": WIDGET, "visibility": ["app"]}}
    assert read.contents[0].text == WIDGET_HTML


@pytest.mark.parametrize("mode", ERAS)
async def test_invalid_arguments_answer_is_error_naming_the_field_and_never_go_upstream(toolvet, mode):
    with lab_server() as (up, lab):
        await toolvet.register("lab", up.url)
        preferences.set_permission_mode(toolvet.ctx, ADMIN, "alice", "allow")
        with toolvet.serve(), anyio.fail_after(BOUND):
            async with toolvet.client(toolvet.alice, mode=mode) as client:
                result = await client.call_tool("lab_numbers", {"n": "three"})
    assert result.is_error and "arguments.n" in result.content[0].text
    assert lab.calls == []


@pytest.mark.parametrize("mode", ERAS)
async def test_an_unknown_tool_is_a_json_rpc_error(toolvet, mode):
    with toolvet.serve(), anyio.fail_after(BOUND):
        async with toolvet.client(toolvet.alice, mode=mode) as client:
            with pytest.raises(MCPError, match="Unknown tool"):
                await client.call_tool("nosuch_tool", {})
            with pytest.raises(MCPError, match="Unknown tool"):
                await client.call_tool("nounderscore", {})


async def test_a_refused_tool_answers_is_error_with_the_reason(toolvet):
    with lab_server() as (up, lab):
        await toolvet.register("lab", up.url)
        preferences.set_disabled(toolvet.ctx, ADMIN, "default", "lab", ["echo"])
        with toolvet.serve(), anyio.fail_after(BOUND):
            async with toolvet.client(toolvet.alice) as client:
                result = await client.call_tool("lab_echo", {"text": "x"})
    assert result.is_error and "refused" in result.content[0].text
    assert lab.calls == []


async def test_a_modern_call_finds_its_input_schema_without_listing_every_tool(toolvet, monkeypatch):
    # The SDK checks Mcp-Param-* headers against the tool's inputSchema; without the gateway's
    # lookup it would run a whole tools/list through the handler chain on every tools/call.
    from toolvet.gateway.offered import Offered

    listings = 0
    listing = Offered.listing

    def counted(self, **kwargs):
        nonlocal listings
        listings += 1
        return listing(self, **kwargs)

    monkeypatch.setattr(Offered, "listing", counted)
    with modern_http_server() as up:
        await toolvet.register("demo", up.url)
        preferences.set_permission_mode(toolvet.ctx, ADMIN, "alice", "allow")
        with toolvet.serve(), anyio.fail_after(BOUND):
            async with toolvet.client(toolvet.alice) as client:
                await client.list_tools()
                before = listings
                for _ in range(3):
                    result = await client.call_tool("demo_tool_0", {"a": 2, "b": 40})
                    assert not result.is_error and result.structured_content == {"result": 42}
    assert before == 1 and listings == before


def test_the_sdk_tracing_span_is_off_unless_asked_for(ctx):
    from mcp.server._otel import OpenTelemetryMiddleware

    from toolvet.gateway.access import TokenCache
    from toolvet.gateway.endpoint import Endpoint
    from toolvet.gateway.offered import OfferedCache
    from toolvet.services.calls import CallService

    def traced() -> bool:
        endpoint = Endpoint(CallService(ctx), OfferedCache(ctx), TokenCache(ctx))
        return any(isinstance(m, OpenTelemetryMiddleware) for m in endpoint.server.middleware)

    assert not traced()
    ctx.settings = ctx.settings.model_copy(update={"gateway_tracing": True})
    assert traced()


def _region_server() -> MCPServer:
    """An upstream whose ``where`` tool routes on its ``region`` argument (an ``x-mcp-header``)."""
    server = MCPServer("regions", log_level="WARNING")

    @server.tool(description="Says where it ran.")
    def where(region: Annotated[str, Field(json_schema_extra={"x-mcp-header": "Region"})]) -> str:
        return f"ran in {region}"

    return server


def _raw_call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    meta = {PROTOCOL_VERSION_META_KEY: "2026-07-28", CLIENT_INFO_META_KEY: {"name": "raw", "version": "0"},
            CLIENT_CAPABILITIES_META_KEY: {}}
    return {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": name, "arguments": arguments, "_meta": meta}}


async def test_an_mcp_param_header_is_still_checked_against_a_schema_that_declares_it(toolvet):
    with modern_http_server(_region_server()) as up:
        await toolvet.register("geo", up.url)
        preferences.set_permission_mode(toolvet.ctx, ADMIN, "alice", "allow")
        with toolvet.serve(), anyio.fail_after(BOUND):
            async with toolvet.client(toolvet.alice) as client:
                await client.list_tools()  # the offered set is read
            headers = {"accept": "application/json, text/event-stream", "mcp-protocol-version": "2026-07-28",
                       "mcp-method": "tools/call", "mcp-name": "geo_where"}
            async with toolvet.http(toolvet.alice) as http:
                mismatched = await http.post(toolvet.mcp, json=_raw_call("geo_where", {"region": "eu"}),
                                             headers={**headers, "mcp-param-region": "us"})
                missing = await http.post(toolvet.mcp, json=_raw_call("geo_where", {"region": "eu"}),
                                          headers=headers)
    for refused in (mismatched, missing):  # refused at toolvet's door, before anything goes upstream
        assert refused.status_code == 400
        assert refused.json()["error"]["code"] == HEADER_MISMATCH
    assert "tools/call" not in up.rpc_methods()


def test_only_a_schema_that_declares_an_x_mcp_header_is_given_to_the_sdks_header_check():
    def tool(name: str, schema: dict[str, Any]) -> OfferedTool:
        return OfferedTool(f"up_{name}", "up", name, "f" * 64, requirement({}),
                           {"name": f"up_{name}", "inputSchema": schema})

    nested = {"type": "object", "properties": {"where": {"type": "object", "properties": {
        "region": {"type": "string", "x-mcp-header": "Region"}}}}}
    plain = {"type": "object", "properties": {"text": {"type": "string", "description": "x-mcp-header"}}}
    tools = [tool("nested", nested), tool("plain", plain), tool("empty", {"type": "object"})]
    offered = Offered(tools, {t.name: t for t in tools}, "signature")
    assert offered.header_schema(tools[0]) is nested
    assert offered.header_schema(tools[1]) is None and offered.header_schema(tools[2]) is None
    assert offered.header_schema(tools[0]) is nested  # the answer is kept for the reading's life
