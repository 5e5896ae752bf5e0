"""On ``/mcp`` a token past its rate limit gets HTTP 429 with Retry-After and a JSON-RPC error."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.gateway.conftest import open_toolvet
from toolvet.gateway.access import RATE_LIMITED
from toolvet.services.rate_limit import RateLimiter

pytestmark = pytest.mark.anyio


async def test_mcp_refuses_a_token_past_its_limit_with_a_json_rpc_error(tmp_path: Path):
    with open_toolvet(tmp_path, rate_limit_per_minute=2) as toolvet:
        toolvet.ctx.rate_limiter = RateLimiter(toolvet.ctx, clock=lambda: 1_800_000_015.0)
        ping = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "probe", "version": "1"}}}
        headers = {"Accept": "application/json, text/event-stream"}
        with toolvet.serve():
            async with toolvet.http(toolvet.alice) as http:
                answered = [(await http.post(toolvet.mcp, json=ping, headers=headers)).status_code for _ in range(2)]
                refused = await http.post(toolvet.mcp, json=ping, headers=headers)
            async with toolvet.http(toolvet.ops) as http:
                other = await http.post(toolvet.mcp, json=ping, headers=headers)
    assert answered == [200, 200]
    assert refused.status_code == 429 and refused.headers["Retry-After"] == "45"
    assert refused.json()["error"]["code"] == RATE_LIMITED
    assert other.status_code == 200
