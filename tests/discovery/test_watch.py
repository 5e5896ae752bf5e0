"""watch_list_changed against real SDK servers on loopback: both eras, HTTP+SSE, and servers that
offer no change signals."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from typing import Any

import anyio
import httpx2
import pytest
from mcp.server.mcpserver import MCPServer

from tests.upstreams import (
    Announcer,
    announcing_http_server,
    announcing_sse_server,
    change_tools,
    demo_server,
    handshake_only_http_server,
    modern_http_server,
)
from toolvet.discovery import Limits, Target, fetch_listing
from toolvet.discovery.watch import watch_list_changed

pytestmark = pytest.mark.anyio

LIMITS = Limits(connect_timeout=5, read_timeout=5, pass_timeout=10)


class Changes:
    """Counts on_change calls and lets a test wait for the n-th one."""

    def __init__(self) -> None:
        self.count = 0
        self._event = anyio.Event()

    def __call__(self) -> None:
        self.count += 1
        self._event.set()

    async def reach(self, n: int) -> None:
        while self.count < n:
            await self._event.wait()
            self._event = anyio.Event()


@asynccontextmanager
async def watching(target: Target, changes: Changes, **kwargs: object) -> AsyncIterator[anyio.abc.TaskGroup]:
    async with anyio.create_task_group() as tg:
        tg.start_soon(lambda: watch_list_changed(target, LIMITS, changes, **kwargs))  # type: ignore[arg-type]
        yield tg
        tg.cancel_scope.cancel()


async def change_and_announce(server: MCPServer, announcer: Announcer, changes: Changes, name: str) -> None:
    before = changes.count
    change_tools(server, name)
    await announcer.announce()
    await changes.reach(before + 1)


@pytest.mark.parametrize("handshake_only", [False, True], ids=["2026-07-28", "handshake"])
async def test_a_streamable_http_server_announcing_a_change_fires_on_change(handshake_only):
    server = demo_server()
    changes = Changes()
    with announcing_http_server(server, handshake_only=handshake_only) as (up, announcer):
        target = Target("streamable-http", url=up.url)
        async with httpx2.AsyncClient() as http, watching(target, changes, http=http):
            with anyio.fail_after(15):
                await announcer.wait_ready(announcer.stream_open if handshake_only else announcer.listening)
                await change_and_announce(server, announcer, changes, "added_one")
                await change_and_announce(server, announcer, changes, "added_two")
                listing = await fetch_listing(target, LIMITS, http)
    assert changes.count == 2
    assert {"added_one", "added_two"} <= {t["name"] for t in listing.tools}
    if handshake_only:
        assert [r.method for r in up.requests if r.method == "GET"] == ["GET"]  # the standalone stream
        assert "subscriptions/listen" not in up.rpc_methods()
    else:
        [listen] = [r for r in up.requests
                    if isinstance(r.body, dict) and r.body.get("method") == "subscriptions/listen"]
        assert listen.body["params"]["notifications"] == {"toolsListChanged": True}
        assert listen.headers["mcp-method"] == "subscriptions/listen"
        assert listen.body["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] == "2026-07-28"


async def test_an_sse_transport_server_announcing_a_change_fires_on_change():
    # The SDK's HTTP+SSE server speaks 2026-07-28 too, so this drives the listen request over a
    # session message stream (the stream-channel path that stdio shares).
    server = demo_server()
    changes = Changes()
    with announcing_sse_server(server) as (up, announcer):
        async with watching(Target("sse", url=up.url), changes):
            with anyio.fail_after(15):
                await announcer.wait_ready(announcer.listening)
                await change_and_announce(server, announcer, changes, "added_sse")
    assert changes.count == 1
    assert "subscriptions/listen" in up.rpc_methods()


@pytest.mark.parametrize("serve", [
    pytest.param(lambda: handshake_only_http_server(), id="handshake-without-listChanged"),
    pytest.param(lambda: modern_http_server(MCPServer("quiet", subscriptions=False, log_level="WARNING")),
                 id="2026-without-subscriptions"),
])
async def test_a_server_without_change_signals_is_left_alone(serve, caplog):
    caplog.set_level("INFO", logger="toolvet.discovery.watch")
    changes = Changes()
    with serve() as up:
        async with watching(Target("streamable-http", url=up.url), changes, retry_delay=0.01):
            with anyio.fail_after(10):
                while not any("not watching" in r.getMessage() for r in caplog.records):
                    await anyio.sleep(0.01)  # waiting on a log line: the function gives no other sign
            sent = len(up.requests)
    assert changes.count == 0
    assert [r.getMessage() for r in caplog.records].count(next(
        r.getMessage() for r in caplog.records if "not watching" in r.getMessage())) == 1
    assert "tools.listChanged" in caplog.text
    assert len(up.requests) == sent  # no reconnects: it sleeps instead of retrying
    assert not [r for r in up.requests if r.method == "GET"]


async def test_an_unreachable_server_is_retried_with_back_off_and_never_raises(caplog):
    caplog.set_level("INFO", logger="toolvet.discovery.watch")
    changes = Changes()
    with modern_http_server() as up:
        url = up.url  # the port is free again once the server stopped
    def waits() -> list[Any]:
        return [r for r in caplog.records if "reconnecting in" in r.getMessage()]

    async with anyio.create_task_group() as tg:
        tg.start_soon(partial(watch_list_changed, Target("streamable-http", url=url), LIMITS, changes,
                              retry_delay=0.05, max_retry_delay=0.1))
        with anyio.fail_after(15):
            while len(waits()) < 4:
                await anyio.sleep(0.02)
        tg.cancel_scope.cancel()
    records = waits()[:4]
    delays = [r.getMessage().rsplit("reconnecting in ", 1)[1] for r in records]
    assert delays[:3] == ["0.05 s", "0.1 s", "0.1 s"]
    # Backed off, not a busy loop: each attempt came at least its announced delay after the one before.
    for before, after, delay in zip(records, records[1:], (0.05, 0.1, 0.1), strict=False):
        assert after.created - before.created >= delay * 0.9
    assert changes.count == 0


async def test_a_lost_stream_is_re_established_and_reported_as_a_possible_change():
    server = demo_server()
    changes = Changes()
    with announcing_http_server(server) as (up, announcer):
        async with watching(Target("streamable-http", url=up.url), changes, retry_delay=0.05):
            with anyio.fail_after(15):
                await announcer.wait_ready(announcer.listening)
                announcer.listening.clear()
                handler = _listen_handler(server)
                await announcer.run_here(handler.close)  # graceful close of every listen stream
                await changes.reach(1)  # reconnected: changes may have been missed meanwhile
                await announcer.wait_ready(announcer.listening)
                await change_and_announce(server, announcer, changes, "after_reconnect")
    assert changes.count == 2


def _listen_handler(server: MCPServer) -> object:
    entry = server._lowlevel_server._request_handlers["subscriptions/listen"]
    return entry.handler
