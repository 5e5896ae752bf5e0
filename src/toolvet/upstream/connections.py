"""The connections under toolvet's httpcore2 pools: asyncio's own transports, read as the bytes arrive.

httpcore2 speaks HTTP (h11) over a *network backend*, a public extension point: something that opens a
connection and reads and writes bytes on it. Its default backend goes through anyio's socket stream,
which for every read resumes the transport's reading and pauses it again (two ``epoll_ctl`` system calls
under uvloop), yields to the event loop once more, and enters a cancel scope for the timeout; every
write does the last two as well. Under the gateway benchmark those reads and writes were 15 % of
``toolvet serve``'s busy samples (docs/benchmarks.md, Gateway, Round 14).

Here a connection is an :class:`asyncio.Protocol` that keeps whatever arrives in a buffer (reading is
paused only while more than :data:`READ_LIMIT` bytes wait unread). A read takes from the buffer, or waits
on one future whose timeout is a timer of the loop; writes are held until the next read (or until
:data:`FLUSH_BYTES`), so a request's line, headers and body leave in one write and the upstream is woken
once. Whether an idle connection was closed by the server (httpcore2 asks before reusing one) is known
without a system call: the loop has already delivered its end of file. Addresses are resolved and checked
by the :class:`~toolvet.upstream.guard.AddressGuard` first; TLS is the standard library's, through
``loop.start_tls``. Failures are httpcore2's exceptions, as its own backend raises them.
"""

from __future__ import annotations

import asyncio
import socket
import ssl
from collections import deque
from collections.abc import Iterable
from typing import Any, Final, cast

import anyio
import httpcore2

from toolvet.upstream.guard import AddressGuard, Refused

__all__ = ["FLUSH_BYTES", "READ_LIMIT", "Connection", "GuardedBackend"]

#: Held writes go out at once when they reach this size.
FLUSH_BYTES: Final = 64 * 1024
#: Reading from the socket pauses while this many bytes wait unread, and resumes below half of it.
READ_LIMIT: Final = 256 * 1024


class _Receiver(asyncio.Protocol):
    """What the event loop tells of one connection: the bytes received and not yet read, the end of
    the stream, whether the socket takes more writes."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.chunks: deque[bytes] = deque()
        self.unread = 0
        self.ended = False  # no more bytes will arrive (end of file, or the connection lost)
        self.failure: BaseException | None = None  # why the connection was lost, if it broke
        self.reading_paused = False
        self.writing_paused = False
        self.waiter: asyncio.Future[None] | None = None  # a read or a drain waiting

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # uvloop's transports are not its subclasses

    def data_received(self, data: bytes) -> None:
        self.chunks.append(data)
        self.unread += len(data)
        if self.unread > READ_LIMIT and not self.reading_paused and self.transport is not None:
            self.reading_paused = True
            self.transport.pause_reading()
        self._wake()

    def eof_received(self) -> bool:
        self.ended = True
        self._wake()
        return False  # the transport closes itself

    def connection_lost(self, exc: Exception | None) -> None:
        self.ended = True
        self.failure = exc
        self.writing_paused = False
        self._wake()

    def pause_writing(self) -> None:
        self.writing_paused = True

    def resume_writing(self) -> None:
        self.writing_paused = False
        self._wake()

    def _wake(self) -> None:
        waiter = self.waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)


def _expire(waiter: asyncio.Future[None], expired: type[httpcore2.TimeoutException], timeout: float) -> None:
    if not waiter.done():
        waiter.set_exception(expired(f"timed out after {timeout:g} s"))


class Connection(httpcore2.AsyncNetworkStream):
    """One connection as httpcore2 uses it (module docstring)."""

    def __init__(self, transport: asyncio.Transport, receiver: _Receiver) -> None:
        self.transport = transport
        self.receiver = receiver
        self.held: list[bytes] = []
        self.held_size = 0
        self.writes = 0  # writes handed to the transport (tests)

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        if self.held:
            await self.flush(timeout)
        receiver = self.receiver
        while not receiver.chunks and not receiver.ended:  # woken for room to write too: not the end
            await self._wait(timeout, httpcore2.ReadTimeout)
        if not receiver.chunks:
            if receiver.failure is not None:
                raise httpcore2.ReadError(str(receiver.failure) or "the connection broke") from receiver.failure
            return b""  # the end of the stream
        chunk = receiver.chunks.popleft()
        if len(chunk) > max_bytes:
            receiver.chunks.appendleft(chunk[max_bytes:])
            chunk = chunk[:max_bytes]
        receiver.unread -= len(chunk)
        if receiver.reading_paused and receiver.unread <= READ_LIMIT // 2 and not receiver.ended:
            receiver.reading_paused = False
            self.transport.resume_reading()
        return chunk

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        if not buffer:
            return
        self.held.append(buffer)
        self.held_size += len(buffer)
        if self.held_size >= FLUSH_BYTES:
            await self.flush(timeout)

    async def flush(self, timeout: float | None = None) -> None:
        """Send what is held, in one write; wait while the socket takes no more."""
        if not self.held:
            return
        data = self.held[0] if len(self.held) == 1 else b"".join(self.held)
        self.held.clear()
        self.held_size = 0
        receiver = self.receiver
        if self.transport.is_closing() or (receiver.ended and receiver.failure is not None):
            raise httpcore2.WriteError(str(receiver.failure or "the connection is closed"))
        self.writes += 1
        self.transport.write(data)
        while receiver.writing_paused and not receiver.ended:
            await self._wait(timeout, httpcore2.WriteTimeout)
        if receiver.failure is not None:
            raise httpcore2.WriteError(str(receiver.failure) or "the connection broke") from receiver.failure

    async def _wait(self, timeout: float | None, expired: type[httpcore2.TimeoutException]) -> None:
        """Until the receiver has news (bytes, the end, room to write), or ``timeout`` seconds."""
        loop = asyncio.get_running_loop()
        waiter = self.receiver.waiter = loop.create_future()
        timer = None
        if timeout is not None:
            timer = loop.call_later(timeout, _expire, waiter, expired, timeout)
        try:
            await waiter
        finally:
            self.receiver.waiter = None
            if timer is not None:
                timer.cancel()

    async def aclose(self) -> None:
        self.held.clear()
        if self.transport.get_write_buffer_size():
            # Bytes the peer has not taken: close() would wait for them as long as it never reads (a
            # hostile upstream kept the socket open for ever); the connection is dropped instead.
            self.transport.abort()
        else:
            self.transport.close()

    async def start_tls(
        self, ssl_context: ssl.SSLContext, server_hostname: str | None = None, timeout: float | None = None
    ) -> httpcore2.AsyncNetworkStream:
        await self.flush(timeout)
        loop = asyncio.get_running_loop()
        try:
            with anyio.fail_after(timeout):
                transport = await loop.start_tls(self.transport, self.receiver, ssl_context,
                                                 server_hostname=server_hostname)
        except TimeoutError as exc:
            self.transport.close()
            raise httpcore2.ConnectTimeout(f"TLS handshake with {server_hostname} timed out") from exc
        except (ssl.SSLError, OSError, ConnectionError) as exc:
            self.transport.close()
            raise httpcore2.ConnectError(str(exc) or "the TLS handshake failed") from exc
        if transport is None:  # the connection closed during the handshake
            raise httpcore2.ConnectError("the connection closed during the TLS handshake")
        self.receiver.transport = transport
        return Connection(transport, self.receiver)

    def get_extra_info(self, info: str) -> Any:
        if info == "is_readable":
            # idle and readable: the server closed it, or sent what it should not have
            return bool(self.receiver.chunks) or self.receiver.ended
        if info == "ssl_object":
            return self.transport.get_extra_info("ssl_object")
        if info == "client_addr":
            return self.transport.get_extra_info("sockname")
        if info == "server_addr":
            return self.transport.get_extra_info("peername")
        if info == "socket":
            return self.transport.get_extra_info("socket")
        return None


def _connected(transport: asyncio.Transport, receiver: asyncio.BaseProtocol,
               socket_options: Iterable[Any] | None) -> Connection:
    assert isinstance(receiver, _Receiver)
    sock = transport.get_extra_info("socket")
    if sock is not None:
        try:
            if sock.family in (socket.AF_INET, socket.AF_INET6):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            for option in socket_options or ():
                sock.setsockopt(*option)
        except OSError as exc:
            transport.close()
            raise httpcore2.ConnectError(f"setting a socket option failed: {exc}") from exc
    return Connection(transport, receiver)


class GuardedBackend(httpcore2.AsyncNetworkBackend):
    """httpcore2's network backend for toolvet's pools: :class:`Connection` streams, made only to
    addresses the :class:`AddressGuard` allows (the name is resolved here and the connection made to an
    allowed address; TLS still verifies and sends the name). A refusal is httpcore2's ``ConnectError``,
    saying which address and why."""

    def __init__(self, guard: AddressGuard) -> None:
        self.guard = guard

    async def connect_tcp(
        self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore2.AsyncNetworkStream:
        loop = asyncio.get_running_loop()
        try:
            with anyio.fail_after(timeout):
                addresses = await self.guard.addresses(host, port)
        except (Refused, OSError) as exc:
            raise httpcore2.ConnectError(str(exc)) from exc
        except TimeoutError as exc:
            raise httpcore2.ConnectTimeout(f"resolving {host} timed out") from exc
        failure: Exception | None = None
        for address in addresses:
            try:
                with anyio.fail_after(timeout):
                    transport, receiver = await loop.create_connection(
                        _Receiver, address, port, local_addr=(local_address, 0) if local_address else None)
            except TimeoutError as exc:
                raise httpcore2.ConnectTimeout(f"connecting to {address} port {port} timed out") from exc
            except OSError as exc:
                failure = httpcore2.ConnectError(str(exc) or f"connecting to {address} port {port} failed")
                continue
            return _connected(transport, receiver, socket_options)
        assert failure is not None
        raise failure

    async def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None
    ) -> httpcore2.AsyncNetworkStream:
        loop = asyncio.get_running_loop()
        try:
            with anyio.fail_after(timeout):
                transport, receiver = await loop.create_unix_connection(_Receiver, path)
        except TimeoutError as exc:
            raise httpcore2.ConnectTimeout(f"connecting to {path} timed out") from exc
        except OSError as exc:
            raise httpcore2.ConnectError(str(exc) or f"connecting to {path} failed") from exc
        return _connected(transport, receiver, socket_options)

    async def sleep(self, seconds: float) -> None:
        await anyio.sleep(seconds)
