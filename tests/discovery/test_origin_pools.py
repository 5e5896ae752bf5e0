"""The direct route keeps one connection pool per origin (``upstream.direct.DirectRoute``): a POST does not
pay for connections idle to other upstreams, one upstream cannot use up another's connections, and an
origin left idle past its connections' keep-alive has its pool closed. Real loopback servers throughout."""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import partial

import anyio
import httpx2
import pytest

from tests.upstreams import CANNED_BODY, CannedHttp, canned_http
from toolvet.upstream.direct import DirectRoute, GuardedTransport
from toolvet.upstream.guard import AddressGuard

pytestmark = pytest.mark.anyio

TIMEOUT = httpx2.Timeout(5)


async def post(route: DirectRoute, url: str) -> dict[str, object]:
    async with route.post(url, b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}',
                          {"content-type": "application/json"}, TIMEOUT) as answer:
        return dict(json.loads(await answer.aread()))


async def eventually(check: Callable[[], bool], seconds: float = 5.0) -> None:
    with anyio.fail_after(seconds):
        while not check():
            await anyio.sleep(0.02)


async def test_each_origin_has_a_pool_of_its_own_and_keeps_its_connection() -> None:
    first, second = CannedHttp(), CannedHttp()
    async with canned_http(first, second):
        route = DirectRoute(AddressGuard())
        try:
            with anyio.fail_after(10):
                for _ in range(3):
                    assert await post(route, first.url) == json.loads(CANNED_BODY)
                    assert await post(route, second.url) == json.loads(CANNED_BODY)
            assert len(route.pools) == 2
            assert (first.accepted, second.accepted) == (1, 1)  # kept alive, each on its own pool
        finally:
            await route.aclose()
        await eventually(lambda: first.closed == second.closed == 1)


async def test_a_busy_origin_cannot_use_up_another_s_connections() -> None:
    # One connection per origin: a slow upstream holding its only one does not make a call to another
    # wait for it (with one pool for all origins, the second POST waited for the first to finish).
    slow, fast = CannedHttp(delay=3.0), CannedHttp()
    async with canned_http(slow, fast):
        route = DirectRoute(AddressGuard(), max_connections=1, max_keepalive_connections=1)
        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(post, route, slow.url)
                await eventually(lambda: slow.accepted == 1)
                with anyio.fail_after(1.5):
                    assert await post(route, fast.url) == json.loads(CANNED_BODY)
        finally:
            await route.aclose()


async def test_an_origin_idle_past_its_keep_alive_has_its_pool_closed_but_never_one_in_use() -> None:
    idle, busy, current = CannedHttp(), CannedHttp(delay=2.0), CannedHttp()
    async with canned_http(idle, busy, current):
        route = DirectRoute(AddressGuard(), keepalive_expiry=0.3)
        try:
            with anyio.fail_after(15):
                await post(route, idle.url)
                async with anyio.create_task_group() as tg:
                    tg.start_soon(post, route, busy.url)  # in flight for 2 s
                    await anyio.sleep(1.2)  # past the sweep's second and the idle origin's keep-alive
                    await post(route, current.url)
                    await eventually(lambda: idle.closed == 1)
                    assert len(route.pools) == 2  # the busy origin's pool stays while its POST runs
                assert busy.closed == 0 and current.closed == 0
        finally:
            await route.aclose()


async def test_the_http_client_s_own_transport_keeps_a_pool_per_origin_too() -> None:
    # What the SDK's SSE transport, redirects and OAuth go through: an event stream holding an origin's
    # only connection leaves another origin's requests alone, and an answer read to its end ends its
    # origin's request (so the pool can be closed once idle).
    slow, fast, idle = CannedHttp(delay=3.0), CannedHttp(), CannedHttp()
    async with canned_http(slow, fast, idle):
        transport = GuardedTransport(AddressGuard(), max_connections=1, max_keepalive_connections=1,
                                     keepalive_expiry=0.3)
        async with httpx2.AsyncClient(transport=transport, timeout=TIMEOUT) as client:
            with anyio.fail_after(15):
                assert (await client.post(idle.url, content=b"{}")).json() == json.loads(CANNED_BODY)
                async with anyio.create_task_group() as tg:
                    tg.start_soon(partial(client.post, slow.url, content=b"{}"))
                    await eventually(lambda: slow.accepted == 1)
                    with anyio.fail_after(1.5):
                        assert (await client.post(fast.url, content=b"{}")).json() == json.loads(CANNED_BODY)
                    await anyio.sleep(1.2)  # past the sweep's second and the idle origin's keep-alive
                    await client.post(fast.url, content=b"{}")
                    await eventually(lambda: idle.closed == 1)
                    assert len(transport.pools) == 2  # the slow origin's stays while its answer is awaited
