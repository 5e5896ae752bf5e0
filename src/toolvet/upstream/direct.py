"""The direct route for upstream JSON-RPC POSTs: httpx2's own connection layer, without its client.

httpx2 is two layers: its client (URL merging, cookies, auth flows, redirects, event hooks, proxy
routing) over httpcore2's connection pool. A forwarded call or a discovery page is one POST to a
configured endpoint, and the client layer was a third of toolvet's CPU per call (docs/benchmarks.md).
:class:`DirectRoute` sends such a POST straight through an ``httpcore2.AsyncConnectionPool`` (one per
origin, :class:`OriginPools`, as the httpx2 client's :class:`GuardedTransport` keeps them), built
with its public ``network_backend`` (:mod:`toolvet.upstream.connections`: asyncio's own transports,
each request leaving in one socket write). The answer is handed back as an
``httpx2.Response``, so reading it (bodies, httpx2's ``EventSource`` for SSE) is the same code either way.

Everything the client layer is needed for stays on the httpx2 client: a URL a proxy from the
environment applies to (``HTTP_PROXY``/``HTTPS_PROXY``/``NO_PROXY``, read by the standard library's
own functions), a URL with userinfo or with characters httpx2 would rewrite, and any redirect (the
POST is sent again through the client, which follows it within the origin). Same stack, same TLS
settings (``httpx2.create_ssl_context``, see :func:`tls_context`), same exceptions: httpcore2's are
turned into httpx2's.
"""

from __future__ import annotations

import functools
import os
import ssl
import time
import urllib.request
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from typing import Final
from urllib.parse import urlsplit

import anyio
import httpcore2
import httpx2

from toolvet.upstream.connections import GuardedBackend
from toolvet.upstream.guard import AddressGuard

__all__ = [
    "DirectRoute", "GuardedTransport", "OriginPools", "proxy_mounts", "tls_context",
]

#: Request URLs whose route is remembered.
_ROUTES_KEPT: Final = 4096
_SAFE: Final = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~:/?#[]@!$&'()*+,;=%")


class _Body(httpx2.AsyncByteStream):
    """An httpcore2 response's body as an httpx2 stream."""

    def __init__(self, response: httpcore2.Response, release: Callable[[], None] | None = None) -> None:
        self.response = response
        self.release = release  # told once the answer is closed (its origin's request is over)

    async def __aiter__(self) -> AsyncIterator[bytes]:
        try:
            async for chunk in self.response.aiter_stream():
                yield chunk
        except httpcore2.TimeoutException as exc:
            raise httpx2.ReadTimeout(str(exc) or "timed out reading the answer") from exc
        except httpcore2.NetworkError as exc:
            raise httpx2.ReadError(str(exc) or "the connection broke") from exc
        except httpcore2.ProtocolError as exc:
            raise httpx2.RemoteProtocolError(str(exc) or "malformed HTTP answer") from exc

    async def aclose(self) -> None:
        try:
            await self.response.aclose()  # the connection goes back to the pool, or is closed
        finally:
            release, self.release = self.release, None
            if release is not None:
                release()


def _direct(url: str, proxies: Mapping[str, str]) -> bool:
    """Whether a POST to ``url`` may skip the httpx2 client: plain http(s), ASCII, no userinfo, and
    no proxy from the environment (``proxies``, as the standard library read it) for it."""
    if not set(url) <= _SAFE:
        return False
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.username or parts.password:
        return False
    if not any(key in proxies for key in (parts.scheme, "all")):
        return True
    return bool(urllib.request.proxy_bypass(parts.hostname))  # NO_PROXY, read by the standard library


def tls_context() -> ssl.SSLContext:
    """httpx2's default TLS context (``httpx2.create_ssl_context()``: certificates verified against the
    system's authorities, or those ``SSL_CERT_FILE`` / ``SSL_CERT_DIR`` name), made once per process for
    each pair of those values rather than once per connection pool. Loading the authorities takes about
    20 ms, and every upstream client has a pool per origin on each of its two routes: each sweep would
    pay it for every upstream. One context
    serves any number of connections; toolvet never changes it after it is made."""
    return _tls_context_for(os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR"))


@functools.lru_cache(maxsize=4)
def _tls_context_for(cert_file: str | None, cert_dir: str | None) -> ssl.SSLContext:
    return httpx2.create_ssl_context()  # reads the two variables itself


@dataclass(frozen=True, slots=True)
class _Route:
    """A URL the direct route takes, parsed once: for httpcore2, and as the request httpx2's
    responses and exceptions name (nothing reads or changes it past that)."""

    url: httpcore2.URL
    request: httpx2.Request


#: Once a second at most, a request closes the pools of origins none of whose requests is in flight and
#: whose last ended longer ago than their connections' keep-alive (their connections have expired).
_SWEEP_SECONDS: Final = 1.0


class _OriginPool:
    """One origin's httpcore2 pool, with what :class:`OriginPools` needs to know to close it when idle."""

    __slots__ = ("in_flight", "pool", "used")

    def __init__(self, pool: httpcore2.AsyncConnectionPool) -> None:
        self.pool = pool
        self.in_flight = 0
        self.used = time.monotonic()

    def begin(self) -> None:
        self.in_flight += 1

    def end(self) -> None:
        self.in_flight -= 1
        self.used = time.monotonic()


class OriginPools:
    """httpcore2 connection pools, one per origin (scheme, host and port), each made on first use with a
    network backend of its own from ``backend``.

    httpcore2's pool passes over every connection it holds, whatever its origin, each time it assigns a
    request and each time it takes an answer back. One pool for all upstreams made every request pay for
    the connections idle to (or streaming from) every other one: after a sweep over 200 hosts, or in front
    of 200 upstreams, about three times the CPU of a POST on a pool of its own (``bench/idle_connections.py``).
    A pool per origin also keeps one upstream's connections (slow answers, long-lived event streams) from
    using up another's: the limits are per origin. A pool none of whose requests is in flight and whose
    last ended more than ``keepalive_expiry`` ago is closed (its connections had expired) by a later
    request, at most once a second."""

    def __init__(self, backend: Callable[[], httpcore2.AsyncNetworkBackend], *, max_connections: int | None,
                 max_keepalive_connections: int, keepalive_expiry: float) -> None:
        self._backend = backend
        self._tls = tls_context()
        self._max_connections = max_connections
        self._max_keepalive = max_keepalive_connections
        self._keepalive_expiry = keepalive_expiry
        self._pools: dict[tuple[bytes, bytes, int | None], _OriginPool] = {}
        self._swept = time.monotonic()

    def __len__(self) -> int:
        return len(self._pools)

    async def take(self, url: httpcore2.URL) -> _OriginPool:
        """The pool of ``url``'s origin, its request begun (call its ``end`` when the answer is closed);
        first the pools left idle are closed, at most once a second."""
        await self._close_idle()
        key = (url.scheme, url.host, url.port)
        found = self._pools.get(key)
        if found is None:
            found = self._pools[key] = _OriginPool(httpcore2.AsyncConnectionPool(
                ssl_context=self._tls, max_connections=self._max_connections,
                max_keepalive_connections=self._max_keepalive, keepalive_expiry=self._keepalive_expiry,
                network_backend=self._backend(),
            ))
        found.begin()
        return found

    async def _close_idle(self) -> None:
        now = time.monotonic()
        if now - self._swept < _SWEEP_SECONDS:
            return
        self._swept = now
        idle = [key for key, origin in self._pools.items()
                if origin.in_flight == 0 and now - origin.used > self._keepalive_expiry]
        for key in idle:
            with anyio.CancelScope(shield=True):
                await self._pools.pop(key).pool.aclose()

    async def aclose(self) -> None:
        pools, self._pools = list(self._pools.values()), {}
        for origin in pools:
            await origin.pool.aclose()


class DirectRoute:
    """httpcore2 pools (one per origin, :class:`OriginPools`) for JSON-RPC POSTs that need nothing of the
    httpx2 client (module docstring)."""

    def __init__(self, guard: AddressGuard, *, max_connections: int | None = 256,
                 max_keepalive_connections: int = 256, keepalive_expiry: float = 4.0) -> None:
        backend = GuardedBackend(guard)
        self.pools = OriginPools(lambda: backend, max_connections=max_connections,
                                 max_keepalive_connections=max_keepalive_connections,
                                 keepalive_expiry=keepalive_expiry)
        self._routes: dict[str, _Route | None] = {}
        # Read once, as the httpx2 client reads them once when it is made (proxy_mounts).
        self._proxies = urllib.request.getproxies_environment()

    def applies(self, url: str) -> bool:
        """Whether ``url`` takes the direct route (remembered per URL)."""
        return self._route(url) is not None

    def _route(self, url: str) -> _Route | None:
        """The direct route to ``url``, parsed once per URL (None: the client's route)."""
        try:
            return self._routes[url]
        except KeyError:
            pass
        if len(self._routes) >= _ROUTES_KEPT:
            self._routes.clear()
        route = self._routes[url] = _Route(httpcore2.URL(url), httpx2.Request("POST", url)) if _direct(
            url, self._proxies) else None
        return route

    @asynccontextmanager
    async def post(
        self, url: str, content: bytes, headers: Mapping[str, str], timeout: httpx2.Timeout
    ) -> AsyncIterator[httpx2.Response]:
        """POST ``content``; the answer as an ``httpx2.Response`` whose body streams as it arrives.
        Failures raise httpx2's exceptions, as the client would."""
        route = self._route(url) or _Route(httpcore2.URL(url), httpx2.Request("POST", url))
        extensions = {"timeout": {"connect": timeout.connect, "read": timeout.read, "write": timeout.write,
                                  "pool": timeout.pool}}
        origin = await self.pools.take(route.url)
        try:
            with _as_httpx2(route.request):
                async with origin.pool.stream("POST", route.url, headers=list(headers.items()), content=content,
                                              extensions=extensions) as answer:
                    yield httpx2.Response(answer.status, headers=answer.headers, stream=_Body(answer),
                                          request=route.request)
        finally:
            origin.end()

    async def aclose(self) -> None:
        await self.pools.aclose()


@contextmanager
def _as_httpx2(request: httpx2.Request) -> Iterator[None]:
    """httpcore2's failures raised as the httpx2 exceptions its client would raise."""
    try:
        yield
    except httpcore2.ConnectTimeout as exc:
        raise httpx2.ConnectTimeout(str(exc) or "timed out connecting", request=request) from exc
    except httpcore2.TimeoutException as exc:
        raise httpx2.ReadTimeout(str(exc) or "timed out", request=request) from exc
    except httpcore2.ConnectError as exc:
        raise httpx2.ConnectError(str(exc) or "connection refused", request=request) from exc
    except httpcore2.NetworkError as exc:
        raise httpx2.ReadError(str(exc) or "the connection broke", request=request) from exc
    except httpcore2.ProtocolError as exc:
        raise httpx2.RemoteProtocolError(str(exc) or "malformed HTTP answer", request=request) from exc


class GuardedTransport(httpx2.AsyncBaseTransport):
    """An httpx2 transport over an httpcore2 pool whose connections the guard checks: what toolvet's
    httpx2 clients (and the SDK's SSE transport) send through, so no route to an upstream skips it."""

    def __init__(self, guard: AddressGuard, *, max_connections: int | None = 256,
                 max_keepalive_connections: int = 256, keepalive_expiry: float = 4.0) -> None:
        backend = GuardedBackend(guard)
        self.pools = OriginPools(lambda: backend, max_connections=max_connections,
                                 max_keepalive_connections=max_keepalive_connections,
                                 keepalive_expiry=keepalive_expiry)

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        assert isinstance(request.stream, httpx2.AsyncByteStream)
        forwarded = httpcore2.Request(
            method=request.method,
            url=httpcore2.URL(scheme=request.url.raw_scheme, host=request.url.raw_host, port=request.url.port,
                              target=request.url.raw_path),
            headers=request.headers.raw, content=request.stream, extensions=request.extensions,
        )
        origin = await self.pools.take(forwarded.url)
        try:
            with _as_httpx2(request):
                answer = await origin.pool.handle_async_request(forwarded)
        except BaseException:
            origin.end()
            raise
        # The request is over when httpx2 closes the answer (an event stream: when the stream ends).
        return httpx2.Response(answer.status, headers=answer.headers, stream=_Body(answer, origin.end),
                               extensions=answer.extensions)

    async def aclose(self) -> None:
        await self.pools.aclose()


def proxy_mounts(guard: AddressGuard) -> dict[str, httpx2.AsyncBaseTransport | None]:
    """httpx2 mounts for the proxies the environment names (``HTTP_PROXY``/``HTTPS_PROXY``/``ALL_PROXY``,
    read by the standard library), hosts in ``NO_PROXY`` going direct through the guard: a client built
    with its own transport does not read them itself. Connections to a proxy are the proxy's route,
    which the operator chose."""
    proxies = urllib.request.getproxies_environment()
    mounts: dict[str, httpx2.AsyncBaseTransport | None] = {}
    for scheme in ("http", "https"):
        proxy = proxies.get(scheme) or proxies.get("all")
        if proxy:
            mounts[f"{scheme}://"] = httpx2.AsyncHTTPTransport(proxy=proxy)
    if mounts:
        for host in filter(None, (h.strip() for h in proxies.get("no", "").split(","))):
            pattern = "all://*" + host if host.startswith(".") else f"all://{host}"
            mounts[pattern] = GuardedTransport(guard)
    return mounts
