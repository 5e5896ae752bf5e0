"""A FastMCP 4 server that says, on the session of a call toolvet forwards, that its tool list changed is
listed again: the gateway publishes the signal (``events.UPSTREAM``), which the scheduler of
``toolvet serve`` turns into a debounced pass (tests/services/test_scheduler.py). Its own list-changed
watcher would not hear it: a server tells the session it changed on, and the watcher's is another."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from tests.real.conftest import BOUND, World
from toolvet.services.events import LIST_CHANGED, UPSTREAM

pytestmark = pytest.mark.anyio

ERAS = ["2026-07-28", "legacy"]


@pytest.mark.parametrize("mode", ERAS)
@pytest.mark.parametrize("name", ["fastmcp-stdio", "fastmcp-http", "fastmcp-sse"])
async def test_a_server_announcing_a_changed_list_during_a_call_asks_discovery_to_list_it_again(
    world: World, name: str, mode: str
) -> None:
    world.discovered(name)
    heard: list[dict[str, Any]] = []
    with anyio.fail_after(BOUND):
        async with world.toolvet.ctx.bus.subscribe(UPSTREAM) as events:
            async with world.toolvet.client(world.toolvet.alice, mode=mode) as client:
                result = await client.call_tool(f"{name}_announce", {})
            while not heard:
                heard.append(await events.receive())
    assert [c.text for c in result.content] == ["announced"]
    assert heard == [{"type": LIST_CHANGED, "server": name}]
