"""toolvet's own operations as MCP tools (serverType ``toolvet``): listed with every field of their definitions,
callable, and answering structuredContent valid against their outputSchema."""

from __future__ import annotations

from typing import Any

import anyio
import mcp.types as types
import pytest
from jsonschema import Draft202012Validator

from tests.gateway.conftest import BOUND, Toolvet
from tests.gateway.lab import lab_server

pytestmark = pytest.mark.anyio


async def allow(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
    return types.ElicitResult(action="accept", content={"decision": "allow"})


def valid(tool: types.Tool, result: types.CallToolResult) -> Any:
    assert not result.is_error, result.content
    assert tool.output_schema is not None
    Draft202012Validator(tool.output_schema).validate(result.structured_content)
    return result.structured_content


async def test_host_tools_carry_the_seed_fields(toolvet: Toolvet):
    with toolvet.serve(), anyio.fail_after(BOUND):
        async with toolvet.client(toolvet.alice) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
    listed = tools["toolvet_list_tools"]
    assert listed.title == "List tools" and listed.description and listed.input_schema["type"] == "object"
    assert listed.annotations is not None and listed.annotations.read_only_hint is True
    assert listed.icons is not None and listed.icons[0].src.startswith("data:image/svg+xml;base64,")
    assert listed.meta is not None and listed.meta["ui"] == {"visibility": ["model", "app"]}
    assert listed.meta["securitySchemes"] == [{"type": "oauth2", "scopes": []}]
    assert tools["toolvet_discover_server"].annotations.read_only_hint is False


async def test_read_only_host_tools_run_without_approval_and_answer_valid_structured_content(
    toolvet: Toolvet,
):
    with lab_server() as (up, _):
        await toolvet.register("lab", up.url)
        with toolvet.serve(), anyio.fail_after(BOUND):
            async with toolvet.client(toolvet.alice) as consumer, toolvet.client(toolvet.ops) as ops:
                tools = {t.name: t for t in (await consumer.list_tools()).tools}
                servers = valid(
                    tools["toolvet_list_servers"], await consumer.call_tool("toolvet_list_servers", {})
                )
                listed = valid(
                    tools["toolvet_list_tools"], await consumer.call_tool("toolvet_list_tools", {})
                )
                diff = valid(
                    tools["toolvet_tool_diff"],
                    await ops.call_tool("toolvet_tool_diff", {"server": "lab", "tool": "echo"}),
                )
                refused = await consumer.call_tool("toolvet_tool_diff", {"server": "lab", "tool": "echo"})
    assert [s["name"] for s in servers["servers"]] == ["lab"] and servers["servers"][0]["tool_count"] == 5
    assert {t["name"] for t in listed["tools"]} == {"echo", "files", "numbers", "open", "widget"}
    assert {t["review_state"] for t in listed["tools"]} == {"unreviewed"}
    assert diff["server"] == "lab" and diff["review_state"] == "unreviewed"
    assert refused.is_error and "consumer" in refused.content[0].text


async def test_discover_server_is_for_operators_and_asks_for_approval(toolvet: Toolvet):
    with lab_server() as (up, _):
        await toolvet.register("lab", up.url)
        with toolvet.serve(), anyio.fail_after(BOUND):
            async with (
                toolvet.client(toolvet.ops, mode="legacy", elicitation_callback=allow) as ops,
                toolvet.client(toolvet.alice, mode="legacy", elicitation_callback=allow) as consumer,
            ):
                tool = {t.name: t for t in (await ops.list_tools()).tools}["toolvet_discover_server"]
                ran = valid(tool, await ops.call_tool("toolvet_discover_server", {"server": "lab"}))
                refused = await consumer.call_tool("toolvet_discover_server", {"server": "lab"})
    assert ran["status"] == "ok" and ran["unchanged"] == 5
    assert refused.is_error and "operators" in refused.content[0].text
