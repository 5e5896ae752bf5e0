"""The connections under toolvet's httpcore2 pools (``upstream.connections``), on real sockets: what
arrives is read as it arrives, an idle connection the server closed is never reused, a request leaves in
one write, timeouts and broken connections are httpcore2's exceptions, a large answer pauses reading
without losing a byte, and TLS verifies the upstream's certificate."""

from __future__ import annotations

import hashlib
import os
import resource
import socket
import ssl
import struct
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
import anyio.abc
import anyio.streams.tls
import httpcore2
import httpx2
import pytest
import trustme

from tests.upstreams import CannedHttp, canned_http
from toolvet.upstream.connections import READ_LIMIT, Connection, GuardedBackend
from toolvet.upstream.guard import AddressGuard
from toolvet.upstream.http import HttpChannel, http_client

pytestmark = pytest.mark.anyio


@pytest.fixture(params=[pytest.param(("asyncio", {}), id="asyncio"),
                        pytest.param(("asyncio", {"use_uvloop": True}), id="uvloop")])
def anyio_backend(request: pytest.FixtureRequest) -> tuple[str, dict[str, bool]]:
    """Both event loops ``toolvet serve`` may run on: asyncio's own, and uvloop's (its transports differ)."""
    return request.param  # type: ignore[no-any-return]


@asynccontextmanager
async def connections(count: int) -> AsyncIterator[list[tuple[Connection, socket.socket]]]:
    """``count`` real loopback connections made by the backend, each beside the server's end of it."""
    backend = GuardedBackend(AddressGuard())
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(count)
        port = listener.getsockname()[1]
        pairs = []
        try:
            for _ in range(count):
                stream = await backend.connect_tcp("127.0.0.1", port, timeout=5)
                assert isinstance(stream, Connection)
                server_end, _ = listener.accept()
                pairs.append((stream, server_end))
            yield pairs
        finally:
            for stream, server_end in pairs:
                server_end.close()
                await stream.aclose()


async def test_a_connection_the_server_closed_reads_as_readable() -> None:
    async with connections(3) as pairs:
        assert [stream.get_extra_info("is_readable") for stream, _ in pairs] == [False, False, False]
        pairs[1][1].close()  # the server closes the second connection
        await anyio.sleep(0.05)
        assert [stream.get_extra_info("is_readable") for stream, _ in pairs] == [False, True, False]


async def test_bytes_on_an_idle_connection_make_it_readable() -> None:
    async with connections(2) as pairs:
        (first, _), (second, server_end) = pairs
        server_end.sendall(b"unexpected")  # bytes on an idle connection: it may not be reused
        await anyio.sleep(0.05)
        assert second.get_extra_info("is_readable") is True
        assert first.get_extra_info("is_readable") is False


async def test_connections_past_select_s_descriptor_limit_are_kept() -> None:
    # select() takes descriptors below 1,024 only; a gateway with many connections open passes that, and
    # an idle connection there once read as closed, so the pool dropped it after each use.
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < 1200:
        pytest.fail(f"this test needs 1,200 open files; the hard limit is {hard}")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, 1200), hard))
    padding = [os.open(os.devnull, os.O_RDONLY) for _ in range(1030)]
    try:
        async with connections(1) as pairs:
            stream, server_end = pairs[0]
            assert stream.get_extra_info("socket").fileno() >= 1024
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


async def test_writes_are_held_until_the_next_read_and_leave_in_one_write() -> None:
    async with connections(1) as pairs:
        stream, server_end = pairs[0]
        await stream.write(b"POST / HTTP/1.1\r\n")
        await stream.write(b"content-length: 4\r\n\r\n")
        await stream.write(b"ping")
        assert stream.writes == 0
        server_end.sendall(b"pong")
        assert await stream.read(100, timeout=5) == b"pong"
        assert stream.writes == 1
        server_end.settimeout(5)
        assert server_end.recv(1000) == b"POST / HTTP/1.1\r\ncontent-length: 4\r\n\r\nping"


async def test_a_read_past_its_timeout_is_httpcore2_s_read_timeout_and_the_connection_still_reads() -> None:
    async with connections(1) as pairs:
        stream, server_end = pairs[0]
        with pytest.raises(httpcore2.ReadTimeout, match=r"timed out after 0\.1 s"):
            await stream.read(100, timeout=0.1)
        server_end.sendall(b"late")
        assert await stream.read(100, timeout=5) == b"late"


async def test_the_end_of_the_stream_reads_empty_after_every_byte() -> None:
    async with connections(1) as pairs:
        stream, server_end = pairs[0]
        server_end.sendall(b"last words")
        server_end.shutdown(socket.SHUT_WR)
        assert await stream.read(4, timeout=5) == b"last"
        assert await stream.read(100, timeout=5) == b" words"
        assert await stream.read(100, timeout=5) == b""
        assert stream.get_extra_info("is_readable") is True


async def test_a_connection_reset_is_httpcore2_s_read_error() -> None:
    async with connections(1) as pairs:
        stream, server_end = pairs[0]
        server_end.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        server_end.close()  # with no linger: a reset, not an end of file
        with pytest.raises(httpcore2.ReadError):
            await stream.read(100, timeout=5)


async def test_a_large_answer_pauses_reading_and_every_byte_arrives() -> None:
    payload = os.urandom(8 * READ_LIMIT)
    async with connections(1) as pairs:
        stream, server_end = pairs[0]
        async with anyio.create_task_group() as tg:
            tg.start_soon(anyio.to_thread.run_sync, server_end.sendall, payload)
            await anyio.sleep(0.2)  # nothing read: the receiver stops reading past its limit
            assert stream.receiver.reading_paused
            assert stream.receiver.unread < 2 * READ_LIMIT
            received = bytearray()
            with anyio.fail_after(10):
                while len(received) < len(payload):
                    received += await stream.read(65536, timeout=5)
        assert hashlib.sha256(received).digest() == hashlib.sha256(payload).digest()
        assert not stream.receiver.reading_paused


async def test_a_write_the_peer_never_reads_times_out_as_httpcore2_s_write_timeout() -> None:
    async with connections(1) as pairs:
        stream, _ = pairs[0]
        with pytest.raises(httpcore2.WriteTimeout):
            for _ in range(256):  # 64 MiB at most; loopback's socket buffers fill far sooner
                await stream.write(b"x" * (256 * 1024), timeout=0.2)


async def test_a_connection_closed_with_bytes_the_peer_never_took_is_dropped_at_once() -> None:
    async with connections(1) as pairs:
        stream, _ = pairs[0]
        with pytest.raises(httpcore2.WriteTimeout):
            for _ in range(256):
                await stream.write(b"x" * (256 * 1024), timeout=0.2)
        assert stream.transport.get_write_buffer_size() > 0
        await stream.aclose()
        await anyio.sleep(0.05)
        # closed, not left open waiting for a reader that never comes (the socket and its buffer freed)
        assert stream.receiver.ended and stream.transport.is_closing()


async def test_a_refused_connection_is_httpcore2_s_connect_error() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # bound, not listening: refused
        with pytest.raises(httpcore2.ConnectError):
            await GuardedBackend(AddressGuard()).connect_tcp("127.0.0.1", port, timeout=5)


async def test_an_address_the_guard_denies_is_never_connected() -> None:
    with pytest.raises(httpcore2.ConnectError, match=r"127\.0\.0\.1"):
        await GuardedBackend(AddressGuard(deny=["127.0.0.0/8"])).connect_tcp("127.0.0.1", 9, timeout=5)


@asynccontextmanager
async def tls_server(cert: trustme.LeafCert) -> AsyncIterator[int]:
    """An HTTPS server on loopback answering every request with ``ok``; yields its port."""
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    cert.configure_cert(context)

    async def answer(client: anyio.abc.ByteStream) -> None:
        async with client:
            head = b""
            while b"\r\n\r\n" not in head:
                head += await client.receive()
            await client.send(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\ncontent-type: text/plain\r\n\r\nok")

    listener = anyio.streams.tls.TLSListener(await anyio.create_tcp_listener(local_host="127.0.0.1"), context,
                                             standard_compatible=False)
    port = listener.listener.extra(anyio.abc.SocketAttribute.local_port)
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(listener.serve, answer)
            try:
                yield port
            finally:
                tg.cancel_scope.cancel()
    finally:
        await listener.aclose()


async def test_tls_verifies_the_upstream_and_carries_the_request() -> None:
    authority = trustme.CA()
    async with tls_server(authority.issue_cert("localhost")) as port:
        trusting = ssl.create_default_context()
        authority.configure_trust(trusting)
        async with httpcore2.AsyncConnectionPool(ssl_context=trusting,
                                                 network_backend=GuardedBackend(AddressGuard())) as pool:
            timeouts = {"pool": 5, "connect": 5, "read": 5, "write": 5}
            answer = await pool.request("GET", f"https://localhost:{port}/", extensions={"timeout": timeouts})
            assert (answer.status, answer.content) == (200, b"ok")
        # the system's authorities do not know this one: the handshake fails, as httpcore2's ConnectError
        async with httpcore2.AsyncConnectionPool(ssl_context=ssl.create_default_context(),
                                                 network_backend=GuardedBackend(AddressGuard())) as pool:
            with pytest.raises(httpcore2.ConnectError, match="certificate verify failed"):
                await pool.request("GET", f"https://localhost:{port}/", extensions={"timeout": {"connect": 5}})
