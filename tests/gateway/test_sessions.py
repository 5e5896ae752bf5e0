"""Handshake-era sessions are served by any process sharing the database: a client whose every request
goes to the other of two toolvet apps (round robin, no stickiness) lists, calls and ends its session."""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.gateway.conftest import ADMIN, BOUND, Toolvet
from tests.upstreams import modern_http_server, serve
from toolvet.api.app import create_app
from toolvet.services import preferences
from toolvet.services.context import Context

pytestmark = pytest.mark.anyio


class RoundRobin(httpx2.AsyncBaseTransport):
    """Sends each request to the next of several base URLs, as a balancer without stickiness does."""

    def __init__(self, bases: list[str]) -> None:
        self.targets = itertools.cycle([httpx2.URL(base) for base in bases])
        self.inner = httpx2.AsyncHTTPTransport()
        self.sent: list[tuple[str, int | None]] = []

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        target = next(self.targets)
        request.url = request.url.copy_with(port=target.port)
        self.sent.append((request.method, target.port))
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self.inner.aclose()


@asynccontextmanager
async def through(balancer: RoundRobin, url: str, token: str) -> AsyncIterator[Client]:
    headers = {"Authorization": f"Bearer {token}"}
    async with (httpx2.AsyncClient(transport=balancer, headers=headers, timeout=BOUND) as http,
                Client(streamable_http_client(url, http_client=http), mode="legacy", cache=None) as client):
        yield client


async def test_a_handshake_era_session_is_served_by_either_process(toolvet: Toolvet):
    with modern_http_server() as up:
        await toolvet.register("demo", up.url)
        preferences.set_permission_mode(toolvet.ctx, ADMIN, "alice", "allow")
        other = Context.open(toolvet.ctx.settings)
        try:
            with toolvet.serve(), serve(create_app(other), "") as second:
                balancer = RoundRobin([toolvet.base, second.url])
                with anyio.fail_after(BOUND):
                    async with through(balancer, toolvet.mcp, toolvet.alice) as client:
                        listed = [t.name for t in (await client.list_tools()).tools]
                        results = [await client.call_tool("demo_tool_0", {"a": i, "b": 1}) for i in range(4)]
        finally:
            other.close()
    assert "demo_tool_0" in listed
    assert [r.structured_content for r in results] == [{"result": i + 1} for i in range(4)]
    posts = {port for method, port in balancer.sent if method == "POST"}
    assert len(posts) == 2  # both processes answered the session's requests


async def test_a_session_id_is_only_good_as_signed_and_until_it_ends(toolvet: Toolvet):
    with modern_http_server() as up:
        await toolvet.register("demo", up.url)
        other = Context.open(toolvet.ctx.settings)
        try:
            with toolvet.serve(), serve(create_app(other), "") as second:
                init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                    "protocolVersion": "2025-11-25", "capabilities": {},
                    "clientInfo": {"name": "probe", "version": "1"}}}
                accept = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25"}
                ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
                async with toolvet.http(toolvet.alice) as http:
                    opened = await http.post(toolvet.mcp, json=init, headers=accept)
                    session = opened.headers["mcp-session-id"]
                    on_other = await http.post(f"{second.url}/mcp", json=ping,
                                               headers={**accept, "Mcp-Session-Id": session})
                    altered = session[:-1] + ("B" if session.endswith("A") else "A")
                    forged = await http.post(f"{second.url}/mcp", json=ping,
                                             headers={**accept, "Mcp-Session-Id": altered})
                async with toolvet.http(toolvet.ops) as http:
                    stranger = await http.post(f"{second.url}/mcp", json=ping,
                                               headers={**accept, "Mcp-Session-Id": session})
                async with toolvet.http(toolvet.alice) as http:
                    ended = await http.delete(f"{second.url}/mcp", headers={**accept, "Mcp-Session-Id": session})
                    third = Context.open(toolvet.ctx.settings)
                    try:
                        with serve(create_app(third), "") as fresh:  # a replica that never saw the session
                            after = await http.post(f"{fresh.url}/mcp", json=ping,
                                                    headers={**accept, "Mcp-Session-Id": session})
                    finally:
                        third.close()
        finally:
            other.close()
    assert opened.status_code == 200
    assert on_other.status_code == 200 and '"result"' in on_other.text
    assert forged.status_code == 404
    assert stranger.status_code == 404  # another credential: as if there were no such session
    assert ended.status_code == 200
    assert after.status_code == 404
