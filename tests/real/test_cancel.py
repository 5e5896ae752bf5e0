"""A call the client behind toolvet gives up on is cancelled on the FastMCP 4 server, over each of its
transports and in both eras, as when the client gives up on the server itself; toolvet records it as
cancelled. The server's ``wait`` writes "started" to a file, then "cancelled" if it is cancelled."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.gateway.conftest import ADMIN
from tests.real.conftest import BOUND, World
from tests.real.references import direct_client
from toolvet.schemas.tools import TokenCreate
from toolvet.services import calls, preferences, tokens

pytestmark = pytest.mark.anyio

ERAS = ["2026-07-28", "legacy"]


async def _given_up(client: Any, tool: str, note: Path) -> str:
    """Call ``tool``, give up once the server has started it, and return what ``note`` ends up saying."""
    with anyio.fail_after(BOUND):
        async with anyio.create_task_group() as tg:
            tg.start_soon(client.call_tool, tool, {"seconds": 60, "note": str(note)})
            while not note.exists():  # the server runs it: now the client gives up
                await anyio.sleep(0.05)
            tg.cancel_scope.cancel()
        while note.read_text() == "started":
            await anyio.sleep(0.05)
    return note.read_text()


@pytest.mark.parametrize("mode", ERAS)
@pytest.mark.parametrize("name", ["fastmcp-stdio", "fastmcp-http", "fastmcp-sse"])
async def test_a_call_the_client_gives_up_on_is_cancelled_on_the_server_and_recorded(
    world: World, tmp_path: Path, name: str, mode: str
) -> None:
    world.discovered(name)
    user = f"canceller-{name}-{mode}"
    preferences.set_permission_mode(world.toolvet.ctx, ADMIN, user, "allow")
    token = tokens.create_token(world.toolvet.ctx, ADMIN, TokenCreate(role="consumer", user=user, name=user)).token
    async with direct_client(world.reference(name).reach) as own:
        direct = await _given_up(own, "wait", tmp_path / "direct")
    async with world.toolvet.client(token, mode=mode) as client:
        through = await _given_up(client, f"{name}_wait", tmp_path / "through")
    with anyio.fail_after(BOUND):
        while not (mine := [c for c in calls.list_calls(world.toolvet.ctx, ADMIN, status="cancelled", server=name,
                                                       tool="wait").items if c.user == user]):
            await anyio.sleep(0.05)
    assert direct == through == "cancelled"
    assert len(mine) == 1
