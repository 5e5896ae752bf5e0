"""The app answers /mcp ahead of its middleware stack, and everything else through it."""

from __future__ import annotations

import httpx2
import pytest

from toolvet.api.app import create_app
from toolvet.web import UnexpectedErrors

pytestmark = pytest.mark.anyio


async def test_the_exact_mcp_path_skips_the_stack_and_unexpected_errors_still_answer_500(ctx):
    app = create_app(ctx)
    assert isinstance(app.mcp_app, UnexpectedErrors)  # the gateway's gate, behind toolvet's error logging
    seen: list[str] = []

    async def gate(scope, receive, send):
        seen.append(scope["path"])
        if scope["method"] == "DELETE":
            raise RuntimeError("boom")
        await send({"type": "http.response.start", "status": 204, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    app.mcp_app = UnexpectedErrors(gate)
    async with httpx2.AsyncClient(transport=httpx2.ASGITransport(app=app), base_url="http://t") as client:
        assert (await client.post("/mcp", content=b"{}")).status_code == 204
        failed = await client.delete("/mcp")
        health = await client.get("/healthz")
    assert seen == ["/mcp", "/mcp"]
    assert failed.status_code == 500 and failed.json()["error"]["type"] == "internal"
    assert health.status_code == 200
