"""The httpx2 side of toolvet's upstream connections: a transport whose every connection the
:class:`~toolvet.upstream.guard.AddressGuard` checks, and the environment's proxies mounted beside it.

Every httpx2 client toolvet talks to upstream servers on (discovery, OAuth, the SDK's SSE transport,
and the JSON-RPC requests the direct route does not take: see ``upstream.direct``) sends through
:class:`GuardedTransport`: an ``httpcore2.AsyncConnectionPool`` over :class:`GuardedBackend`, which
resolves each name through the guard and connects only to an address it allowed.
"""

from __future__ import annotations

import urllib.request
from collections.abc import AsyncIterator, Iterable, Iterator
from contextlib import contextmanager
from typing import Any

import anyio
import httpcore2
import httpx2

from toolvet.upstream.guard import AddressGuard, Refused

__all__ = ["GuardedBackend", "GuardedTransport", "proxy_mounts"]


class GuardedBackend(httpcore2.AsyncNetworkBackend):
    """httpcore2's anyio backend, connecting only to addresses the :class:`AddressGuard` allows: the
    name is resolved here and the connection made to an allowed address (TLS still verifies and sends
    the name). A refusal is httpcore2's ``ConnectError``, saying which address and why."""

    def __init__(self, guard: AddressGuard) -> None:
        self.guard = guard
        self.inner = httpcore2.AnyIOBackend()

    async def connect_tcp(
        self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore2.AsyncNetworkStream:
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
                return await self.inner.connect_tcp(address, port, timeout, local_address, socket_options)
            except httpcore2.ConnectError as exc:
                failure = exc
        assert failure is not None
        raise failure

    async def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None
    ) -> httpcore2.AsyncNetworkStream:
        return await self.inner.connect_unix_socket(path, timeout, socket_options)

    async def sleep(self, seconds: float) -> None:
        await self.inner.sleep(seconds)



class _Body(httpx2.AsyncByteStream):
    """An httpcore2 response's body as an httpx2 stream."""

    def __init__(self, response: httpcore2.Response) -> None:
        self.response = response

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
        await self.response.aclose()  # the connection goes back to the pool, or is closed



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
        self.pool = httpcore2.AsyncConnectionPool(
            ssl_context=httpx2.create_ssl_context(), max_connections=max_connections,
            max_keepalive_connections=max_keepalive_connections, keepalive_expiry=keepalive_expiry,
            network_backend=GuardedBackend(guard),
        )

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        assert isinstance(request.stream, httpx2.AsyncByteStream)
        forwarded = httpcore2.Request(
            method=request.method,
            url=httpcore2.URL(scheme=request.url.raw_scheme, host=request.url.raw_host, port=request.url.port,
                              target=request.url.raw_path),
            headers=request.headers.raw, content=request.stream, extensions=request.extensions,
        )
        with _as_httpx2(request):
            answer = await self.pool.handle_async_request(forwarded)
        return httpx2.Response(answer.status, headers=answer.headers, stream=_Body(answer),
                               extensions=answer.extensions)

    async def aclose(self) -> None:
        await self.pool.aclose()


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
