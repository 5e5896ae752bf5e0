"""Tasks pass through toolvet to server-everything, whose ``simulate-research-query`` can only run as one.

A handshake-era client (raw JSON-RPC: the Python SDK's client has no tasks) calls it through ``/mcp``
with a ``task`` param, gets the server's task, follows it with ``tasks/get``, ``tasks/list`` and
``tasks/result``, and cancels another; a second caller cannot reach the first one's task.
"""

from __future__ import annotations

import anyio
import pytest

from tests.gateway.conftest import ADMIN
from tests.raw_client import RawError, raw_session
from tests.real.conftest import BOUND, World
from toolvet.schemas.calls import CallStatus
from toolvet.schemas.tools import TokenCreate
from toolvet.services import calls, preferences, tokens

pytestmark = pytest.mark.anyio

TOOL = "everything-stdio_simulate-research-query"


async def test_a_task_only_tool_runs_as_a_task_routed_to_its_server(world: World) -> None:
    world.discovered("everything-stdio")
    stored = {tool["name"]: tool for tool in world.stored("everything-stdio")}
    assert stored["simulate-research-query"]["execution"] == {"taskSupport": "required"}  # as the server lists it
    toolvet = world.toolvet
    with anyio.fail_after(4 * BOUND):
        async with raw_session(toolvet.mcp, toolvet.alice) as client:
            listed = {tool["name"]: tool for tool in (await client.request("tools/list"))["tools"]}
            assert listed[TOOL]["execution"] == {"taskSupport": "required"}
            created = await client.request("tools/call", {"name": TOOL, "arguments": {"topic": "tides"},
                                                          "task": {"ttl": 60000}})
            task_id = created["task"]["taskId"]
            assert created["task"]["status"] == "working"
            got = await client.request("tasks/get", {"taskId": task_id})
            assert got["taskId"] == task_id and got["status"] in ("working", "completed")
            assert task_id in [task["taskId"] for task in (await client.request("tasks/list"))["tasks"]]
            result = await client.request("tasks/result", {"taskId": task_id})
            assert not result.get("isError") and "tides" in result["content"][0]["text"]
            assert (await client.request("tasks/get", {"taskId": task_id}))["status"] == "completed"

            other = await client.request("tools/call", {"name": TOOL, "arguments": {"topic": "reefs"},
                                                        "task": {"ttl": 60000}})
            cancelled = await client.request("tasks/cancel", {"taskId": other["task"]["taskId"]})
            assert cancelled["status"] == "cancelled"
    with anyio.fail_after(BOUND):  # the record is written behind the answer
        while not (made := [c for c in calls.list_calls(toolvet.ctx, ADMIN, status=None, limit=1000).items
                            if (c.result or {}).get("task", {}).get("taskId") == task_id]):
            await anyio.sleep(0.05)
    assert (made[0].status, made[0].user, made[0].tool_name) == (CallStatus.DONE, "alice", "simulate-research-query")


async def test_another_callers_task_is_unknown_to_it(world: World) -> None:
    world.discovered("everything-stdio")
    toolvet = world.toolvet
    preferences.set_permission_mode(toolvet.ctx, ADMIN, "dave", "allow")
    dave = tokens.create_token(toolvet.ctx, ADMIN, TokenCreate(role="consumer", user="dave", name="dave")).token
    with anyio.fail_after(4 * BOUND):
        async with raw_session(toolvet.mcp, toolvet.alice) as alice, raw_session(toolvet.mcp, dave) as other:
            created = await alice.request("tools/call", {"name": TOOL, "arguments": {"topic": "dunes"},
                                                         "task": {"ttl": 60000}})
            task_id = created["task"]["taskId"]
            with pytest.raises(RawError, match="Unknown task"):
                await other.request("tasks/get", {"taskId": task_id})
            with pytest.raises(RawError, match="Unknown task"):
                await other.request("tasks/cancel", {"taskId": task_id})
            assert (await other.request("tasks/list"))["tasks"] == []
            await alice.request("tasks/cancel", {"taskId": task_id})
