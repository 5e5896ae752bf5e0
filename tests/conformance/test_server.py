"""What the conformance server does that the suite's scenarios ask for but do not check."""

from __future__ import annotations

import anyio
import mcp.types as types
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError

from tests.conformance.server import RESOURCE_NOT_FOUND, conformance_server

pytestmark = pytest.mark.anyio
BOUND = 30.0


async def test_a_log_level_set_on_a_session_filters_the_messages_sent_on_it():
    received: list[str] = []

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        received.append(f"{params.level}: {params.data}")

    with conformance_server() as server, anyio.fail_after(BOUND):
        async with Client(server.url, mode="legacy", logging_callback=on_log) as client:
            with pytest.warns(MCPDeprecationWarning):  # logging is deprecated in 2026-07-28, not in 2025-11-25
                await client.set_logging_level("warning")
            await client.call_tool("test_tool_with_logging", {})
            above_warning = list(received)
            with pytest.warns(MCPDeprecationWarning):
                await client.set_logging_level("info")
            await client.call_tool("test_tool_with_logging", {})
    assert above_warning == []
    assert received == [
        "info: Tool execution started",
        "info: Tool processing data",
        "info: Tool execution completed",
    ]


async def test_an_unknown_resource_is_the_resource_not_found_error():
    with conformance_server() as server, anyio.fail_after(BOUND):
        async with Client(server.url, mode="legacy") as client:
            with pytest.raises(MCPError, match="Resource not found: test://nothing") as raised:
                await client.read_resource("test://nothing")
    assert raised.value.code == RESOURCE_NOT_FOUND
