"""The direct route for upstream JSON-RPC POSTs: aiohttp's client, behind the address guard.

A forwarded call or a discovery page is one POST to a configured endpoint, and the HTTP client's own
work was about half of toolvet's CPU per call (docs/benchmarks.md, Gateway). aiohttp's client does the
same POST for about a third of what httpx2's connection layer costs, so :class:`DirectRoute` sends such
POSTs on one ``aiohttp.ClientSession`` per :class:`~toolvet.upstream.http.UpstreamClient` (made on the
first POST, closed with the client), and hands the answer back as an ``httpx2.Response`` whose body
streams as it arrives: reading it (bodies, httpx2's ``EventSource`` for SSE) is the same code on
either route, and failures are raised as the httpx2 exceptions the client would raise.

The guard holds on this route as on httpx2's: names are resolved by :class:`GuardedResolver` (the
guard's own resolution, for every new connection: no DNS cache), so the address connected to is the
one checked; an IP literal, which aiohttp connects to without asking a resolver, is checked when the
route to its URL is made. The session keeps no cookies, decompresses nothing (compressed answers are
refused by the channel), reads no proxy settings and follows no redirect.

Everything else stays on the httpx2 client, explicitly: a URL a proxy from the environment applies to
(``HTTP_PROXY``/``HTTPS_PROXY``/``NO_PROXY``, read by the standard library's own functions), a URL with
userinfo or with characters httpx2 would rewrite, a numeric host that is not an address's canonical
spelling (``127.1``, ``2130706433``: aiohttp refuses them, httpx2 connects), and any redirect (the POST
is sent again through the client, which follows it within the origin).
"""

from __future__ import annotations

import ipaddress
import socket
import urllib.request
from collections.abc import AsyncIterator, Iterator, Mapping
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from typing import Final
from urllib.parse import urlsplit

import aiohttp
import httpx2
from aiohttp.abc import AbstractResolver, ResolveResult

from toolvet.upstream.guard import AddressGuard, Refused

__all__ = ["DirectRoute", "GuardedResolver"]

#: Request URLs whose route is remembered.
_ROUTES_KEPT: Final = 4096
_SAFE: Final = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~:/?#[]@!$&'()*+,;=%")
_NAME: Final = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-.")
#: The longest header line and field an answer may have: h11's (httpx2's parser) limit on the whole head.
_MAX_HEAD: Final = 16 * 1024


class GuardedResolver(AbstractResolver):
    """aiohttp's resolver through the :class:`AddressGuard`: only the addresses the guard allows are
    returned, so only they are connected to; a refusal is an ``OSError`` saying which address and why
    (aiohttp reports it as the connection's failure)."""

    def __init__(self, guard: AddressGuard) -> None:
        self.guard = guard

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        try:
            addresses = await self.guard.addresses(host, port)
        except Refused as exc:
            raise OSError(str(exc)) from exc
        return [ResolveResult(hostname=host, host=address, port=port, proto=0, flags=socket.AI_NUMERICHOST,
                              family=socket.AF_INET6 if ":" in address else socket.AF_INET)
                for address in addresses]

    async def close(self) -> None:
        return None


class _Body(httpx2.AsyncByteStream):
    """An aiohttp answer's body as an httpx2 stream; closing it before the end closes the connection."""

    def __init__(self, response: aiohttp.ClientResponse, request: httpx2.Request) -> None:
        self.response = response
        self.request = request

    async def __aiter__(self) -> AsyncIterator[bytes]:
        with _as_httpx2(self.request):
            async for chunk in self.response.content.iter_any():
                yield chunk

    async def aclose(self) -> None:
        if self.response.content.at_eof():
            self.response.release()  # read to the end: the connection goes back to the pool
        else:
            self.response.close()


@dataclass(frozen=True, slots=True)
class _Route:
    """A URL the direct route takes, parsed once: for aiohttp, and as the request httpx2's responses
    and exceptions name (nothing reads or changes it past that); ``refused`` says why its IP literal
    may not be reached."""

    url: str
    request: httpx2.Request
    refused: str | None = None


class DirectRoute:
    """An aiohttp session for JSON-RPC POSTs that need nothing of the httpx2 client (module docstring)."""

    def __init__(self, guard: AddressGuard, *, max_connections: int | None = 256,
                 keepalive_expiry: float = 4.0) -> None:
        self.guard = guard
        self.max_connections = max_connections
        self.keepalive_expiry = keepalive_expiry
        self._session: aiohttp.ClientSession | None = None
        self._closed = False
        self._routes: dict[str, _Route | None] = {}
        self._timeouts: dict[tuple[float | None, float | None, float | None], aiohttp.ClientTimeout] = {}
        # Read once, as the httpx2 client reads them once when it is made (proxy_mounts).
        self._proxies = urllib.request.getproxies_environment()

    def applies(self, url: str) -> bool:
        """Whether ``url`` takes the direct route (remembered per URL)."""
        return not self._closed and self._route(url) is not None

    def _route(self, url: str) -> _Route | None:
        """The direct route to ``url``, parsed once per URL (None: the client's route)."""
        try:
            return self._routes[url]
        except KeyError:
            pass
        if len(self._routes) >= _ROUTES_KEPT:
            self._routes.clear()
        route = self._routes[url] = self._parse(url) if _direct(url, self._proxies) else None
        return route

    def _parse(self, url: str) -> _Route | None:
        host = urlsplit(url).hostname or ""
        refused = None
        if ":" in host or host.replace(".", "").isdigit():  # what aiohttp connects to without a resolver
            try:
                address = ipaddress.ip_address(host)
            except ValueError:
                return None  # a legacy numeric spelling aiohttp refuses: the client's route (module docstring)
            if (why := self.guard.reason(address)) is not None:
                refused = f"{host} resolves to {address} ({why}), which toolvet may not reach"
        elif not set(host) <= _NAME:
            return None  # a host aiohttp would decode first: only a plain name is judged here as it connects
        return _Route(url, httpx2.Request("POST", url), refused)

    def _client(self) -> aiohttp.ClientSession:
        if self._session is None:
            connector = aiohttp.TCPConnector(
                limit=self.max_connections or 0, limit_per_host=0, keepalive_timeout=self.keepalive_expiry,
                ssl=httpx2.create_ssl_context(), resolver=GuardedResolver(self.guard), use_dns_cache=False,
            )
            self._session = aiohttp.ClientSession(
                connector=connector, cookie_jar=aiohttp.DummyCookieJar(), auto_decompress=False, trust_env=False,
                skip_auto_headers=("User-Agent",), max_line_size=_MAX_HEAD, max_field_size=_MAX_HEAD,
            )
        return self._session

    def _timeout(self, timeout: httpx2.Timeout) -> aiohttp.ClientTimeout:
        key = (timeout.connect, timeout.read, timeout.pool)
        try:
            return self._timeouts[key]
        except KeyError:
            pass
        # aiohttp's "connect" spans the wait for a pooled connection and the connection's making (DNS,
        # TCP, TLS): httpx2's pool and connect timeouts together; each read is bounded as httpx2 bounds it.
        connect = None if timeout.connect is None or timeout.pool is None else timeout.connect + timeout.pool
        made = self._timeouts[key] = aiohttp.ClientTimeout(total=None, connect=connect,
                                                           sock_connect=timeout.connect, sock_read=timeout.read)
        return made

    @asynccontextmanager
    async def post(
        self, url: str, content: bytes, headers: Mapping[str, str], timeout: httpx2.Timeout
    ) -> AsyncIterator[httpx2.Response]:
        """POST ``content`` to a URL the route :meth:`applies` to; the answer as an ``httpx2.Response``
        whose body streams as it arrives. Failures raise httpx2's exceptions, as the client would."""
        route = self._route(url)
        assert route is not None, "post only where the route applies"
        if route.refused is not None:
            raise httpx2.ConnectError(route.refused, request=route.request)
        with _as_httpx2(route.request):
            answer = await self._client().post(route.url, data=content, headers=headers, allow_redirects=False,
                                               timeout=self._timeout(timeout))
        body = _Body(answer, route.request)
        try:
            yield httpx2.Response(answer.status, headers=answer.raw_headers, stream=body, request=route.request)
        finally:
            await body.aclose()

    async def aclose(self) -> None:
        self._closed = True
        if self._session is not None:
            await self._session.close()


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


@contextmanager
def _as_httpx2(request: httpx2.Request) -> Iterator[None]:
    """aiohttp's failures raised as the httpx2 exceptions its client would raise, with the same texts
    where toolvet's own guard or the system said why."""
    try:
        yield
    except aiohttp.ConnectionTimeoutError as exc:
        raise httpx2.ConnectTimeout(str(exc) or "timed out connecting", request=request) from exc
    except (aiohttp.ServerTimeoutError, TimeoutError) as exc:
        raise httpx2.ReadTimeout(str(exc) or "timed out", request=request) from exc
    except aiohttp.ClientConnectorError as exc:
        raise httpx2.ConnectError(str(exc.os_error) or "connection refused", request=request) from exc
    except (aiohttp.ClientPayloadError, aiohttp.ClientResponseError) as exc:
        raise httpx2.RemoteProtocolError(str(exc) or "malformed HTTP answer", request=request) from exc
    except aiohttp.ClientError as exc:
        raise httpx2.ReadError(str(exc) or "the connection broke", request=request) from exc
