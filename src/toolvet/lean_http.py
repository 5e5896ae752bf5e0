"""A lean HTTP/1.1 client for toolvet's upstream JSON-RPC POSTs: h11 over asyncio protocols.

Every forwarded ``tools/call`` and every discovery request is one small POST to an upstream. Through
httpx2 each costs about 1 ms of CPU on this kind of machine, most of it in the layers between the
request and the socket (anyio streams with a cancel scope per read and write, the connection pool's
locks and its per-request poll of every idle connection, request and response models); with h11 fed
straight from an ``asyncio.Protocol`` the same request costs about 35 % less
(docs/benchmarks.md, "Gateway Round 3"). So the POSTs take this path and everything else stays on
httpx2:

- The HTTP itself is h11's: request framing, response parsing, chunked and close-delimited bodies,
  keep-alive decisions. This module only moves bytes between h11 and a socket.
- A connection is kept per origin for reuse and is known to be closed the moment the peer closes it
  (``connection_lost``), so nothing polls idle connections; one idle longer than :data:`IDLE_SECONDS`
  is closed instead of reused, before the common 5 s server keep-alive timeout can race a request.
- Timeouts are httpx2's: connect, then each wait for the peer to read or to answer.
- Failures raise httpx2's own exceptions (``ConnectError``, ``ReadTimeout``, ``RemoteProtocolError``,
  ...), so callers handle both paths alike.
- No compression is asked for; a server that compresses anyway with gzip or deflate is decoded.
- Proxies and redirects are left to httpx2: :class:`toolvet.upstream_http.UpstreamClient` sends a
  request here only when httpx2 would use its direct connection pool for the URL, and a redirect
  answer is sent again through httpx2, which follows it within the origin as the SDK does.
"""

from __future__ import annotations

import asyncio
import re
import ssl
import time
import zlib
from collections import deque
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import urlsplit

import anyio
import h11
import httpx2

__all__ = ["IDLE_SECONDS", "LeanPool", "LeanResponse", "Origin", "origin_of"]

#: An idle connection older than this is closed rather than reused (uvicorn closes at 5 s).
IDLE_SECONDS: Final = 4.0
#: Received bytes buffered beyond this pause reading until the consumer catches up.
READ_HIGH_WATER: Final = 256 * 1024
#: Idle connections kept per origin.
MAX_IDLE: Final = 256


@dataclass(frozen=True, slots=True)
class Origin:
    scheme: str
    host: str
    port: int

    @property
    def host_header(self) -> str:
        default = 443 if self.scheme == "https" else 80
        host = f"[{self.host}]" if ":" in self.host else self.host
        return host if self.port == default else f"{host}:{self.port}"


#: A request target sent as it is written: RFC 3986 path and query characters only (httpx2 would
#: percent-encode anything else, so such a URL goes through httpx2).
_PLAIN_TARGET: Final = re.compile(r"[A-Za-z0-9\-._~!$&'()*+,;=:@/?%]+")


def origin_of(url: str) -> tuple[Origin, str] | None:
    """The origin and request target of an ``http``/``https`` URL, or None for anything else
    (userinfo, another scheme, no host, a non-ASCII host, characters a URL must encode): those go
    through httpx2, which normalises them."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    host = parts.hostname
    if scheme not in ("http", "https") or not host or not host.isascii() or "@" in parts.netloc:
        return None
    try:
        port = parts.port or (443 if scheme == "https" else 80)
    except ValueError:
        return None
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    if not _PLAIN_TARGET.fullmatch(target):
        return None
    return Origin(scheme, host, port), target


class _Connection(asyncio.Protocol):
    """One socket and its h11 state; the reader waits on :meth:`next_event`."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.transport: asyncio.Transport | None = None
        self.h11 = h11.Connection(h11.CLIENT)
        self.closed = False
        self.idle_since = 0.0
        self._chunks: list[bytes] = []
        self._buffered = 0
        self._eof = False
        self._eof_fed = False
        self._paused_reading = False
        self._waiter: asyncio.Future[None] | None = None
        self._drain: asyncio.Future[None] | None = None

    # asyncio.Protocol ------------------------------------------------------------------------------
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self._chunks.append(data)
        self._buffered += len(data)
        if self._buffered > READ_HIGH_WATER and not self._paused_reading and self.transport is not None:
            self._paused_reading = True
            self.transport.pause_reading()
        self._wake()

    def eof_received(self) -> bool | None:
        self._eof = True
        self.closed = True
        self._wake()
        return None  # let the transport close itself

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self._eof = True
        self._wake()
        if self._drain is not None and not self._drain.done():
            self._drain.set_result(None)

    def pause_writing(self) -> None:
        if self._drain is None or self._drain.done():
            self._drain = self.loop.create_future()

    def resume_writing(self) -> None:
        if self._drain is not None and not self._drain.done():
            self._drain.set_result(None)

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    # the reader's side -----------------------------------------------------------------------------
    async def send(self, data: bytes, timeout: float | None) -> None:
        if self.closed or self.transport is None:
            raise httpx2.RemoteProtocolError("Server disconnected before the request was sent.")
        self.transport.write(data)
        if self._drain is not None and not self._drain.done():
            await self._wait(self._drain, timeout, httpx2.WriteTimeout)

    async def next_event(self, timeout: float | None) -> Any:
        while True:
            try:
                event = self.h11.next_event()
            except h11.RemoteProtocolError as exc:
                raise httpx2.RemoteProtocolError(_remote_text(exc)) from None
            if event is not h11.NEED_DATA:
                return event
            if self._chunks:
                data = self._chunks[0] if len(self._chunks) == 1 else b"".join(self._chunks)
                self._chunks.clear()
                self._buffered = 0
                if self._paused_reading and self.transport is not None:
                    self._paused_reading = False
                    self.transport.resume_reading()
                self.h11.receive_data(data)
                continue
            if self._eof:
                if self._eof_fed:  # pragma: no cover - h11 never asks for data after EOF
                    raise httpx2.RemoteProtocolError("Server disconnected without sending a response.")
                self._eof_fed = True
                self.h11.receive_data(b"")
                continue
            self._waiter = self.loop.create_future()
            try:
                await self._wait(self._waiter, timeout, httpx2.ReadTimeout)
            finally:
                self._waiter = None

    async def _wait(self, future: asyncio.Future[None], timeout: float | None, error: type[Exception]) -> None:
        if timeout is None:
            await future
            return
        timer = self.loop.call_later(timeout, _expire, future, error)
        try:
            await future
        finally:
            timer.cancel()

    def reusable(self) -> bool:
        return (not self.closed and self.h11.our_state is h11.DONE and self.h11.their_state is h11.DONE)

    def close(self) -> None:
        self.closed = True
        if self.transport is not None:
            self.transport.close()


def _expire(future: asyncio.Future[None], error: type[Exception]) -> None:
    if not future.done():
        future.set_exception(error("timed out"))


class LeanResponse:
    """What :class:`toolvet.discovery.http_channel.HttpChannel` reads of an answer: status, headers
    (lower-case names; repeated ones joined by ``", "`` as httpx2 does) and the body as it arrives."""

    def __init__(self, connection: _Connection, event: h11.Response, read_timeout: float | None) -> None:
        self._connection = connection
        self._read_timeout = read_timeout
        self.status_code: int = event.status_code
        self.reason_phrase: str = event.reason.decode("latin-1")
        headers: dict[str, str] = {}
        for name, value in event.headers:
            key, text = name.decode("latin-1"), value.decode("latin-1")
            headers[key] = f"{headers[key]}, {text}" if key in headers else text
        self.headers: Mapping[str, str] = headers
        self.complete = False
        encoding = headers.get("content-encoding", "identity").strip().lower()
        if encoding in ("gzip", "deflate", "x-gzip"):
            self._decoder: Any = zlib.decompressobj(zlib.MAX_WBITS | 32)  # gzip or zlib, by their header
        elif encoding in ("", "identity"):
            self._decoder = None
        else:
            raise httpx2.DecodingError(f"unsupported content-encoding {encoding!r}")

    async def aiter_bytes(self) -> AsyncIterator[bytes]:
        while not self.complete:
            event = await self._connection.next_event(self._read_timeout)
            if type(event) is h11.Data:
                data = bytes(event.data)
                if self._decoder is not None:
                    try:
                        data = self._decoder.decompress(data)
                    except zlib.error as exc:
                        raise httpx2.DecodingError(f"cannot decode the response body: {exc}") from None
                if data:
                    yield data
            elif type(event) is h11.EndOfMessage:
                self.complete = True
            elif type(event) is h11.ConnectionClosed:  # pragma: no cover - h11 raises first
                raise httpx2.RemoteProtocolError("Server disconnected before the response ended.")


class LeanPool:
    """Keep-alive connections per origin; :meth:`stream` sends one request over one of them."""

    def __init__(self, *, ssl_context: ssl.SSLContext | None = None, user_agent: str = "toolvet") -> None:
        self._idle: dict[Origin, deque[_Connection]] = {}
        self._ssl_context = ssl_context
        self._user_agent = user_agent
        self._closed = False
        self.opened = 0  # connections opened (tests, diagnostics)

    @asynccontextmanager
    async def stream(
        self, method: str, origin: Origin, target: str, *, content: bytes, headers: Mapping[str, str],
        timeout: httpx2.Timeout,
    ) -> AsyncIterator[LeanResponse]:
        """Send one request and yield its answer once the status and headers are in; the connection
        goes back to the pool if the body was read to its end, and is closed otherwise."""
        connection = await self._acquire(origin, timeout.connect)
        done = False
        try:
            head: list[tuple[str, str]] = [("host", origin.host_header), ("user-agent", self._user_agent)]
            head.extend(headers.items())
            head.append(("content-length", str(len(content))))
            try:
                parts = [connection.h11.send(h11.Request(method=method, target=target, headers=head))]
                if content:
                    parts.append(connection.h11.send(h11.Data(data=content)))
                parts.append(connection.h11.send(h11.EndOfMessage()))
            except (h11.LocalProtocolError, UnicodeEncodeError) as exc:
                raise httpx2.LocalProtocolError(f"cannot send the request: {exc}") from None
            await connection.send(b"".join(part for part in parts if part), timeout.write)
            while True:
                event = await connection.next_event(timeout.read)
                if type(event) is h11.Response:
                    break
                if type(event) is h11.ConnectionClosed:
                    raise httpx2.RemoteProtocolError("Server disconnected without sending a response.")
                # an InformationalResponse (1xx): the answer follows
            response = LeanResponse(connection, event, timeout.read)
            yield response
            done = response.complete
        finally:
            if done and connection.reusable() and not self._closed:
                connection.h11.start_next_cycle()
                connection.idle_since = time.monotonic()
                idle = self._idle.setdefault(origin, deque())
                if len(idle) < MAX_IDLE:
                    idle.append(connection)
                else:
                    connection.close()
            else:
                connection.close()

    async def _acquire(self, origin: Origin, connect_timeout: float | None) -> _Connection:
        idle = self._idle.get(origin)
        if idle:
            now = time.monotonic()
            while idle:
                connection = idle.pop()  # the most recently used: the one most surely still open
                if not connection.closed and now - connection.idle_since < IDLE_SECONDS:
                    return connection
                connection.close()
        return await self._connect(origin, connect_timeout)

    async def _connect(self, origin: Origin, connect_timeout: float | None) -> _Connection:
        loop = asyncio.get_running_loop()
        context = None
        if origin.scheme == "https":
            if self._ssl_context is None:  # made once: loading the trust store costs tens of ms
                self._ssl_context = httpx2.create_ssl_context()
            context = self._ssl_context
        try:
            with anyio.fail_after(connect_timeout):
                _, connection = await loop.create_connection(
                    lambda: _Connection(loop), origin.host, origin.port, ssl=context,
                    server_hostname=origin.host if context is not None else None)
        except TimeoutError:
            raise httpx2.ConnectTimeout("timed out") from None
        except (OSError, ssl.SSLError) as exc:
            raise httpx2.ConnectError(str(exc) or type(exc).__name__) from None
        self.opened += 1
        return connection

    async def aclose(self) -> None:
        self._closed = True
        for idle in self._idle.values():
            while idle:
                idle.pop().close()
        self._idle.clear()


def _remote_text(exc: h11.RemoteProtocolError) -> str:
    """h11's reason, or httpcore2's words for a peer that closed before answering at all."""
    text = str(exc)
    if not text or ("ConnectionClosed" in text and "SEND_RESPONSE" in text):
        return "Server disconnected without sending a response."
    return text
