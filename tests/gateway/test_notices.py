"""What an upstream sends outside any call reaches the clients of the caller it belongs to, through ``/mcp``.

The upstream is ``tests/servers/notices_server.py`` (the SDK's low-level Server): over stdio (a
real child process) or over streamable HTTP in the handshake era, where its updates travel on the
session's standalone GET stream, or over streamable HTTP at 2026-07-28, where toolvet holds a
``subscriptions/listen`` open on the caller's session. Handshake-era clients subscribe with ``resources/subscribe``;
2026-07-28 clients with the ``resourceSubscriptions`` of a ``subscriptions/listen`` stream.
"""

from __future__ import annotations

import contextlib
import sys
import warnings
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import mcp.types as types
import pytest
from mcp import Client
from mcp.server.subscriptions import PromptsListChanged, ResourcesListChanged, ResourceUpdated
from mcp.shared.exceptions import MCPDeprecationWarning

from tests.gateway.conftest import ADMIN, BOUND, Toolvet
from tests.gateway.test_forwarding import _text
from tests.servers import notices_server
from tests.upstreams import handshake_only_http_server, modern_http_server
from toolvet.schemas.tools import TokenCreate
from toolvet.services import discovery, preferences, servers, tokens

pytestmark = pytest.mark.anyio

NOTICES = Path(__file__).parents[1] / "servers" / "notices_server.py"
NOTE = notices_server.NOTE
UPSTREAMS = ["stdio", "http, handshake era"]


@contextlib.asynccontextmanager
async def _registered(toolvet: Toolvet, upstream: str) -> AsyncIterator[None]:
    with contextlib.ExitStack() as stack:
        if upstream == "stdio":
            servers.create_server(toolvet.ctx, ADMIN, {"name": "notices", "command": sys.executable,
                                                       "args": [str(NOTICES)]})
            with anyio.fail_after(BOUND):
                runs = await discovery.discover(toolvet.ctx, ADMIN, ["notices"])
            assert runs[0].status == "ok", runs[0].error
        else:
            serve_it = handshake_only_http_server if "handshake" in upstream else modern_http_server
            up = stack.enter_context(serve_it(notices_server.build()))  # type: ignore[arg-type]
            await toolvet.register("notices", up.url)
        preferences.set_permission_mode(toolvet.ctx, ADMIN, "alice", "allow")
        yield


class Heard:
    """The server notifications a handshake-era client received, with an event per arrival."""

    def __init__(self) -> None:
        self.methods: list[tuple[str, Any]] = []
        self.arrived = anyio.Event()

    async def __call__(self, message: Any) -> None:
        if isinstance(message, types.ServerNotification | types.ResourceUpdatedNotification
                      | types.ResourceListChangedNotification | types.PromptListChangedNotification):
            root = getattr(message, "root", message)
            params = getattr(root, "params", None)
            self.methods.append((root.method, getattr(params, "uri", None)))
            self.arrived.set()

    async def wait_for(self, method: str) -> None:
        with anyio.fail_after(BOUND):
            while not any(m == method for m, _ in self.methods):
                self.arrived = anyio.Event()
                await self.arrived.wait()


async def _subscribe(client: Client, uri: str, on: bool = True) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MCPDeprecationWarning)
        if on:
            await client.subscribe_resource(uri)
        else:
            await client.unsubscribe_resource(uri)


@pytest.mark.parametrize("upstream", UPSTREAMS)
async def test_a_resource_update_reaches_a_subscribed_handshake_era_client_until_it_unsubscribes(
    toolvet: Toolvet, upstream
):
    heard = Heard()
    async with _registered(toolvet, upstream):
        with toolvet.serve():
            async with toolvet.client(toolvet.alice, mode="legacy", message_handler=heard) as client:
                with anyio.fail_after(BOUND):
                    await client.list_resources()  # learns which server owns the URI
                    await _subscribe(client, NOTE)
                    assert _text(await client.call_tool("notices_touch", {"uri": NOTE})) == "touched"
                await heard.wait_for("notifications/resources/updated")
                with anyio.fail_after(BOUND):
                    await _subscribe(client, NOTE, on=False)
                    await client.call_tool("notices_touch", {"uri": NOTE})
                    await client.call_tool("notices_change_lists", {})  # a later notice, to wait on
                await heard.wait_for("notifications/prompts/list_changed")
    updates = [uri for method, uri in heard.methods if method == "notifications/resources/updated"]
    assert updates == [NOTE]  # once: none after the unsubscribe
    assert ("notifications/resources/list_changed", None) in heard.methods


@pytest.mark.parametrize("upstream", [*UPSTREAMS, "http, 2026-07-28"])
async def test_a_resource_update_reaches_a_2026_client_listening_for_it(toolvet: Toolvet, upstream):
    events: list[Any] = []
    async with _registered(toolvet, upstream):
        with toolvet.serve():
            async with toolvet.client(toolvet.alice) as client:
                with anyio.fail_after(BOUND):
                    await client.list_resources()
                    async with client.listen(resource_subscriptions=[NOTE], prompts_list_changed=True) as sub:
                        await client.call_tool("notices_touch", {"uri": NOTE})
                        await client.call_tool("notices_change_lists", {})
                        async for event in sub:
                            events.append(event)
                            if isinstance(event, PromptsListChanged):
                                break
    assert ResourceUpdated(uri=NOTE) in events
    assert not any(isinstance(event, ResourcesListChanged) for event in events)  # not asked for


async def test_a_resource_update_never_reaches_another_callers_client(toolvet: Toolvet):
    preferences.set_permission_mode(toolvet.ctx, ADMIN, "bob", "allow")
    bob = tokens.create_token(toolvet.ctx, ADMIN, TokenCreate(role="consumer", user="bob", name="bob")).token
    alice_heard, bob_heard = Heard(), Heard()
    async with _registered(toolvet, "stdio"):
        with toolvet.serve():
            async with (toolvet.client(toolvet.alice, mode="legacy", message_handler=alice_heard) as alice,
                        toolvet.client(bob, mode="legacy", message_handler=bob_heard) as other):
                with anyio.fail_after(BOUND):
                    for client in (alice, other):
                        await client.list_resources()
                    await _subscribe(other, NOTE)
                    await alice.call_tool("notices_touch", {"uri": NOTE})  # alice's session: nobody subscribed
                    await other.call_tool("notices_change_lists", {})
                await bob_heard.wait_for("notifications/prompts/list_changed")
    assert not any(m == "notifications/resources/updated" for m, _ in bob_heard.methods)
    assert not any(m == "notifications/resources/updated" for m, _ in alice_heard.methods)


async def _roots(context: Any) -> types.ListRootsResult:
    return types.ListRootsResult(roots=[types.Root(uri="file:///srv/project")])


async def test_a_clients_roots_change_reaches_its_upstream_which_asks_for_them_again(toolvet: Toolvet):
    async with _registered(toolvet, "stdio"):
        with toolvet.serve():
            async with toolvet.client(toolvet.alice, mode="legacy", list_roots_callback=_roots) as client:
                with anyio.fail_after(BOUND):
                    assert _text(await client.call_tool("notices_roots_changes", {})) == "0 -"
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore", MCPDeprecationWarning)
                        await client.send_roots_list_changed()
                    seen = ""
                    while seen != "1 file:///srv/project":  # the upstream asks on its own, then answers
                        seen = _text(await client.call_tool("notices_roots_changes", {}))
                        await anyio.sleep(0.05)


async def test_a_handshake_era_client_is_told_what_is_relayed(toolvet: Toolvet):
    async with _registered(toolvet, "stdio"):
        with toolvet.serve(), anyio.fail_after(BOUND):
            async with toolvet.client(toolvet.alice, mode="legacy") as client:
                declared = client.server_capabilities
    assert declared.resources is not None and declared.resources.subscribe and declared.resources.list_changed
    assert declared.prompts is not None and declared.prompts.list_changed
    assert declared.tasks is not None and declared.tasks.requests is not None  # /mcp relays tasks
