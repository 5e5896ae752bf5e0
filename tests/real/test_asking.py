"""A FastMCP 4 server's questions to the user reach the client behind toolvet, and its answers reach the
server, as with a client of the server itself: ``confirm`` asks mid-call (``ctx.elicit``, a handshake-era
server-to-client request); ``transfer`` is a 2026-07-28 guard tool, whose first answer is the question
(an ``InputRequiredResult``) and whose retry, carrying the client's answer and the tool's state, is
answered with the outcome; ``vault://note`` and the ``careful`` prompt are a guard resource and a guard
prompt."""

from __future__ import annotations

import anyio
import pytest
from mcp.shared.exceptions import MCPError

from tests.real.conftest import BOUND, User, World, called_both_ways
from tests.real.references import direct_client_with
from toolvet.gateway.federation import namespaced

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("name", ["fastmcp-stdio", "fastmcp-http", "fastmcp-sse"])
async def test_a_question_asked_mid_call_reaches_a_handshake_era_client_through_toolvet(
    world: World, name: str
) -> None:
    world.discovered(name)
    expected, got, shown = await called_both_ways(world, name, "legacy", {"value": True}, "confirm",
                                                   {"action": "deploy"})
    assert expected["content"] == [{"type": "text", "text": "deploy: confirmed"}]
    assert got == expected and shown == ["Go ahead with deploy?"]


@pytest.mark.parametrize("answer", [True, False])
@pytest.mark.parametrize("name", ["fastmcp-stdio", "fastmcp-http"])  # SSE speaks the handshake era only
async def test_a_guard_tools_question_and_the_users_answer_pass_through_toolvet_at_2026_07_28(
    world: World, name: str, answer: bool
) -> None:
    world.discovered(name)
    expected, got, shown = await called_both_ways(world, name, "2026-07-28", {"approve": answer}, "transfer",
                                                   {"amount": 40})
    outcome = "transferred" if answer else "not transferred"
    assert expected["content"] == [{"type": "text", "text": f"amount=40: {outcome}"}]
    assert got == expected and shown == ["Transfer 40 EUR?"]


@pytest.mark.parametrize("name", ["fastmcp-stdio", "fastmcp-http"])
async def test_a_guard_resources_and_a_guard_prompts_question_pass_through_toolvet_at_2026_07_28(
    world: World, name: str
) -> None:
    world.discovered(name)
    direct, through = User({"approve": True}), User({"approve": True})
    with anyio.fail_after(BOUND):
        async with direct_client_with(world.reference(name).reach, "2026-07-28", direct) as own:
            note = await own.read_resource("vault://note")
            prompt = await own.get_prompt("careful", {"topic": "keys"})
        async with world.toolvet.client(world.toolvet.alice, elicitation_callback=through) as client:
            # Each of the three FastMCP servers lists vault://note: toolvet serves each copy under its own URI.
            got_note = await client.read_resource(namespaced("vault://note", name))
            got_prompt = await client.get_prompt(f"{name}_careful", {"topic": "keys"})
    assert [c.text for c in note.contents] == ["the note says 42"]
    assert [c.text for c in got_note.contents] == ["the note says 42"]
    assert [m.content.text for m in got_prompt.messages] == [m.content.text for m in prompt.messages] == [
        "Be careful about keys."]
    assert through.shown == direct.shown == ["Show the note?", "Use the careful prompt about keys?"]


async def test_a_guards_question_to_a_client_that_declared_no_elicitation_is_refused_saying_so(
    world: World,
) -> None:
    world.discovered("fastmcp-stdio")
    with anyio.fail_after(BOUND):
        async with world.toolvet.client(world.toolvet.alice) as client:
            with pytest.raises(MCPError, match="asked for elicitation, which the client behind toolvet did not"):
                await client.read_resource(namespaced("vault://note", "fastmcp-stdio"))


async def test_a_guard_tool_called_over_rest_fails_naming_the_question_nobody_could_answer(world: World) -> None:
    world.discovered("fastmcp-stdio")
    with anyio.fail_after(BOUND):
        async with world.toolvet.http(world.toolvet.alice) as http:
            answer = await http.post(f"{world.toolvet.base}/api/v1/calls", json={
                "server_type": "fastmcp-stdio", "tool_name": "transfer", "arguments": {"amount": 40}})
    body = answer.json()
    assert answer.status_code == 200, body
    assert body["status"] == "failed"
    assert "asked for input first (elicitation/create 'Transfer 40 EUR?'), which this caller cannot give" in (
        body["error"])
    assert body["result"]["isError"] is True  # the call's result says the same, not the server's question
