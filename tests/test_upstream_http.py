"""The upstream client: each request leaves in one socket write, idle connections are checked cheaply,
HTTP otherwise unchanged."""

from __future__ import annotations

import socket
from typing import Any

import anyio
import httpcore2
import httpx2
import pytest

from toolvet.upstream_http import FLUSH_BYTES, CoalescingStream, coalescing, upstream_client

pytestmark = pytest.mark.anyio


class _Recorder(httpcore2.AsyncNetworkStream):
    def __init__(self) -> None:
        self.written: list[bytes] = []
        self.closed = False

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return b"reply"

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self.written.append(buffer)

    async def aclose(self) -> None:
        self.closed = True

    def get_extra_info(self, info: str) -> Any:
        return f"extra:{info}"


async def test_writes_are_held_until_the_next_read() -> None:
    inner = _Recorder()
    stream = CoalescingStream(inner)
    await stream.write(b"POST / HTTP/1.1\r\n\r\n")
    await stream.write(b"")
    await stream.write(b'{"jsonrpc":"2.0"}')
    assert inner.written == []
    assert await stream.read(100) == b"reply"
    assert inner.written == [b'POST / HTTP/1.1\r\n\r\n{"jsonrpc":"2.0"}']
    assert await stream.read(100) == b"reply"  # nothing buffered: no empty write
    assert len(inner.written) == 1
    assert stream.get_extra_info("is_readable") == "extra:is_readable"


async def test_a_large_body_is_not_held_back() -> None:
    inner = _Recorder()
    stream = CoalescingStream(inner)
    await stream.write(b"h" * 10)
    await stream.write(b"b" * FLUSH_BYTES)
    assert [len(w) for w in inner.written] == [10 + FLUSH_BYTES]
    await stream.write(b"tail")
    await stream.aclose()  # a closed connection sends nothing more
    assert inner.closed and len(inner.written) == 1


async def test_the_upstream_client_sends_a_request_in_one_segment() -> None:
    first_reads: list[bytes] = []

    async def handle(conn: Any) -> None:
        async with conn:
            while True:
                data = await conn.receive(65536)
                first_reads.append(data)
                while b"\r\n\r\n" not in data or not data.endswith(b"}"):
                    data += await conn.receive(65536)
                body = b'{"ok":true}'
                await conn.send(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
                                b"content-length: %d\r\n\r\n%s" % (len(body), body))

    listener = await anyio.create_tcp_listener(local_host="127.0.0.1")
    port = listener.extra(anyio.abc.SocketAttribute.local_port)
    client = upstream_client(timeout=httpx2.Timeout(5), limits=httpx2.Limits(max_connections=4))
    assert coalescing(client)
    async with listener, client, anyio.create_task_group() as tg:
        tg.start_soon(listener.serve, handle)
        for n in range(3):  # a kept-alive connection keeps coalescing
            response = await client.post(f"http://127.0.0.1:{port}/mcp", json={"n": n, "pad": "x" * 2000})
            assert response.status_code == 200 and response.json() == {"ok": True}
        tg.cancel_scope.cancel()
    assert len(first_reads) == 3
    for data in first_reads:  # headers and body arrived together
        assert data.startswith(b"POST /mcp HTTP/1.1") and data.endswith(b"}")


async def test_an_idle_connection_turns_readable_when_the_server_closes_it() -> None:
    """The pool's is_readable question is answered from the socket kept at connect time."""
    with socket.create_server(("127.0.0.1", 0)) as listener:
        port = listener.getsockname()[1]
        stream = CoalescingStream(await httpcore2.AnyIOBackend().connect_tcp("127.0.0.1", port))
        accepted, _ = listener.accept()
        try:
            assert stream._socket is not None  # kept: no attribute map is built per question
            assert stream.get_extra_info("is_readable") is False
            accepted.close()
            with anyio.fail_after(5):
                while not stream.get_extra_info("is_readable"):
                    await anyio.sleep(0.01)
        finally:
            accepted.close()
            await stream.aclose()
