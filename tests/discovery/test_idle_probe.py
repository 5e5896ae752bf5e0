"""Idle pooled connections to upstreams: whether the server closed one is found for all of a pool's
connections with one ``poll`` per turn of the event loop (``upstream.direct.IdleProbe``), on real
sockets, and a connection the server closed is never reused."""

from __future__ import annotations

import os
import resource
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
import httpcore2
import httpx2
import pytest

from tests.upstreams import CannedHttp, canned_http
from toolvet.upstream.direct import CoalescingStream, IdleProbe
from toolvet.upstream.http import HttpChannel, http_client

pytestmark = pytest.mark.anyio


@asynccontextmanager
async def connections(count: int, probe: IdleProbe) -> AsyncIterator[list[tuple[CoalescingStream, socket.socket]]]:
    """``count`` real loopback connections, each as the pool holds it (a CoalescingStream of httpcore2's
    own anyio stream, sharing ``probe``) beside the server's end of it."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(count)
        port = listener.getsockname()[1]
        pairs = []
        try:
            for _ in range(count):
                stream = await httpcore2.AnyIOBackend().connect_tcp("127.0.0.1", port, timeout=5)
                server_end, _ = listener.accept()
                pairs.append((CoalescingStream(stream, probe), server_end))
            yield pairs
        finally:
            for stream, server_end in pairs:
                server_end.close()
                await stream.aclose()


async def test_a_connection_the_server_closed_reads_as_readable_from_the_next_turn_on() -> None:
    probe = IdleProbe()
    async with connections(3, probe) as pairs:
        assert [stream.get_extra_info("is_readable") for stream, _ in pairs] == [False, False, False]
        pairs[1][1].close()  # the server closes the second connection
        await anyio.sleep(0.05)
        # One poll answers for every connection: asked first about the third, the probe knows the second.
        assert pairs[2][0].get_extra_info("is_readable") is False
        assert probe.ready is not None and pairs[1][0].socket is not None
        assert pairs[1][0].socket.fileno() in probe.ready
        assert [stream.get_extra_info("is_readable") for stream, _ in pairs] == [False, True, False]


async def test_the_answers_hold_for_one_turn_of_the_loop_only() -> None:
    probe = IdleProbe()
    async with connections(2, probe) as pairs:
        (first, _), (second, server_end) = pairs
        assert first.get_extra_info("is_readable") is False
        server_end.sendall(b"unexpected")  # bytes on an idle connection: it may not be reused
        # Still this turn: the answers polled at its start stand (as a socket asked one at a time an
        # instant earlier would have read); the next turn polls again.
        assert second.get_extra_info("is_readable") is False
        await anyio.sleep(0)
        assert probe.ready is None
        assert second.get_extra_info("is_readable") is True
        assert first.get_extra_info("is_readable") is False


def test_without_a_running_loop_each_question_polls() -> None:
    mine, theirs = socket.socketpair()
    try:
        probe = IdleProbe()
        assert probe.readable(mine) is False
        assert probe.ready is None
        theirs.close()
        assert probe.readable(mine) is True
    finally:
        mine.close()
        theirs.close()


async def test_a_closed_stream_leaves_the_probe() -> None:
    probe = IdleProbe()
    async with connections(2, probe) as pairs:
        assert len(probe.streams) == 2
        await pairs[0][0].aclose()
        assert len(probe.streams) == 1
    assert len(probe.streams) == 0


async def test_connections_past_select_s_descriptor_limit_are_kept() -> None:
    # select() takes descriptors below 1,024 only; a gateway with many connections open passes that, and
    # every idle connection there used to read as closed, so the pool dropped it after each use.
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < 1200:
        pytest.fail(f"this test needs 1,200 open files; the hard limit is {hard}")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, 1200), hard))
    padding = [os.open(os.devnull, os.O_RDONLY) for _ in range(1030)]
    try:
        probe = IdleProbe()
        async with connections(1, probe) as pairs:
            stream, server_end = pairs[0]
            assert stream.socket is not None and stream.socket.fileno() >= 1024
            assert stream.get_extra_info("is_readable") is False
            server_end.close()
            await anyio.sleep(0.05)
            assert stream.get_extra_info("is_readable") is True
    finally:
        for fd in padding:
            os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


async def test_the_pool_reuses_an_idle_connection_and_never_one_the_server_closed() -> None:
    # A server that closes each connection right after its answer, without saying so (no
    # ``Connection: close``), beside one that keeps it: the pool opens a new connection for the first
    # every time, and keeps using one for the second.
    closing, keeping = CannedHttp(keep_alive=False), CannedHttp()
    async with canned_http(closing, keeping), http_client(timeout=httpx2.Timeout(5)) as http:
        with anyio.fail_after(20):
            for _ in range(5):
                for server in (closing, keeping):
                    assert http.direct.applies(server.url)
                    channel = HttpChannel(http, server.url, {}, timeout=httpx2.Timeout(5), max_response_bytes=1 << 20)
                    assert await channel.request("tools/list", None, {}) == {}
                await anyio.sleep(0.05)  # the closing server's FIN arrives
    assert (closing.accepted, keeping.accepted) == (5, 1)
