"""The HTTP client toolvet talks to upstream servers on (discovery and forwarded calls): httpx2, with
each request sent in one write and idle connections checked without rebuilding socket metadata.

httpcore2 (under httpx2) writes an HTTP/1.1 request in two socket writes: the request line and
headers, then the body. On every upstream request that is two ``send`` syscalls in toolvet, and the
upstream is usually woken twice (once for the headers, once for the body) before it can parse the
request. :class:`CoalescingBackend` wraps httpcore2's own network backend so a connection's writes
are buffered and go out in one ``send`` when the client next reads (it always reads the response
after writing the request) or when the buffer passes :data:`FLUSH_BYTES` (a large or streamed body
still goes out as it is produced).

httpcore2's pool also asks every idle connection whether its socket turned readable (the server
closed it) each time a request starts or ends. Through anyio that question builds the stream's whole
attribute map, a ``getpeername`` syscall included, per connection and per ask: with a sweep's pool of
32 connections it cost more than the JSON decoding of the listings. :class:`CoalescingStream` keeps
the raw socket it was built on and answers with the same zero-timeout poll httpcore2 uses.

The HTTP itself stays httpcore2's: framing, keep-alive, TLS, proxies (httpx2 mounts them beside
this transport) and timeouts are unchanged.

:class:`UpstreamClient` is that ``httpx2.AsyncClient`` plus a :class:`toolvet.lean_http.LeanPool`: the
JSON-RPC POSTs of discovery and of forwarded calls go through the lean pool whenever httpx2 would
send them on its own direct connections (not through a proxy); everything else (redirects followed,
``DELETE``, listening streams) goes through httpx2 as before.
"""

from __future__ import annotations

import ssl
from collections.abc import Iterable
from typing import Any, Final

import httpcore2
import httpx2
from httpcore2._utils import is_socket_readable  # the very check the pool's own streams make

from toolvet.lean_http import IDLE_SECONDS, LeanPool, Origin, origin_of

__all__ = ["FLUSH_BYTES", "CoalescingBackend", "CoalescingStream", "UpstreamClient", "coalescing",
           "upstream_client"]

#: A buffered request goes out at once when it reaches this size.
FLUSH_BYTES: Final = 64 * 1024


class CoalescingStream(httpcore2.AsyncNetworkStream):
    """A network stream whose writes are held until the next read (or until FLUSH_BYTES)."""

    def __init__(self, inner: httpcore2.AsyncNetworkStream) -> None:
        self._inner = inner
        sock = inner.get_extra_info("socket")  # looked up once, for is_readable
        # (asyncio hands out a TransportSocket, not a socket.socket; both have what the poll needs)
        self._socket = sock if callable(getattr(sock, "fileno", None)) else None
        self._pending: list[bytes] = []
        self._size = 0
        self.writes = 0  # socket writes issued (tests)

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        if not buffer:
            return
        self._pending.append(buffer)
        self._size += len(buffer)
        if self._size >= FLUSH_BYTES:
            await self.flush(timeout)

    async def flush(self, timeout: float | None = None) -> None:
        """Send what is buffered, in one write."""
        if not self._pending:
            return
        data = self._pending[0] if len(self._pending) == 1 else b"".join(self._pending)
        self._pending.clear()
        self._size = 0
        self.writes += 1
        await self._inner.write(data, timeout)

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        await self.flush(timeout)
        return await self._inner.read(max_bytes, timeout)

    async def aclose(self) -> None:
        self._pending.clear()
        self._size = 0
        await self._inner.aclose()

    async def start_tls(
        self, ssl_context: ssl.SSLContext, server_hostname: str | None = None, timeout: float | None = None
    ) -> httpcore2.AsyncNetworkStream:
        await self.flush(timeout)
        return CoalescingStream(await self._inner.start_tls(ssl_context, server_hostname, timeout))

    def get_extra_info(self, info: str) -> Any:
        if info == "is_readable" and self._socket is not None:
            return is_socket_readable(self._socket)
        return self._inner.get_extra_info(info)


class CoalescingBackend(httpcore2.AsyncNetworkBackend):
    """httpcore2's network backend, handing out :class:`CoalescingStream` connections."""

    def __init__(self, inner: httpcore2.AsyncNetworkBackend | None = None) -> None:
        self._inner = inner if inner is not None else httpcore2.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore2.AsyncNetworkStream:
        stream = await self._inner.connect_tcp(host, port, timeout, local_address, socket_options)
        return CoalescingStream(stream)

    async def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None
    ) -> httpcore2.AsyncNetworkStream:
        return CoalescingStream(await self._inner.connect_unix_socket(path, timeout, socket_options))

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


#: Request URLs whose route (lean or not) is remembered per client.
_ROUTES_KEPT: Final = 4096


class UpstreamClient(httpx2.AsyncClient):
    """An ``httpx2.AsyncClient`` built as usual (env proxies, TLS settings), whose direct connections
    coalesce their writes, with a :class:`LeanPool` beside it for JSON-RPC POSTs (:meth:`lean_route`).

    httpx2 takes no network backend (and passing a ``transport`` would turn its environment proxies
    off), so the backend of the client's own connection pool is wrapped in place; should a later httpx2
    build its pool differently, the client keeps httpcore2's plain backend (correct, one write more).
    """

    def __init__(self, *, timeout: httpx2.Timeout, limits: httpx2.Limits) -> None:
        # httpx2's idle connections too are dropped before a server's common 5 s keep-alive close can
        # race a request on them (lean_http.IDLE_SECONDS).
        expiry = limits.keepalive_expiry
        limits = httpx2.Limits(max_connections=limits.max_connections,
                               max_keepalive_connections=limits.max_keepalive_connections,
                               keepalive_expiry=IDLE_SECONDS if expiry is None else min(expiry, IDLE_SECONDS))
        super().__init__(timeout=timeout, limits=limits)
        pool = getattr(self._transport, "_pool", None)
        if isinstance(pool, httpcore2.AsyncConnectionPool) and isinstance(
            getattr(pool, "_network_backend", None), httpcore2.AsyncNetworkBackend
        ):
            pool._network_backend = CoalescingBackend(pool._network_backend)
        # The lean path uses the TLS context httpx2 built for this client (verify, SSL_CERT_FILE, ...).
        context = getattr(pool, "_ssl_context", None)
        self.lean = LeanPool(ssl_context=context if isinstance(context, ssl.SSLContext) else None,
                             user_agent=self.headers.get("user-agent", "toolvet"))
        self._routes: dict[str, tuple[Origin, str] | None] = {}

    def lean_route(self, url: str) -> tuple[Origin, str] | None:
        """Origin and target for sending to ``url`` on the lean pool, or None when httpx2 must send it
        (a proxy applies, or ``lean_http.origin_of`` refuses the URL)."""
        try:
            return self._routes[url]
        except KeyError:
            pass
        route = origin_of(url)
        if route is not None:
            try:
                direct = self._transport_for_url(httpx2.URL(url)) is self._transport
            except httpx2.InvalidURL:
                direct = False
            route = route if direct else None
        if len(self._routes) >= _ROUTES_KEPT:
            self._routes.clear()
        self._routes[url] = route
        return route

    async def aclose(self) -> None:
        await self.lean.aclose()
        await super().aclose()


def upstream_client(*, timeout: httpx2.Timeout, limits: httpx2.Limits) -> UpstreamClient:
    """The client toolvet talks to upstream servers on (see :class:`UpstreamClient`)."""
    return UpstreamClient(timeout=timeout, limits=limits)


def coalescing(client: httpx2.AsyncClient) -> bool:
    """Whether ``client``'s direct connections coalesce their writes (tests, diagnostics)."""
    pool = getattr(getattr(client, "_transport", None), "_pool", None)
    return isinstance(getattr(pool, "_network_backend", None), CoalescingBackend)
