"""Calls that need approval through ``/mcp``: asked by elicitation where the client can answer, else
pending for an approver over REST while the MCP call waits."""

from __future__ import annotations

import json
from typing import Any

import anyio
import mcp.types as types
import pytest

from tests.gateway.conftest import BOUND, Toolvet
from tests.gateway.lab import lab_server

pytestmark = pytest.mark.anyio


def answering(*answers: types.ElicitResult) -> tuple[Any, list[str]]:
    """An elicitation callback giving ``answers`` in turn, and the messages it was asked."""
    asked: list[str] = []

    async def callback(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        return answers[len(asked) - 1]

    return callback, asked


def accept(decision: str) -> types.ElicitResult:
    return types.ElicitResult(action="accept", content={"decision": decision})


ERAS = pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])


@ERAS
async def test_an_elicitation_accepted_with_allow_runs_the_call_once(toolvet: Toolvet, mode: str):
    """Handshake era: an elicitation request on the session; 2026-07-28: an InputRequiredResult the
    SDK's client answers with its elicitation callback and a retry carrying the state."""
    callback, asked = answering(accept("allow"), accept("allow"))
    with lab_server() as (up, lab):
        await toolvet.register("lab", up.url)
        with toolvet.serve(), anyio.fail_after(BOUND):
            async with toolvet.client(toolvet.alice, mode=mode, elicitation_callback=callback) as client:
                first = await client.call_tool("lab_echo", {"text": "one"})
                second = await client.call_tool("lab_echo", {"text": "two"})
    assert first.structured_content == {"text": "one"} and second.structured_content == {"text": "two"}
    assert len(asked) == 2 and asked[0].startswith("Allow lab/echo with these arguments?")
    assert lab.calls == ["echo", "echo"]


@ERAS
async def test_an_elicitation_accepted_with_always_stops_asking_for_that_tool(toolvet: Toolvet, mode: str):
    callback, asked = answering(accept("always"))
    with lab_server() as (up, lab):
        await toolvet.register("lab", up.url)
        with toolvet.serve(), anyio.fail_after(BOUND):
            async with toolvet.client(toolvet.alice, mode=mode, elicitation_callback=callback) as client:
                first = await client.call_tool("lab_echo", {"text": "one"})
                second = await client.call_tool("lab_echo", {"text": "two"})
    assert not first.is_error and not second.is_error
    assert len(asked) == 1 and lab.calls == ["echo", "echo"]


@pytest.mark.parametrize(
    "answer", [types.ElicitResult(action="decline"), types.ElicitResult(action="cancel"), accept("deny")]
)
@ERAS
async def test_an_elicitation_declined_denies_the_call_and_nothing_goes_upstream(toolvet: Toolvet, answer, mode: str):
    callback, asked = answering(answer)
    with lab_server() as (up, lab):
        await toolvet.register("lab", up.url)
        with toolvet.serve(), anyio.fail_after(BOUND):
            async with toolvet.client(toolvet.alice, mode=mode, elicitation_callback=callback) as client:
                result = await client.call_tool("lab_echo", {"text": "one"})
    assert result.is_error and "declined" in result.content[0].text
    assert len(asked) == 1 and lab.calls == []


async def pending_call_id(lines: Any) -> str:
    async for line in lines:
        if line.startswith("data: "):
            event = json.loads(line[len("data: ") :])
            if event["type"] == "tool-call-pending":
                return str(event["callId"])
    raise AssertionError("the event stream ended without a pending call")


@pytest.mark.parametrize("mode", ["2026-07-28", "legacy"])
async def test_a_pending_call_approved_over_rest_answers_the_waiting_mcp_call(toolvet: Toolvet, mode):
    with lab_server() as (up, lab):
        await toolvet.register("lab", up.url)
        with toolvet.serve(), anyio.fail_after(BOUND):
            results: list[types.CallToolResult] = []
            async with (
                toolvet.http(toolvet.ops) as ops,
                toolvet.client(toolvet.alice, mode=mode) as client,
                ops.stream("GET", f"{toolvet.base}/api/v1/events") as events,
            ):
                lines = events.aiter_lines()
                assert (await lines.__anext__()).startswith(":")  # subscribed

                async def make_call() -> None:
                    results.append(await client.call_tool("lab_echo", {"text": "waited"}))

                async with anyio.create_task_group() as tg:
                    tg.start_soon(make_call)
                    call_id = await pending_call_id(lines)
                    approved = await ops.post(f"{toolvet.base}/api/v1/calls/{call_id}/approve", json={})
    assert approved.status_code == 200, approved.text
    assert results[0].structured_content == {"text": "waited"} and lab.calls == ["echo"]


async def test_a_call_still_pending_after_the_wait_says_how_to_approve_it(toolvet: Toolvet):
    toolvet.ctx.settings = toolvet.ctx.settings.model_copy(update={"approval_wait": 0.0})
    with lab_server() as (up, lab):
        await toolvet.register("lab", up.url)
        with toolvet.serve(), anyio.fail_after(BOUND):
            async with toolvet.client(toolvet.alice) as client:
                result = await client.call_tool("lab_echo", {"text": "later"})
    text = result.content[0].text
    assert result.is_error and "waiting for an approver" in text
    assert "POST /api/v1/calls/" in text and "/approve" in text and " before " in text
    assert lab.calls == []


async def test_another_users_request_state_decides_nothing(toolvet: Toolvet):
    """The state of a 2026-07-28 approval round names a pending call; only that call's user (or an
    approver) may answer it, and only for the tool it was made for."""
    from mcp.shared.exceptions import MCPError

    callback, _asked = answering(accept("allow"))
    with lab_server() as (up, lab):
        await toolvet.register("lab", up.url)
        with toolvet.serve(), anyio.fail_after(BOUND):
            async with toolvet.client(toolvet.alice, elicitation_callback=callback) as alice:
                first = await alice.session.call_tool("lab_echo", {"text": "one"}, allow_input_required=True)
                assert isinstance(first, types.InputRequiredResult) and first.request_state
                yes = {"toolvet.approval": accept("allow")}
                async with toolvet.client(toolvet.scoped, elicitation_callback=callback) as carol:
                    with pytest.raises(MCPError, match="unknown request state"):
                        await carol.session.call_tool("lab_echo", {"text": "one"}, input_responses=yes,
                                                      request_state=first.request_state)
                with pytest.raises(MCPError, match="another tool"):
                    await alice.session.call_tool("lab_numbers", {"text": "one"}, input_responses=yes,
                                                  request_state=first.request_state)
                done = await alice.session.call_tool("lab_echo", {"text": "one"}, input_responses=yes,
                                                     request_state=first.request_state)
    assert done.structured_content == {"text": "one"}
    assert lab.calls == ["echo"]
