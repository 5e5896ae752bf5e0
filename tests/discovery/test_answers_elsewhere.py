"""A handshake-era server that answers a request on another stream of the session than the request's
own: the standing ``GET`` stream. The specification asks servers not to, but one that resumes answers
on whichever stream is open does (the conformance suite's SSE-retry server, when the standing stream
opens before it has answered), and the SDK's client takes an answer from any stream; so does toolvet's.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import anyio
import httpx2
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from tests.upstreams import serve
from toolvet.upstream.http import HttpChannel, http_client
from toolvet.upstream.protocol import NO_HOOKS, negotiate

pytestmark = pytest.mark.anyio

SESSION = "answers-elsewhere"


def answering_elsewhere() -> Starlette:
    """``tools/call`` opens an SSE answer that never carries the answer (and names no event, so there is
    nothing to resume); the answer goes out on the session's standalone ``GET`` stream."""
    answers: asyncio.Queue[dict[str, Any]] = asyncio.Queue()

    async def post(request: Request) -> Response:
        message = await request.json()
        method, headers = message.get("method"), {"mcp-session-id": SESSION}
        if method == "initialize":
            return JSONResponse({"jsonrpc": "2.0", "id": message["id"], "result": {
                "protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                "serverInfo": {"name": "elsewhere", "version": "1"}}}, headers=headers)
        if "id" not in message:
            return Response(status_code=202)
        if method != "tools/call":
            return JSONResponse({"jsonrpc": "2.0", "id": message["id"], "result": {}}, headers=headers)
        answers.put_nowait({"jsonrpc": "2.0", "id": message["id"],
                         "result": {"content": [{"type": "text", "text": "answered on the GET stream"}]}})

        async def silent() -> AsyncIterator[bytes]:
            yield b": the answer comes on the other stream\n\n"
            await anyio.sleep(30)

        return StreamingResponse(silent(), media_type="text/event-stream", headers=headers)

    async def get(request: Request) -> Response:
        async def events() -> AsyncIterator[bytes]:
            yield b": open\n\n"
            while True:
                message = await answers.get()
                yield f"event: message\ndata: {json.dumps(message)}\n\n".encode()

        return StreamingResponse(events(), media_type="text/event-stream", headers={"mcp-session-id": SESSION})

    return Starlette(routes=[Route("/mcp", post, methods=["POST"]), Route("/mcp", get, methods=["GET"])])


async def test_an_answer_on_the_standing_stream_answers_its_request() -> None:
    with serve(answering_elsewhere()) as server:
        async with http_client(timeout=httpx2.Timeout(10)) as http, anyio.create_task_group() as tg:
            channel = HttpChannel(http, server.url, {}, timeout=httpx2.Timeout(10), max_response_bytes=1 << 20)
            session = await negotiate(channel, handshake_first=True)
            tg.start_soon(channel.standing, NO_HOOKS)
            with anyio.fail_after(5):
                while not any(r.method == "GET" for r in server.requests):  # the standing stream is open
                    await anyio.sleep(0.01)
                result = await session.request("tools/call", {"name": "any", "arguments": {}})
            tg.cancel_scope.cancel()
    assert result["content"][0]["text"] == "answered on the GET stream"
    assert channel.reply_text is not None and b"answered on the GET stream" in channel.reply_text
