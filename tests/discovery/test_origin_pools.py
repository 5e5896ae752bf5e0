"""The direct route keeps one connection pool per origin (``upstream.direct.DirectRoute``): a POST does not
pay for connections idle to other upstreams, one upstream cannot use up another's connections, and an
origin left idle past its connections' keep-alive has its pool closed. Real loopback servers throughout."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

import anyio
import anyio.abc
import httpx2
import pytest

from toolvet.upstream.direct import DirectRoute
from toolvet.upstream.guard import AddressGuard

pytestmark = pytest.mark.anyio

BODY = b'{"jsonrpc":"2.0","id":1,"result":{}}'
ANSWER = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n%s" % (len(BODY), BODY)
TIMEOUT = httpx2.Timeout(5)


class Upstream:
    """A loopback HTTP server answering every POST with BODY (after ``delay`` seconds), counting the
    connections it accepted and those its client closed."""

    def __init__(self, delay: float = 0.0) -> None:
        self.delay = delay
        self.accepted = 0
        self.closed = 0
        self.url = ""

    async def handle(self, client: anyio.abc.SocketStream) -> None:
        self.accepted += 1
        async with client:
            buffered = b""
            while True:
                try:
                    while b"\r\n\r\n" not in buffered:
                        buffered += await client.receive()
                    head, _, rest = buffered.partition(b"\r\n\r\n")
                    length = int(next(line.split(b":", 1)[1] for line in head.split(b"\r\n")
                                      if line.lower().startswith(b"content-length:")))
                    while len(rest) < length:
                        rest += await client.receive()
                except (anyio.EndOfStream, anyio.BrokenResourceError, OSError):
                    self.closed += 1
                    return
                buffered = rest[length:]
                await anyio.sleep(self.delay)
                await client.send(ANSWER)


@asynccontextmanager
async def upstreams(*servers: Upstream) -> AsyncIterator[None]:
    listeners = [await anyio.create_tcp_listener(local_host="127.0.0.1") for _ in servers]
    async with anyio.create_task_group() as tg:
        for server, listener in zip(servers, listeners, strict=True):
            server.url = f"http://127.0.0.1:{listener.extra(anyio.abc.SocketAttribute.local_port)}/mcp"
            tg.start_soon(listener.serve, server.handle)
        try:
            yield
        finally:
            tg.cancel_scope.cancel()
    for listener in listeners:
        await listener.aclose()


async def post(route: DirectRoute, url: str) -> dict[str, object]:
    async with route.post(url, b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}',
                          {"content-type": "application/json"}, TIMEOUT) as answer:
        return dict(json.loads(await answer.aread()))


async def eventually(check: Callable[[], bool], seconds: float = 5.0) -> None:
    with anyio.fail_after(seconds):
        while not check():
            await anyio.sleep(0.02)


async def test_each_origin_has_a_pool_of_its_own_and_keeps_its_connection() -> None:
    first, second = Upstream(), Upstream()
    async with upstreams(first, second):
        route = DirectRoute(AddressGuard())
        try:
            with anyio.fail_after(10):
                for _ in range(3):
                    assert await post(route, first.url) == json.loads(BODY)
                    assert await post(route, second.url) == json.loads(BODY)
            assert route.origins() == 2
            assert (first.accepted, second.accepted) == (1, 1)  # kept alive, each on its own pool
        finally:
            await route.aclose()
        await eventually(lambda: first.closed == second.closed == 1)


async def test_a_busy_origin_cannot_use_up_another_s_connections() -> None:
    # One connection per origin: a slow upstream holding its only one does not make a call to another
    # wait for it (with one pool for all origins, the second POST waited for the first to finish).
    slow, fast = Upstream(delay=3.0), Upstream()
    async with upstreams(slow, fast):
        route = DirectRoute(AddressGuard(), max_connections=1, max_keepalive_connections=1)
        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(post, route, slow.url)
                await eventually(lambda: slow.accepted == 1)
                with anyio.fail_after(1.5):
                    assert await post(route, fast.url) == json.loads(BODY)
        finally:
            await route.aclose()


async def test_an_origin_idle_past_its_keep_alive_has_its_pool_closed_but_never_one_in_use() -> None:
    idle, busy, current = Upstream(), Upstream(delay=2.0), Upstream()
    async with upstreams(idle, busy, current):
        route = DirectRoute(AddressGuard(), keepalive_expiry=0.3)
        try:
            with anyio.fail_after(15):
                await post(route, idle.url)
                async with anyio.create_task_group() as tg:
                    tg.start_soon(post, route, busy.url)  # in flight for 2 s
                    await anyio.sleep(1.2)  # past the sweep's second and the idle origin's keep-alive
                    await post(route, current.url)
                    await eventually(lambda: idle.closed == 1)
                    assert route.origins() == 2  # the busy origin's pool stays while its POST runs
                assert busy.closed == 0 and current.closed == 0
        finally:
            await route.aclose()
