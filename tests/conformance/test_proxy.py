"""The bearer proxy in front of the conformance server, seen by the SDK's own client."""

from __future__ import annotations

from typing import Any

import anyio
import mcp.types as types
import pytest
from mcp import Client

from tests.conformance.proxy import bearer_proxy_server
from tests.conformance.server import conformance_server

pytestmark = pytest.mark.anyio
BOUND = 30.0


async def test_an_sse_answer_that_waits_on_the_client_streams_through_the_proxy():
    """The elicitation request reaches the client only if the proxy relays the call's SSE stream as it
    comes: the stream cannot end before the client has answered it."""
    asked: list[str] = []

    async def answer(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"username": "ada", "email": "ada@example.com"})

    with conformance_server() as server, bearer_proxy_server(server.url, "secret") as proxy:
        with anyio.fail_after(BOUND):
            async with Client(proxy.url, mode="legacy", elicitation_callback=answer) as client:
                result = await client.call_tool("test_elicitation", {"message": "Who are you?"})
    assert asked == ["Who are you?"]
    assert isinstance(result.content[0], types.TextContent) and "action=accept" in result.content[0].text
    assert {r.headers.get("authorization") for r in server.requests} == {"Bearer secret"}
