"""An upstream's ``roots/list`` reaches the client behind toolvet, in every pairing of eras.

The upstream is ``tests/servers/relay_server.py``: a real child process over stdio (it asks with an
``InputRequiredResult`` at 2026-07-28, mid-call in the handshake era) or the same server over
streamable HTTP speaking only the handshake.
"""

from __future__ import annotations

import contextlib
from typing import Any

import anyio
import mcp.types as types
import pytest

from tests.gateway.conftest import BOUND, Toolvet
from tests.gateway.test_forwarding import ERAS, _register_relay, _text, relay_upstream

pytestmark = pytest.mark.anyio

ROOTS = [types.Root(uri="file:///srv/project", name="project"), types.Root(uri="file:///tmp/scratch")]


async def _roots(context: Any) -> types.ListRootsResult:
    return types.ListRootsResult(roots=ROOTS)


@pytest.mark.parametrize("upstream", ["stdio", "http, handshake era"])
@pytest.mark.parametrize("mode", ERAS)
async def test_an_upstream_asking_for_roots_gets_the_calling_clients_roots(toolvet: Toolvet, mode, upstream):
    with contextlib.ExitStack() as stack:
        await relay_upstream(toolvet, stack, upstream)
        with toolvet.serve(), anyio.fail_after(BOUND):
            async with toolvet.client(toolvet.alice, mode=mode, list_roots_callback=_roots) as client:
                result = await client.call_tool("relay_roots", {})
    assert not result.is_error, result
    assert _text(result) == "file:///srv/project file:///tmp/scratch"


@pytest.mark.parametrize("mode", ERAS)
async def test_roots_are_refused_clearly_to_an_upstream_when_the_client_declared_none(toolvet: Toolvet, mode):
    await _register_relay(toolvet)
    with toolvet.serve(), anyio.fail_after(BOUND):
        async with toolvet.client(toolvet.alice, mode=mode) as client:
            result = await client.call_tool("relay_roots", {})
    assert result.is_error
    assert "roots" in _text(result)
