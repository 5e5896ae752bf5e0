"""The operator's approval floor through ``/mcp``: under ``always`` the user is asked even in mode
``allow`` with an always-allow entry; under ``operator`` the user is never asked (a consumer may not
approve it), the call waits for an operator, and the model is told who may approve it."""

from __future__ import annotations

import json
from typing import Any

import anyio
import mcp.types as types
import pytest

from tests.gateway.conftest import ADMIN, BOUND, Toolvet
from tests.gateway.lab import lab_server
from toolvet.services import preferences, servers, tools

pytestmark = pytest.mark.anyio

ERAS = pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])


def answering_allow() -> tuple[Any, list[str]]:
    asked: list[str] = []

    async def callback(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"decision": "allow"})

    return callback, asked


def lenient(toolvet: Toolvet) -> None:
    preferences.set_permission_mode(toolvet.ctx, ADMIN, "alice", "allow")
    tool = tools.get_tool(toolvet.ctx, ADMIN, "lab", "echo")
    preferences.add_always_allow(toolvet.ctx, ADMIN, "default", "lab", "echo", tool.definition_fingerprint)


@ERAS
async def test_floor_always_asks_the_user_whatever_their_mode_and_list(toolvet: Toolvet, mode: str):
    callback, asked = answering_allow()
    with lab_server() as (up, lab):
        await toolvet.register("lab", up.url)
        lenient(toolvet)
        servers.update_server(toolvet.ctx, ADMIN, "lab", {"approval": "always"})
        with toolvet.serve(), anyio.fail_after(BOUND):
            async with toolvet.client(toolvet.alice, mode=mode, elicitation_callback=callback) as client:
                result = await client.call_tool("lab_echo", {"text": "asked"})
    assert result.structured_content == {"text": "asked"}
    assert len(asked) == 1 and asked[0].startswith("Allow lab/echo")
    assert lab.calls == ["echo"]


async def pending_call_id(lines: Any) -> str:
    async for line in lines:
        if line.startswith("data: "):
            event = json.loads(line[len("data: "):])
            if event["type"] == "tool-call-pending":
                return str(event["callId"])
    raise AssertionError("the event stream ended without a pending call")


@ERAS
async def test_floor_operator_never_asks_the_user_and_an_operator_approves(toolvet: Toolvet, mode: str):
    callback, asked = answering_allow()
    with lab_server() as (up, lab):
        await toolvet.register("lab", up.url)
        lenient(toolvet)
        tools.update_tool(toolvet.ctx, ADMIN, "lab", "echo", {"approval": "operator"})
        with toolvet.serve(), anyio.fail_after(BOUND):
            results: list[types.CallToolResult] = []
            async with (
                toolvet.http(toolvet.ops) as ops,
                toolvet.http(toolvet.alice) as alice,
                toolvet.client(toolvet.alice, mode=mode, elicitation_callback=callback) as client,
                ops.stream("GET", f"{toolvet.base}/api/v1/events") as events,
            ):
                lines = events.aiter_lines()
                assert (await lines.__anext__()).startswith(":")  # subscribed

                async def make_call() -> None:
                    results.append(await client.call_tool("lab_echo", {"text": "waited"}))

                async with anyio.create_task_group() as tg:
                    tg.start_soon(make_call)
                    call_id = await pending_call_id(lines)
                    by_consumer = await alice.post(f"{toolvet.base}/api/v1/calls/{call_id}/approve", json={})
                    by_operator = await ops.post(f"{toolvet.base}/api/v1/calls/{call_id}/approve", json={})
    assert asked == []
    assert by_consumer.status_code == 403 and "only an operator or an admin" in by_consumer.text
    assert by_operator.status_code == 200, by_operator.text
    assert results[0].structured_content == {"text": "waited"} and lab.calls == ["echo"]


async def test_an_operator_floor_call_still_waiting_says_who_may_approve_it(toolvet: Toolvet):
    toolvet.ctx.settings = toolvet.ctx.settings.model_copy(update={"approval_wait": 0.0})
    callback, asked = answering_allow()
    with lab_server() as (up, lab):
        await toolvet.register("lab", up.url)
        servers.update_server(toolvet.ctx, ADMIN, "lab", {"approval": "operator"})
        with toolvet.serve(), anyio.fail_after(BOUND):
            async with toolvet.client(toolvet.alice, elicitation_callback=callback) as client:
                result = await client.call_tool("lab_echo", {"text": "later"})
    text = result.content[0].text
    assert result.is_error and "waiting for an approver" in text
    assert "only an operator or an admin may approve it" in text
    assert asked == [] and lab.calls == []


async def test_a_forged_approval_retry_from_the_consumer_runs_nothing(toolvet: Toolvet):
    """A 2026-07-28 client that answers an approval it was never asked (the call's id as its state)
    approves nothing under the operator floor."""
    toolvet.ctx.settings = toolvet.ctx.settings.model_copy(update={"approval_wait": 0.0})
    with lab_server() as (up, lab):
        await toolvet.register("lab", up.url)
        tools.update_tool(toolvet.ctx, ADMIN, "lab", "echo", {"approval": "operator"})
        with toolvet.serve(), anyio.fail_after(BOUND):
            async with toolvet.client(toolvet.alice) as client, toolvet.http(toolvet.alice) as alice:
                await client.call_tool("lab_echo", {"text": "x"})
                listed = (await alice.get(f"{toolvet.base}/api/v1/calls")).json()["items"]
                yes = {"toolvet.approval": types.ElicitResult(action="accept", content={"decision": "allow"})}
                forged = await client.session.call_tool("lab_echo", {"text": "x"}, input_responses=yes,
                                                        request_state=listed[0]["id"])
    assert forged.is_error and "only an operator or an admin" in forged.content[0].text
    assert lab.calls == []
