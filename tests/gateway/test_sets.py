"""``/mcp/sets/{name}``: an operator's tool set lists exactly its offered members as ``{server}_{tool}``,
federates its member servers' prompts, follows the caller's token and scope like every endpoint, and
serves an edit of the set to the clients already connected."""

from __future__ import annotations

from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp.types import Implementation

from tests.gateway.conftest import ADMIN, BOUND, Toolvet
from tests.gateway.test_views import ERAS, client_at, library
from tests.upstreams import demo_server, modern_http_server
from toolvet.services import preferences, tool_sets

pytestmark = pytest.mark.anyio

SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo"


def define(
    toolvet: Toolvet, name: str, *members: tuple[str, str | None], replace: bool = False, **fields: Any
) -> None:
    data = {"members": [{"server": server, "tool": tool} for server, tool in members], **fields}
    if replace:
        tool_sets.replace_tool_set(toolvet.ctx, ADMIN, name, data)
    else:
        tool_sets.create_tool_set(toolvet.ctx, ADMIN, name, data)


async def names(client: Any) -> list[str]:
    return [t.name for t in (await client.list_tools()).tools]


@pytest.mark.parametrize("mode", ERAS)
async def test_a_set_lists_exactly_its_members_and_calls_them_and_nothing_else(toolvet: Toolvet, mode):
    with modern_http_server(library()) as books, modern_http_server(demo_server()) as demo:
        await toolvet.register("library", books.url)
        await toolvet.register("demo", demo.url)
        define(toolvet, "research", ("library", None), ("demo", "tool_1"), ("demo", "not_there"))
        preferences.set_permission_mode(toolvet.ctx, ADMIN, "alice", "allow")
        with toolvet.serve(), anyio.fail_after(BOUND):
            async with client_at(toolvet, "/mcp/sets/research", toolvet.alice, mode) as client:
                listed = await names(client)
                info = client.server_info if mode == "legacy" else None
                looked = await client.call_tool("library_lookup", {"title": "Dune"})
                echoed = await client.call_tool("demo_tool_1", {"text": "hi"})
                refused = []
                for outsider in ("demo_tool_0", "toolvet_list_servers", "demo_not_there"):
                    with pytest.raises(MCPError, match="Unknown tool") as raised:
                        await client.call_tool(outsider, {"a": 1, "b": 2})
                    refused.append(raised.value)
    assert listed == ["demo_tool_1", "library_lookup"]
    assert not looked.is_error and looked.content[0].text == "found Dune"
    assert not echoed.is_error and echoed.content[0].text == "hi"
    assert len(refused) == 3
    if info is not None:
        assert (info.name, info.title) == ("research", "research through toolvet")


@pytest.mark.parametrize("mode", ERAS)
async def test_a_set_may_hold_toolvets_own_tools_and_introduces_itself_with_its_title_and_description(
    toolvet: Toolvet, mode
):
    define(toolvet, "desk", ("toolvet", "list_servers"), title="Ops desk", description="For the on-call desk.")
    with toolvet.serve(), anyio.fail_after(BOUND):
        async with client_at(toolvet, "/mcp/sets/desk", toolvet.alice, mode) as client:
            listed = await names(client)
            called = await client.call_tool("toolvet_list_servers", {})
            if mode == "legacy":
                info, instructions = client.server_info, client.instructions
            else:  # this client adopts a discover result of its own making: ask the server for its own
                discovered = await client.session.send_discover("2026-07-28")
                info = Implementation.model_validate(discovered["_meta"][SERVER_INFO_KEY])
                instructions = discovered.get("instructions")
    assert listed == ["toolvet_list_servers"]
    assert not called.is_error
    assert info is not None and (info.name, info.title) == ("desk", "Ops desk")
    assert instructions is not None and instructions.startswith("For the on-call desk.")


@pytest.mark.parametrize("mode", ERAS)
async def test_a_sets_prompts_and_resources_come_from_its_member_servers_only(toolvet: Toolvet, mode):
    with modern_http_server(library()) as books, modern_http_server(library("shelf")) as shelf:
        await toolvet.register("library", books.url)
        await toolvet.register("shelf", shelf.url)
        define(toolvet, "reading", ("library", "lookup"))
        with toolvet.serve(), anyio.fail_after(BOUND):
            async with client_at(toolvet, "/mcp/sets/reading", toolvet.alice, mode) as client:
                prompts = [p.name for p in (await client.list_prompts()).prompts]
                prompt = await client.get_prompt("library_summarise", {"title": "Emma"})
                with pytest.raises(MCPError, match="Unknown prompt"):
                    await client.get_prompt("shelf_summarise", {"title": "Emma"})
                resources = [str(r.uri) for r in (await client.list_resources()).resources]
    assert prompts == ["library_summarise"]
    assert prompt.messages[0].content.text == "Summarise Emma in three lines."
    assert resources == ["books://catalogue"]


@pytest.mark.parametrize("mode", ERAS)
async def test_the_scopes_disabled_map_still_hides_a_member(toolvet: Toolvet, mode):
    with modern_http_server(demo_server()) as demo:
        await toolvet.register("demo", demo.url)
        define(toolvet, "pair", ("demo", "tool_0"), ("demo", "tool_1"))
        preferences.set_disabled(toolvet.ctx, ADMIN, "default", "demo", ["tool_1"])
        with toolvet.serve(), anyio.fail_after(BOUND):
            async with client_at(toolvet, "/mcp/sets/pair", toolvet.alice, mode) as client:
                shown = await names(client)
                refused = await client.call_tool("demo_tool_1", {"text": "x"})
            async with client_at(toolvet, "/mcp/sets/pair", toolvet.ops, mode) as operator:
                operators = await names(operator)
    assert shown == ["demo_tool_0"]
    assert refused.is_error and "disabled" in refused.content[0].text
    assert operators == ["demo_tool_0", "demo_tool_1"]


@pytest.mark.parametrize("mode", ERAS)
async def test_an_edit_to_the_set_reaches_connected_clients_who_are_told_the_list_changed(toolvet: Toolvet, mode):
    told = anyio.Event()

    async def on_message(message: Any) -> None:
        if getattr(message, "method", None) == "notifications/tools/list_changed":
            told.set()

    with modern_http_server(demo_server()) as demo:
        await toolvet.register("demo", demo.url)
        define(toolvet, "growing", ("demo", "tool_0"), ("later", None))
        with toolvet.serve(), anyio.fail_after(BOUND):
            async with toolvet.http(toolvet.alice) as http:
                transport = streamable_http_client(f"{toolvet.base}/mcp/sets/growing", http_client=http)
                async with Client(transport, mode=mode, cache=None, message_handler=on_message) as client:
                    before = await names(client)
                    if mode == "legacy":
                        define(toolvet, "growing", ("demo", None), replace=True)
                        await told.wait()
                    else:
                        async with client.listen(tools_list_changed=True) as subscription:
                            define(toolvet, "growing", ("demo", None), replace=True)
                            await subscription.__anext__()
                    after = await names(client)
    assert before == ["demo_tool_0"]  # the member server not registered yet lists nothing
    assert after == ["demo_tool_0", "demo_tool_1", "demo_tool_2"]


async def test_a_set_removed_while_served_ends_its_endpoint_and_is_404_from_then_on(toolvet: Toolvet):
    with modern_http_server(demo_server()) as demo:
        await toolvet.register("demo", demo.url)
        define(toolvet, "brief", ("demo", "tool_0"))
        with toolvet.serve(), anyio.fail_after(BOUND):
            async with client_at(toolvet, "/mcp/sets/brief", toolvet.alice, "2026-07-28") as client:
                listed = await names(client)
                async with client.listen(tools_list_changed=True) as subscription:
                    tool_sets.delete_tool_set(toolvet.ctx, ADMIN, "brief")
                    heard = [event async for event in subscription]  # the stream ends with the endpoint
                with pytest.raises(MCPError, match="no tool set named 'brief'"):
                    await client.list_tools()
    assert listed == ["demo_tool_0"] and heard == []


async def test_an_unknown_or_removed_set_is_404_naming_it(toolvet: Toolvet):
    define(toolvet, "gone", ("demo", None))
    tool_sets.delete_tool_set(toolvet.ctx, ADMIN, "gone")
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    with toolvet.serve(), anyio.fail_after(BOUND):
        async with toolvet.http(toolvet.alice) as http:
            unknown = await http.post(f"{toolvet.base}/mcp/sets/nowhere", json=ping)
            removed = await http.post(f"{toolvet.base}/mcp/sets/gone", json=ping)
            malformed = await http.post(f"{toolvet.base}/mcp/sets/Not_A_Name", json=ping)
    for answer, name in ((unknown, "nowhere"), (removed, "gone"), (malformed, "Not_A_Name")):
        assert answer.status_code == 404
        assert answer.json()["error"]["code"] == -32600 and repr(name) in answer.json()["error"]["message"]


async def test_a_set_challenges_a_caller_without_a_token_with_its_own_metadata(toolvet: Toolvet):
    with modern_http_server(demo_server()) as demo:
        await toolvet.register("demo", demo.url)
        define(toolvet, "research", ("demo", None))
        with toolvet.serve(), anyio.fail_after(BOUND):
            async with httpx2.AsyncClient(timeout=BOUND) as http:
                initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                    "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
                answer = await http.post(f"{toolvet.base}/mcp/sets/research", json=initialize,
                                         headers={"Accept": "application/json, text/event-stream"})
                challenge = answer.headers.get("www-authenticate", "")
                pointed = challenge.split('resource_metadata="')[1].split('"')[0]
                resource = (await http.get(pointed)).json()
                bad = await http.post(f"{toolvet.base}/mcp/sets/research", json=initialize,
                                      headers={"Authorization": "Bearer tv_not-a-token"})
    assert answer.status_code == 401
    assert pointed == f"{toolvet.base}/.well-known/oauth-protected-resource/mcp/sets/research"
    assert resource["resource"] == f"{toolvet.base}/mcp/sets/research"
    assert bad.status_code == 401 and 'error="invalid_token"' in bad.headers["www-authenticate"]
