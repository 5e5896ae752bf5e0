"""A FastMCP 4 server's progress and log messages reach the client behind toolvet as they reach a
client of the server itself: its ``count`` tool reports each step through FastMCP's ``Context``, over
stdio, streamable HTTP and legacy HTTP+SSE, and the Python SDK client calls it through ``/mcp`` in
both eras."""

from __future__ import annotations

from typing import Any

import anyio
import mcp.types as types
import pytest

from tests.real.conftest import BOUND, World, canonical, sdk_result
from tests.real.references import direct_client

pytestmark = pytest.mark.anyio

FASTMCP = ["fastmcp-stdio", "fastmcp-http", "fastmcp-sse"]
ERAS = ["2026-07-28", "legacy"]


class Heard:
    """Progress a call reported, and the log messages the client was sent."""

    def __init__(self) -> None:
        self.progress: list[tuple[float, float | None, str | None]] = []
        self.logs: list[Any] = []

    async def on_progress(self, progress: float, total: float | None, message: str | None) -> None:
        self.progress.append((progress, total, message))

    async def on_log(self, params: types.LoggingMessageNotificationParams) -> None:
        self.logs.append(params.data)


@pytest.mark.parametrize("mode", ERAS)
@pytest.mark.parametrize("name", FASTMCP)
async def test_a_fastmcp_tools_progress_reaches_the_client_through_toolvet_as_it_does_directly(
    world: World, name: str, mode: str
) -> None:
    world.discovered(name)
    direct, through = Heard(), Heard()
    with anyio.fail_after(BOUND):
        async with direct_client(world.reference(name).reach) as own:
            expected = await own.call_tool("count", {"n": 3}, progress_callback=direct.on_progress)
        async with world.toolvet.client(world.toolvet.alice, mode=mode, logging_callback=through.on_log) as client:
            got = await client.call_tool(f"{name}_count", {"n": 3}, progress_callback=through.on_progress)
    assert canonical(sdk_result(got)) == canonical(sdk_result(expected))
    assert direct.progress == [(1.0, 3.0, "step 1"), (2.0, 3.0, "step 2"), (3.0, 3.0, "step 3")]
    assert through.progress == direct.progress
    if mode == "legacy":  # a handshake-era client hears every level unless it set one
        assert [log.get("msg") if isinstance(log, dict) else log for log in through.logs] == [
            "counted 1", "counted 2", "counted 3"]
