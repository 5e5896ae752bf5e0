"""A server-to-client request of a handshake-era session is answered through another replica: the
client's answer (a POST of a JSON-RPC response) reaches the replica that did not ask, which hands it
over the event bus to the one that did. Two apps in this process, each with its own bus, joined by
a relay that passes what one publishes to the other (what a fleet-wide bus does)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from starlette.types import Receive, Scope, Send

from tests.gateway.conftest import BOUND, Toolvet
from tests.gateway.lab import lab_server
from tests.gateway.test_approvals import accept, answering
from tests.upstreams import serve
from toolvet.api.app import create_app
from toolvet.services.context import Context
from toolvet.services.events import EventBus

pytestmark = pytest.mark.anyio


class LoopOf:
    """An ASGI wrapper that remembers the event loop its app runs on (uvicorn's, in its thread)."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.loop: asyncio.AbstractEventLoop | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        self.loop = asyncio.get_running_loop()
        await self.app(scope, receive, send)


async def relay(source: EventBus, loop: asyncio.AbstractEventLoop, target: Callable[[], EventBus]) -> None:
    async with source.subscribe() as inbox:
        async for event in inbox:
            if not event.get("relayed"):
                loop.call_soon_threadsafe(target().publish, {**event, "relayed": True})


class AnswersElsewhere(httpx2.AsyncBaseTransport):
    """Every request to the first app, except a client's answers (JSON-RPC responses), which go to the
    second: the worst a balancer without stickiness can do to a server-to-client request."""

    def __init__(self, second_port: int) -> None:
        self.second_port = second_port
        self.inner = httpx2.AsyncHTTPTransport()
        self.answers = 0

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        if request.method == "POST":
            message = json.loads(request.content)
            if isinstance(message, dict) and "method" not in message and "result" in message:
                self.answers += 1
                request.url = request.url.copy_with(port=self.second_port)
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self.inner.aclose()


async def test_an_elicitation_answered_through_the_other_replica_reaches_the_one_that_asked(toolvet: Toolvet):
    callback, asked = answering(accept("allow"))
    with lab_server() as (up, lab):
        await toolvet.register("lab", up.url)
        other = Context.open(toolvet.ctx.settings)
        first, second = LoopOf(create_app(toolvet.ctx)), LoopOf(create_app(other))
        try:
            with serve(first, "") as a, serve(second, "") as b:
                assert first.loop is not None and second.loop is not None
                buses: dict[str, Callable[[], EventBus]] = {
                    "a": lambda: toolvet.ctx.calls.events,  # type: ignore[union-attr]
                    "b": lambda: other.calls.events,  # type: ignore[union-attr]
                }
                relays: list[Any] = [
                    asyncio.run_coroutine_threadsafe(relay(buses["a"](), second.loop, buses["b"]), first.loop),
                    asyncio.run_coroutine_threadsafe(relay(buses["b"](), first.loop, buses["a"]), second.loop),
                ]
                balancer = AnswersElsewhere(int(b.url.rsplit(":", 1)[1]))
                try:
                    with anyio.fail_after(BOUND):
                        async with (httpx2.AsyncClient(transport=balancer, timeout=BOUND,
                                                       headers={"Authorization": f"Bearer {toolvet.alice}"}) as http,
                                    Client(streamable_http_client(f"{a.url}/mcp", http_client=http), mode="legacy",
                                           cache=None, elicitation_callback=callback) as client):
                            result = await client.call_tool("lab_echo", {"text": "one"})
                finally:
                    for future in relays:
                        future.cancel()
        finally:
            other.close()
    assert balancer.answers == 1 and len(asked) == 1
    assert result.structured_content == {"text": "one"}
    assert lab.calls == ["echo"]


