"""What each MCP endpoint shows: ``/mcp`` and ``/mcp/servers/{name}``, prompts and resources federated,
the scope's disabled map hiding tools, and clients without a token challenged (RFC 9728, RFC 8414)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.server.mcpserver import MCPServer
from mcp.shared.exceptions import MCPError

from tests.gateway.conftest import ADMIN, BOUND, Toolvet
from tests.library import library as shared_library
from tests.upstreams import demo_server, modern_http_server, raw_listing_server
from toolvet.services import preferences

pytestmark = pytest.mark.anyio

ERAS = ["2026-07-28", "legacy"]


def library(name: str = "library") -> MCPServer:
    """An upstream with a tool, a prompt, a resource and a resource template."""
    return shared_library(name, greet=False)


@asynccontextmanager
async def client_at(toolvet: Toolvet, path: str, token: str | None, mode: str) -> AsyncIterator[Client]:
    async with toolvet.http(token) as http:
        transport = streamable_http_client(f"{toolvet.base}{path}", http_client=http)
        async with Client(transport, mode=mode, cache=None) as client:
            yield client


@pytest.mark.parametrize("mode", ERAS)
async def test_a_servers_endpoint_serves_its_tools_under_their_own_names(toolvet: Toolvet, mode):
    with modern_http_server(library()) as up, modern_http_server(demo_server()) as other:
        await toolvet.register("library", up.url)
        await toolvet.register("demo", other.url)
        preferences.set_permission_mode(toolvet.ctx, ADMIN, "alice", "allow")
        with toolvet.serve(), anyio.fail_after(BOUND):
            async with client_at(toolvet, "/mcp/servers/library", toolvet.alice, mode) as client:
                names = [t.name for t in (await client.list_tools()).tools]
                result = await client.call_tool("lookup", {"title": "Dune"})
                with pytest.raises(MCPError, match="Unknown tool"):
                    await client.call_tool("demo_tool_0", {"a": 1, "b": 2})
    assert names == ["lookup"]
    assert not result.is_error and result.content[0].text == "found Dune"


async def test_an_unknown_servers_endpoint_is_404_naming_it(toolvet: Toolvet):
    with toolvet.serve(), anyio.fail_after(BOUND):
        async with toolvet.http(toolvet.alice) as http:
            answer = await http.post(f"{toolvet.base}/mcp/servers/nowhere", json={"jsonrpc": "2.0", "id": 1,
                                                                                   "method": "ping"})
    assert answer.status_code == 404 and "nowhere" in answer.json()["error"]["message"]


@pytest.mark.parametrize("mode", ERAS)
async def test_prompts_and_resources_are_federated_prefixed_on_mcp_and_own_named_on_the_servers_endpoint(
    toolvet: Toolvet, mode
):
    with modern_http_server(library()) as up:
        await toolvet.register("library", up.url)
        with toolvet.serve(), anyio.fail_after(BOUND):
            async with client_at(toolvet, "/mcp", toolvet.alice, mode) as client:
                prompts = [p.name for p in (await client.list_prompts()).prompts]
                prompt = await client.get_prompt("library_summarise", {"title": "Emma"})
                resources = [str(r.uri) for r in (await client.list_resources()).resources]
                templates = [t.uri_template for t in (await client.list_resource_templates()).resource_templates]
                linked = await client.read_resource("books://by-title/Emma")  # never listed: asked of each
            async with client_at(toolvet, "/mcp/servers/library", toolvet.alice, mode) as own:
                own_prompts = [p.name for p in (await own.list_prompts()).prompts]
                read = await own.read_resource("books://catalogue")
    assert prompts == ["library_summarise"] and own_prompts == ["summarise"]
    assert prompt.messages[0].content.text == "Summarise Emma in three lines."
    assert resources == ["books://catalogue"] and templates == ["books://by-title/{title}"]
    assert linked.contents[0].text == "the text of Emma"
    assert read.contents[0].text == "Dune; Emma"


async def test_a_servers_endpoint_declares_only_what_the_server_declared(toolvet: Toolvet):
    tool = {"name": "only", "inputSchema": {"type": "object"}}
    with raw_listing_server({None: {"tools": [tool]}}) as up:  # declares tools only
        await toolvet.register("demo", up.url)
        with toolvet.serve(), anyio.fail_after(BOUND):
            async with client_at(toolvet, "/mcp/servers/demo", toolvet.alice, "legacy") as client:
                declared = client.server_capabilities
                with pytest.raises(MCPError):
                    await client.list_prompts()
    assert declared is not None and declared.tools is not None
    assert declared.prompts is None and declared.resources is None


@pytest.mark.parametrize("path", ["/mcp", "/mcp/servers/demo"])
async def test_a_tool_the_scope_disables_is_hidden_from_the_model(toolvet: Toolvet, path):
    with modern_http_server(demo_server()) as up:
        await toolvet.register("demo", up.url)
        preferences.set_disabled(toolvet.ctx, ADMIN, "default", "demo", ["tool_1"])
        with toolvet.serve(), anyio.fail_after(BOUND):
            async with client_at(toolvet, path, toolvet.alice, "2026-07-28") as client:
                names = [t.name for t in (await client.list_tools()).tools]
            async with client_at(toolvet, path, toolvet.ops, "2026-07-28") as operator:
                operators = [t.name for t in (await operator.list_tools()).tools]
    shown = [name.removeprefix("demo_") for name in names if not name.startswith("toolvet_")]
    assert shown == ["tool_0", "tool_2"]
    assert "tool_1" in [name.removeprefix("demo_") for name in operators]


@pytest.mark.parametrize("path", ["/mcp", "/mcp/servers/demo"])
async def test_a_request_without_a_token_is_challenged_where_nothing_is_offered_anonymously(toolvet: Toolvet, path):
    with modern_http_server(demo_server()) as up:  # no noauth tool
        await toolvet.register("demo", up.url)
        with toolvet.serve(), anyio.fail_after(BOUND):
            async with httpx2.AsyncClient(timeout=BOUND) as http:
                initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                    "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
                answer = await http.post(f"{toolvet.base}{path}", json=initialize,
                                         headers={"Accept": "application/json, text/event-stream"})
                challenge = answer.headers.get("www-authenticate", "")
                pointed = challenge.split('resource_metadata="')[1].split('"')[0]
                resource = (await http.get(pointed)).json()
                issuer = (await http.get(f"{toolvet.base}/.well-known/oauth-authorization-server")).json()
    assert answer.status_code == 401 and challenge.startswith("Bearer ")
    assert pointed == f"{toolvet.base}/.well-known/oauth-protected-resource{path}"
    assert resource["resource"] == f"{toolvet.base}{path}"
    assert resource["authorization_servers"] == [toolvet.base] == [issuer["issuer"]]
    assert issuer["token_endpoint"] == f"{toolvet.base}/api/v1/tokens"


async def test_a_tool_that_can_only_run_as_a_task_is_not_offered_on_the_gateway(toolvet: Toolvet):
    tools = [{"name": "plain", "inputSchema": {"type": "object"}},
             {"name": "batch", "inputSchema": {"type": "object"}, "execution": {"taskSupport": "required"}},
             {"name": "either", "inputSchema": {"type": "object"}, "execution": {"taskSupport": "optional"}}]
    with raw_listing_server({None: {"tools": tools}}) as up:
        await toolvet.register("jobs", up.url)
        with toolvet.serve(), anyio.fail_after(BOUND):
            async with client_at(toolvet, "/mcp/servers/jobs", toolvet.alice, "2026-07-28") as client:
                names = sorted(t.name for t in (await client.list_tools()).tools)
    assert names == ["either", "plain"]
