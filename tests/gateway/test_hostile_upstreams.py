"""A hostile upstream hurts only its own call: an endless SSE line, JSON nested past the limit and a
compressed answer each fail that call with a clear reason, while other clients' calls go on."""

from __future__ import annotations

import gc
import json
import time
from collections.abc import Iterator
from typing import Any

import anyio
import pytest
from starlette.types import Receive, Scope, Send

from tests.gateway.conftest import ADMIN, BOUND, Toolvet
from tests.upstreams import serve
from toolvet.services import calls, preferences

pytestmark = pytest.mark.anyio

TOOLS = [{"name": name, "description": f"{name} behaviour", "inputSchema": {"type": "object"}}
         for name in ("ok", "flood", "deep", "gzip")]
FLOOD_BYTES = 200 * 1024 * 1024
CHUNK = b"x" * (1024 * 1024)


def hostile_app() -> Any:
    """A handshake-era MCP server, raw: ``ok`` answers at once; ``flood`` answers an SSE event whose one
    data line never ends (200 MB); ``deep`` answers JSON nested 100,000 deep; ``gzip`` answers compressed."""

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        body = b""
        more = True
        while more:
            message = await receive()
            body += message.get("body", b"")
            more = message.get("more_body", False)
        request = json.loads(body) if body else {}
        method, ident = request.get("method"), request.get("id")
        headers = [(b"content-type", b"application/json"), (b"mcp-session-id", b"s1")]
        if ident is None:
            await send({"type": "http.response.start", "status": 202, "headers": []})
            await send({"type": "http.response.body", "body": b""})
            return
        if method == "initialize":
            result: Any = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                           "serverInfo": {"name": "hostile", "version": "1"}}
        elif method == "tools/list":
            result = {"tools": TOOLS}
        elif method == "tools/call" and request["params"]["name"] == "flood":
            await send({"type": "http.response.start", "status": 200,
                        "headers": [(b"content-type", b"text/event-stream")]})
            await send({"type": "http.response.body", "body": b"data: ", "more_body": True})
            for _ in range(FLOOD_BYTES // len(CHUNK)):
                await send({"type": "http.response.body", "body": CHUNK, "more_body": True})
            await send({"type": "http.response.body", "body": b"\n\n"})
            return
        elif method == "tools/call" and request["params"]["name"] == "deep":
            deep = b'{"jsonrpc":"2.0","id":%d,"result":{"content":' % ident + b"[" * 100_000 + b"]" * 100_000 + b"}}"
            await send({"type": "http.response.start", "status": 200, "headers": headers})
            await send({"type": "http.response.body", "body": deep})
            return
        elif method == "tools/call" and request["params"]["name"] == "gzip":
            await send({"type": "http.response.start", "status": 200,
                        "headers": [*headers, (b"content-encoding", b"gzip")]})
            await send({"type": "http.response.body", "body": b"\x1f\x8b not really"})
            return
        elif method == "tools/call":
            result = {"content": [{"type": "text", "text": "fine"}]}
        else:
            error = {"jsonrpc": "2.0", "id": ident, "error": {"code": -32601, "message": "Method not found"}}
            await send({"type": "http.response.start", "status": 200, "headers": headers})
            await send({"type": "http.response.body", "body": json.dumps(error).encode()})
            return
        answer = json.dumps({"jsonrpc": "2.0", "id": ident, "result": result}).encode()
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": answer})

    return app


def _text(result: Any) -> str:
    return str(result.content[0].text)


@pytest.fixture
def heap_set_aside() -> Iterator[None]:
    """The test process's heap, grown by every test that ran before, set aside from the collector: its
    full passes (up to a second late in a whole run) are not what the latencies below measure."""
    gc.collect()
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


@pytest.mark.usefixtures("heap_set_aside")
async def test_an_endless_sse_line_fails_its_own_call_while_other_calls_go_on(toolvet: Toolvet):
    with serve(hostile_app()) as up:
        await toolvet.register("hostile", up.url)
        preferences.set_permission_mode(toolvet.ctx, ADMIN, "alice", "allow")
        with toolvet.serve():
            latencies: list[float] = []
            done = anyio.Event()
            hostile: Any = None
            flood_took = 0.0
            async with toolvet.client(toolvet.alice) as flooded, toolvet.client(toolvet.alice) as healthy:
                async def flood() -> None:
                    nonlocal hostile, flood_took
                    began = time.perf_counter()
                    try:
                        hostile = await flooded.call_tool("hostile_flood", {})
                    finally:
                        flood_took = time.perf_counter() - began
                        done.set()

                with anyio.fail_after(BOUND):
                    # One call first: what a first call costs (its session, the gateway's first reads) is
                    # not what is measured here, only how calls fare while the flood is read.
                    assert _text(await healthy.call_tool("hostile_ok", {})) == "fine"
                    async with anyio.create_task_group() as tg:
                        tg.start_soon(flood)
                        while not done.is_set() or len(latencies) < 5:
                            began = time.perf_counter()
                            result = await healthy.call_tool("hostile_ok", {})
                            latencies.append(time.perf_counter() - began)
                            assert _text(result) == "fine"
                            await anyio.sleep(0.1)
    assert hostile is not None and hostile.is_error
    assert "byte limit" in _text(hostile) and "TOOLVET_MAX_EVENT_BYTES" in _text(hostile)
    # Every healthy call answered while the flood was read (a frozen loop would hold them for seconds).
    assert max(latencies) < 0.5, latencies
    assert flood_took < toolvet.ctx.settings.call_timeout + 1


@pytest.mark.parametrize(("tool", "reason"), [
    ("deep", "deeper than 64 levels"),
    ("gzip", "compressed answers are refused"),
])
async def test_a_hostile_answer_fails_its_call_with_the_reason_and_the_call_is_recorded(
    toolvet: Toolvet, tool: str, reason: str
):
    with serve(hostile_app()) as up:
        await toolvet.register("hostile", up.url)
        preferences.set_permission_mode(toolvet.ctx, ADMIN, "alice", "allow")
        with toolvet.serve(), anyio.fail_after(BOUND):
            async with toolvet.client(toolvet.alice) as client:
                result = await client.call_tool(f"hostile_{tool}", {})
                after = await client.call_tool("hostile_ok", {})
            while not (page := calls.list_calls(toolvet.ctx, ADMIN, status="failed")).items:
                await anyio.sleep(0.05)
    assert result.is_error and reason in _text(result)
    assert _text(after) == "fine"
    assert page.items[0].tool_name == tool and reason in (page.items[0].error or "")
