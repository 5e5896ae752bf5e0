"""Roots and resource updates through ``/mcp`` to the official TypeScript SDK clients (1.x and 2.x).

The upstream is ``tests/servers/notices_server.py`` over stdio and ``relay_server.py`` (its ``roots``
tool asks the client mid-call); the client is tests/real/js/client.mjs under node, as tests/real runs it.
"""

from __future__ import annotations

import sys

import anyio
import pytest

from tests.gateway.conftest import ADMIN, BOUND, Toolvet
from tests.gateway.test_forwarding import _register_relay
from tests.gateway.test_notices import NOTE, NOTICES
from tests.real.conftest import typescript_client
from toolvet.services import discovery, servers

pytestmark = pytest.mark.anyio

ROOTS = [{"uri": "file:///srv/project", "name": "project"}]


async def test_a_typescript_client_subscribed_to_a_resource_hears_its_update(toolvet: Toolvet):
    servers.create_server(toolvet.ctx, ADMIN, {"name": "notices", "command": sys.executable, "args": [str(NOTICES)]})
    with anyio.fail_after(BOUND):
        runs = await discovery.discover(toolvet.ctx, ADMIN, ["notices"])
    assert runs[0].status == "ok", runs[0].error
    await _register_relay(toolvet)  # alice may call without approval
    with toolvet.serve():
        answer = await typescript_client("v1", toolvet.mcp, toolvet.alice,
                                         [{"name": "notices_touch", "arguments": {"uri": NOTE}}],
                                         subscribe=NOTE, waitFor=NOTE)
    assert answer["protocolVersion"] == "2025-11-25"
    assert answer["results"][0]["content"][0]["text"] == "touched"
    assert answer["updated"] == [NOTE]


@pytest.mark.parametrize("sdk", ["v1", "v2"])
async def test_an_upstream_asking_for_roots_gets_the_typescript_clients_roots(toolvet: Toolvet, sdk):
    """1.x in the handshake era (asked mid-call on its session), 2.x at 2026-07-28 (an InputRequiredResult)."""
    await _register_relay(toolvet)
    with toolvet.serve():
        answer = await typescript_client(sdk, toolvet.mcp, toolvet.alice, [{"name": "relay_roots", "arguments": {}}],
                                         roots=ROOTS)
    assert answer["protocolVersion"] == {"v1": "2025-11-25", "v2": "2026-07-28"}[sdk]
    assert answer["results"][0]["content"][0]["text"] == "file:///srv/project"
