"""An upstream restarted mid-run keeps answering through toolvet on the next call.

server-everything over streamable HTTP is stopped and started again on the same port: the session
toolvet held upstream is gone, and the TypeScript SDK server answers its stale ``Mcp-Session-Id``
with HTTP 400 and JSON-RPC -32000; toolvet must open a new session and make the call.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import anyio
import anyio.to_thread
import pytest

from tests.gateway.conftest import ADMIN, Toolvet, open_toolvet
from tests.real.conftest import BOUND, sdk_result
from tests.real.references import Http, direct_client, everything_entry, node_http_server
from toolvet.services import preferences

pytestmark = pytest.mark.anyio

SUM = ("get-sum", {"a": 20, "b": 22})


class Restartable:
    """server-everything over streamable HTTP that can be stopped and started again on its port."""

    def __init__(self, entry: Path) -> None:
        self.entry = entry
        self.stack = ExitStack()
        self.port = self.stack.enter_context(node_http_server(entry, "streamableHttp"))
        self.url = f"http://127.0.0.1:{self.port}/mcp"

    def restart(self) -> None:
        self.stack.close()
        self.stack = ExitStack()
        self.stack.enter_context(node_http_server(self.entry, "streamableHttp", port=self.port))


@pytest.fixture(scope="module")
def upstream() -> Iterator[Restartable]:
    server = Restartable(everything_entry())
    try:
        yield server
    finally:
        server.stack.close()


@pytest.fixture(scope="module")
def served(upstream: Restartable, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Toolvet]:
    with open_toolvet(tmp_path_factory.mktemp("toolvet")) as toolvet:
        anyio.run(toolvet.register, "everything", upstream.url)
        preferences.set_permission_mode(toolvet.ctx, ADMIN, "alice", "allow")
        with toolvet.serve():
            yield toolvet


@pytest.mark.parametrize("mode", ["2026-07-28", "legacy"])
async def test_a_restarted_upstream_answers_the_next_call_through_toolvet(
    served: Toolvet, upstream: Restartable, mode: str
) -> None:
    tool, arguments = SUM
    with anyio.fail_after(4 * BOUND):
        async with served.client(served.alice, mode=mode) as client:
            before = await client.call_tool(f"everything_{tool}", arguments)
            await anyio.to_thread.run_sync(upstream.restart)
            after = await client.call_tool(f"everything_{tool}", arguments)
        async with direct_client(Http(upstream.url, "streamable-http")) as direct:
            expected = sdk_result(await direct.call_tool(tool, arguments))
    assert sdk_result(before) == expected
    assert sdk_result(after) == expected
    assert not expected.get("isError") and "42" in expected["content"][0]["text"]
