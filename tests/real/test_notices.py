"""server-everything's roots and resource updates reach the client behind toolvet, in both eras.

Its ``get-roots-list`` asks the client for its roots (on its own after the handshake, and mid-call
when it has none yet); its ``toggle-subscriber-updates`` starts sending ``notifications/resources/
updated`` for the resources the session subscribed to, the first at once. Each test calls as a user
of its own, so its upstream session is its own.
"""

from __future__ import annotations

import warnings
from typing import Any

import anyio
import mcp.types as types
import pytest
from mcp.server.subscriptions import ResourceUpdated
from mcp.shared.exceptions import MCPDeprecationWarning

from tests.gateway.conftest import ADMIN
from tests.gateway.test_notices import Heard
from tests.real.conftest import BOUND, World
from toolvet.gateway.federation import split_namespaced
from toolvet.schemas.tools import TokenCreate
from toolvet.services import preferences, tokens

pytestmark = pytest.mark.anyio

ERAS = ["2026-07-28", "legacy"]
SERVER = "everything-stdio"


def _token(world: World, user: str) -> str:
    preferences.set_permission_mode(world.toolvet.ctx, ADMIN, user, "allow")
    made = tokens.create_token(world.toolvet.ctx, ADMIN, TokenCreate(role="consumer", user=user, name=user))
    return made.token


async def _roots(context: Any) -> types.ListRootsResult:
    return types.ListRootsResult(roots=[types.Root(uri="file:///srv/project", name="project")])


@pytest.mark.parametrize("mode", ERAS)
async def test_server_everything_lists_the_roots_of_the_client_behind_toolvet(world: World, mode: str) -> None:
    world.discovered(SERVER)
    token = _token(world, f"roots-{mode}")
    with anyio.fail_after(BOUND):
        async with world.toolvet.client(token, mode=mode, list_roots_callback=_roots) as client:
            result = await client.call_tool(f"{SERVER}_get-roots-list", {})
    assert not result.is_error, result
    text = result.content[0].text if isinstance(result.content[0], types.TextContent) else ""
    assert "Current MCP Roots (1 total)" in text and "file:///srv/project" in text


async def _document(client: Any) -> str:
    """A document of SERVER's, by the URI toolvet lists it under: the three server-everything instances
    list the same URIs, so each copy's names its server (docs/gateway.md, "Two servers, one URI")."""
    listed = await client.list_resources()
    return next(str(r.uri) for r in listed.resources if str(r.uri).startswith("demo://resource/static/document/")
                and split_namespaced(str(r.uri)) is not None and split_namespaced(str(r.uri))[0] == SERVER)


async def test_a_subscribed_handshake_era_client_hears_server_everythings_updates(world: World) -> None:
    world.discovered(SERVER)
    heard = Heard()
    async with world.toolvet.client(_token(world, "subscriber-legacy"), mode="legacy", message_handler=heard) as client:
        with anyio.fail_after(BOUND):
            uri = await _document(client)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", MCPDeprecationWarning)
                await client.subscribe_resource(uri)
            await client.call_tool(f"{SERVER}_toggle-subscriber-updates", {})
        await heard.wait_for("notifications/resources/updated")
        with anyio.fail_after(BOUND):
            await client.call_tool(f"{SERVER}_toggle-subscriber-updates", {})  # stops them
    assert ("notifications/resources/updated", uri) in heard.methods


async def test_a_listening_2026_client_hears_server_everythings_updates(world: World) -> None:
    world.discovered(SERVER)
    with anyio.fail_after(BOUND):
        async with world.toolvet.client(_token(world, "subscriber-2026")) as client:
            uri = await _document(client)
            async with client.listen(resource_subscriptions=[uri]) as sub:
                await client.call_tool(f"{SERVER}_toggle-subscriber-updates", {})
                event = await sub.__anext__()
            await client.call_tool(f"{SERVER}_toggle-subscriber-updates", {})
    assert event == ResourceUpdated(uri=uri)
