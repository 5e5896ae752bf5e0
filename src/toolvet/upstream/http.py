"""Streamable HTTP: one raw JSON-RPC channel per endpoint, on one shared ``httpx2.AsyncClient``.

Every JSON-RPC message is one POST. The answer is read as the server sends it: an
``application/json`` body, or a ``text/event-stream`` whose events are parsed by httpx2's own
:class:`httpx2.EventSource` (linear in the bytes read, each event capped). Notifications and server
requests that arrive on a request's stream before its answer go to the request's
:class:`~toolvet.upstream.protocol.Hooks` (a server request is answered with a POST of its own).
HTTP-level rejections become the JSON-RPC errors the SDK's transport would raise, so the era
negotiation sees what the SDK client sees, and a forgotten session is :class:`SessionExpired` in
every shape servers use.

httpx2 is the one HTTP stack (the SDK's own): redirects are followed only within the endpoint's
origin and only when they keep the method, as the SDK's transports do.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, Final

import anyio
import httpx2
from mcp.client.auth.utils import extract_field_from_www_auth
from mcp.types import INTERNAL_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, PARSE_ERROR
from mcp.types.version import MODERN_PROTOCOL_VERSIONS

from toolvet.jsontext import compact, json_depth_exceeds, loads
from toolvet.upstream.direct import DirectRoute, GuardedTransport, proxy_mounts
from toolvet.upstream.errors import ChannelError, RpcError, SessionExpired
from toolvet.upstream.guard import AddressGuard
from toolvet.upstream.oauth import TokenSource
from toolvet.upstream.protocol import NO_HOOKS, Hooks, wire

__all__ = ["SESSION_ID_HEADER", "HttpChannel", "UpstreamClient", "http_client", "stream_within_origin"]

SESSION_ID_HEADER: Final = "mcp-session-id"
# Answers are asked for uncompressed: a compressed body can inflate a thousandfold inside one read
# (a 1 MiB gzip bomb is 1 GiB), and MCP's small JSON answers gain little from compression.
_BASE_HEADERS: Final = {"accept": "application/json, text/event-stream", "content-type": "application/json",
                        "accept-encoding": "identity"}
#: How often one request's closed SSE answer is resumed, and the longest wait the server may ask for.
_RESUMPTIONS: Final = 3
_MAX_RETRY_WAIT: Final = 5.0
#: What the TypeScript SDK's servers answer (HTTP 400) for a session they do not know.
_NO_VALID_SESSION: Final = -32000


class UpstreamClient(httpx2.AsyncClient):
    """The client toolvet talks to upstream servers on: httpx2 over a transport whose every connection
    the :class:`~toolvet.upstream.guard.AddressGuard` checks, the environment's proxies mounted, idle
    connections dropped after 4 s (before a server's common 5 s keep-alive close can race a request
    on them), redirects not followed by httpx2 (see :func:`stream_within_origin`), and the
    :class:`~toolvet.upstream.direct.DirectRoute` beside it for JSON-RPC POSTs."""

    def __init__(self, *, timeout: httpx2.Timeout, guard: AddressGuard, max_connections: int | None = 256,
                 max_keepalive: int = 256) -> None:
        transport = GuardedTransport(guard, max_connections=max_connections, max_keepalive_connections=max_keepalive)
        super().__init__(timeout=timeout, transport=transport, mounts=proxy_mounts(guard))
        self.guard = guard
        self.direct = DirectRoute(guard, max_connections=max_connections, max_keepalive_connections=max_keepalive)

    async def aclose(self) -> None:
        await self.direct.aclose()
        await super().aclose()

    async def __aexit__(self, *exc: Any) -> None:
        # httpx2's client leaves through its transports' own exits, not aclose: the direct pool too.
        await self.direct.aclose()
        await super().__aexit__(*exc)


def http_client(
    *, timeout: httpx2.Timeout, guard: AddressGuard | None = None, max_connections: int | None = 256,
    max_keepalive: int = 256,
) -> UpstreamClient:
    """The client toolvet talks to upstream servers on (see :class:`UpstreamClient`); every connection it
    makes is checked by ``guard`` (the default one when None)."""
    return UpstreamClient(timeout=timeout, guard=guard or AddressGuard(), max_connections=max_connections,
                          max_keepalive=max_keepalive)


def _same_origin(sent: httpx2.URL, location: httpx2.URL) -> bool:
    if (sent.scheme, sent.host, sent.port) == (location.scheme, location.host, location.port):
        return True
    # http -> https on the same host with default ports stays on the origin (as httpx2 judges it).
    return (sent.host == location.host and sent.scheme == "http" and sent.port is None
            and location.scheme == "https" and location.port is None)


@asynccontextmanager
async def stream_within_origin(
    client: httpx2.AsyncClient, method: str, url: str, **kwargs: Any
) -> AsyncIterator[httpx2.Response]:
    """``client.stream(...)``, following a redirect only when it keeps the method, brings no userinfo
    of its own and stays on the endpoint's origin, at most ``client.max_redirects`` times; any other
    redirect response is handed back as it is (everything on a request was configured for that one
    endpoint)."""
    request = client.build_request(method, url, **kwargs)
    for _ in range(client.max_redirects + 1):
        response = await client.send(request, stream=True, follow_redirects=False)
        following = response.next_request
        if (
            following is None
            or following.method != request.method
            or (following.url.userinfo and following.url.userinfo != request.url.userinfo)
            or not _same_origin(request.url, following.url)
        ):
            break
        try:
            await response.aread()  # drained, so the connection goes back to the pool
        finally:
            await response.aclose()
        request = following
    try:
        yield response
    finally:
        await response.aclose()


@dataclass
class _Resumption:
    """Where a request's SSE answer stood when the server closed it: its last event id and retry."""

    last_id: str | None = None
    retry_ms: int | None = None


@dataclass
class _Awaited:
    """A request whose answer is awaited on an SSE stream: the scope its reading runs in, cancelled when
    the answer arrives on another stream of the session instead, and that answer with its text."""

    scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)
    reply: dict[str, Any] | None = None
    text: bytes | None = None


class HttpChannel:
    """Streamable-HTTP pipe to one endpoint; keeps the ``Mcp-Session-Id`` of a handshake-era session."""

    def __init__(
        self,
        client: httpx2.AsyncClient,
        url: str,
        headers: Mapping[str, str],
        *,
        timeout: httpx2.Timeout,
        max_response_bytes: int,
        max_event_bytes: int | None = None,
        max_depth: int = 64,
        auth: TokenSource | None = None,
    ) -> None:
        self.client = client
        #: Where an OAuth-protected server's ``Authorization`` comes from (None: static headers only).
        self.auth = auth
        self.url = url
        # An OAuth-protected server's Authorization is the token's, never a static header's.
        self.headers = {k: v for k, v in headers.items() if auth is None or k.lower() != "authorization"}
        self.timeout = timeout
        self.max_response_bytes = max_response_bytes
        #: One SSE event is refused past this many bytes, before more of it is buffered.
        self.max_event_bytes = max_event_bytes or max_response_bytes
        #: JSON nested deeper than this is refused before it is parsed (a parser would recurse on it).
        self.max_depth = max_depth
        self.session_id: str | None = None
        self.last_version: str | None = None
        self._next_id = 0
        #: The JSON text of the last reply, as received (a JSON body, or the data of the SSE event that
        #: answered), or None when the last request got no parsed reply. Listing digests hash it.
        self.reply_text: bytes | None = None
        #: Requests whose answers are awaited on SSE streams, by id (see :meth:`_deliver`).
        self._awaited: dict[int, _Awaited] = {}

    def _headers(self, extra: Mapping[str, str]) -> dict[str, str]:
        merged = {**self.headers, **_BASE_HEADERS}
        if self.session_id is not None:
            merged[SESSION_ID_HEADER] = self.session_id
        merged.update(extra)
        return merged

    def next_id(self) -> int:
        """A fresh request id on this channel."""
        self._next_id += 1
        return self._next_id

    async def request(
        self, method: str, params: dict[str, Any] | None, headers: Mapping[str, str], hooks: Hooks = NO_HOOKS
    ) -> Any:
        """POST one request and return its raw result; JSON-RPC and HTTP rejections raise RpcError."""
        message = wire({"jsonrpc": "2.0", "id": self.next_id(), "method": method}, params)
        if method == "initialize":
            # The handshake starts a session from scratch (SDK: a probe's version must not leak onto it,
            # nor onto what is sent before the next request: the session's standing GET stream).
            self.session_id = None
            self.last_version = None
        if version := headers.get("mcp-protocol-version"):
            self.last_version = version
        self.reply_text = None
        if self.session_id is not None:
            # Awaited from before the POST leaves: its answer may come first on another stream.
            self._awaited[message["id"]] = _Awaited()
        try:
            async with self._post(message, headers) as response:
                reply = await self._read_reply(method, message["id"], response, hooks)
        except anyio.get_cancelled_exc_class():
            # The caller gave up. At 2026-07-28 the aborted POST is the cancellation (that wire has no
            # notification from client to server over HTTP, and the SDK's client sends none); before it, the
            # server is told, and may stop the work (bounded, best effort).
            if method != "initialize" and headers.get("mcp-protocol-version") not in MODERN_PROTOCOL_VERSIONS:
                with (anyio.CancelScope(shield=True), anyio.move_on_after(5.0),
                      contextlib.suppress(ChannelError, RpcError)):
                    await self.notify("notifications/cancelled",
                                      {"requestId": message["id"], "reason": "the caller gave up"}, headers)
            raise
        finally:
            self._awaited.pop(message["id"], None)
        result = _unwrap(reply)
        if method == "initialize" and isinstance(result, dict) and isinstance(result.get("protocolVersion"), str):
            self.last_version = result["protocolVersion"]
        return result

    async def _authorized(self, headers: Mapping[str, str]) -> Mapping[str, str]:
        if self.auth is None:
            return headers
        return {**headers, "authorization": await self.auth.authorization()}

    @asynccontextmanager
    async def _post(self, message: dict[str, Any], headers: Mapping[str, str]) -> AsyncIterator[httpx2.Response]:
        """POST one JSON-RPC message, with a renewed token once when the server refuses the current
        one (HTTP 401); HTTP failures, while sending or while the caller reads the answer, become
        ChannelError."""
        content = compact(message).encode()
        sent = await self._authorized(headers)
        async with self._post_once(content, sent) as response:
            narrow = response.status_code == 403 and _insufficient_scope(response)
            if self.auth is None or not (response.status_code == 401 or narrow):
                yield response
                return
            await self._read_body(response)  # drained, so the connection goes back to the pool
        if narrow:
            renewed = await self.auth.step_up(sent["authorization"], response)
        else:
            renewed = await self.auth.renew(sent["authorization"])
        async with self._post_once(content, {**headers, "authorization": renewed}) as response:
            yield response

    @asynccontextmanager
    async def _post_once(self, content: bytes, headers: Mapping[str, str]) -> AsyncIterator[httpx2.Response]:
        merged = self._headers(headers)
        direct = self.client.direct if isinstance(self.client, UpstreamClient) else None
        try:
            if direct is not None and direct.applies(self.url):
                async with direct.post(self.url, content, merged, self.timeout) as response:
                    if not (300 <= response.status_code < 400 and "location" in response.headers):
                        yield response
                        return
                    await self._read_body(response)  # a redirect: the client below follows it
            async with stream_within_origin(
                self.client, "POST", self.url, content=content, headers=merged, timeout=self.timeout
            ) as response:
                yield response
        except httpx2.HTTPError as exc:
            raise ChannelError(_http_error_text(exc, self.url)) from exc

    async def _read_reply(
        self, method: str, request_id: int, response: httpx2.Response, hooks: Hooks
    ) -> dict[str, Any]:
        status = response.status_code
        if status == 202:
            # A request's answer travels on this POST's body; 202 says none will follow.
            raise RpcError(INVALID_REQUEST, "server answered a request with 202 Accepted", synthetic=True)
        if 300 <= status < 400 and response.next_request is not None:
            location = response.next_request.url.copy_with(userinfo=b"", query=None, fragment=None)
            raise RpcError(INVALID_REQUEST, f"HTTP {status} redirect to {location} not followed", synthetic=True)
        content_type = response.headers.get("content-type", "").lower()
        encoding = response.headers.get("content-encoding", "identity").strip().lower()
        if encoding not in ("", "identity"):
            raise ChannelError(f"the server compressed its answer ({encoding[:40]}) although toolvet asked for "
                               "none; compressed answers are refused")
        if status >= 400:
            await self._rejected(status, response, content_type)
        if method == "initialize" and (session_id := response.headers.get(SESSION_ID_HEADER)):
            self.session_id = session_id
        if content_type.startswith("application/json"):
            body = await self._read_body(response)
            self._check_depth(body)
            try:
                parsed = loads(body)
            except ValueError as exc:
                raise RpcError(PARSE_ERROR, f"response body is not JSON ({exc})", synthetic=True) from exc
            reply = _pick_reply(parsed)
            if reply is None:
                raise RpcError(PARSE_ERROR, "response body is not a JSON-RPC response", synthetic=True)
            self.reply_text = body
            return reply
        if content_type.startswith("text/event-stream"):
            return await self._read_events(request_id, response, hooks)
        shown = content_type[:60] or "none"
        raise RpcError(INVALID_REQUEST, f"unexpected content type {shown!r} (HTTP {status})", synthetic=True)

    async def _rejected(self, status: int, response: httpx2.Response, content_type: str) -> None:
        """Raise what an HTTP error answer means: a server-written JSON-RPC error, an expired session,
        or the JSON-RPC error the SDK's transport makes of the status."""
        body: Any = None
        if content_type.startswith("application/json"):
            try:
                body = loads(await self._read_body(response))
            except (ValueError, ChannelError):
                body = None
        error = body.get("error") if isinstance(body, dict) else None
        code = error.get("code") if isinstance(error, dict) else None
        if self.session_id is not None and (status == 404 or (status == 400 and code == _NO_VALID_SESSION)):
            raise SessionExpired(f"HTTP {status}: the server no longer knows session {self.session_id[:40]!r}")
        if isinstance(error, dict):
            _unwrap(body)
        if status == 404:
            # No session yet: a 404 is the HTTP spelling of "method not found" (the SDK does the same).
            raise RpcError(METHOD_NOT_FOUND, "HTTP 404 Not Found", synthetic=True)
        raise RpcError(INTERNAL_ERROR, f"HTTP {status} {response.reason_phrase}".rstrip(), synthetic=True)

    async def _read_body(self, response: httpx2.Response) -> bytes:
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > self.max_response_bytes:
            raise ChannelError(f"response body of {declared} bytes exceeds {self.max_response_bytes} bytes")
        chunks: list[bytes] = []
        total = 0
        async for chunk in response.aiter_bytes():
            total += len(chunk)
            if total > self.max_response_bytes:
                raise ChannelError(f"response body exceeds {self.max_response_bytes} bytes")
            chunks.append(chunk)
        return b"".join(chunks)

    async def _read_events(self, request_id: int, response: httpx2.Response, hooks: Hooks) -> dict[str, Any]:
        # As the SDK transport: the response or error with our id on this POST's stream answers it;
        # notifications and server requests that come first go to the hooks. A stream the server
        # closes before answering, after naming its events, is resumed with GET and Last-Event-ID
        # (the server's polling pattern), a bounded number of times.
        # An answer that arrives on another stream of the session (the standing GET, another request's)
        # answers it too: a server may send it wherever a stream is open, and the SDK's client takes it
        # from any stream.
        cursor = _Resumption()
        awaited = self._awaited.get(request_id) or _Awaited()  # a session's requests are awaited already
        reply: dict[str, Any] | None = None
        with awaited.scope:
            reply = await self._read_stream(response, request_id, hooks, cursor)
            for _ in range(_RESUMPTIONS):
                if reply is not None or cursor.last_id is None:
                    break
                await anyio.sleep(min((cursor.retry_ms or 0) / 1000, _MAX_RETRY_WAIT))
                async with self._resume(cursor.last_id) as resumed:
                    content_type = resumed.headers.get("content-type", "").lower()
                    if resumed.status_code >= 400 or not content_type.startswith("text/event-stream"):
                        raise ChannelError("SSE stream ended without a response "
                                           f"(resuming it: HTTP {resumed.status_code})")
                    reply = await self._read_stream(resumed, request_id, hooks, cursor)
        if awaited.reply is not None:
            self.reply_text = awaited.text
            return awaited.reply
        if reply is None:
            raise ChannelError("SSE stream ended without a response")
        return reply

    def _deliver(self, reply: dict[str, Any], text: bytes) -> None:
        """Hand ``reply`` to the request it answers if that request awaits it on another stream."""
        request_id = reply.get("id")
        awaited = self._awaited.get(request_id) if isinstance(request_id, int) else None
        if awaited is not None and awaited.reply is None:
            awaited.reply, awaited.text = reply, text
            awaited.scope.cancel()

    async def _read_stream(
        self, response: httpx2.Response, request_id: int, hooks: Hooks, cursor: _Resumption
    ) -> dict[str, Any] | None:
        events = httpx2.EventSource(response, max_event_size=self.max_event_bytes)
        try:
            async for event in events:
                cursor.last_id = event.id or cursor.last_id
                cursor.retry_ms = event.retry if event.retry is not None else cursor.retry_ms
                reply = await self._event_reply(event, request_id, hooks)
                if reply is not None:
                    return reply
        except httpx2.SSEError as exc:
            raise ChannelError(f"SSE answer refused: {exc} (TOOLVET_MAX_EVENT_BYTES)") from exc
        return None

    async def _event_reply(self, event: httpx2.ServerSentEvent, request_id: int, hooks: Hooks) -> dict[str, Any] | None:
        if event.event != "message" or not event.data:
            return None  # priming event (resumability), keep-alive, or another event type
        self._check_depth(event.data.encode())
        try:
            parsed = loads(event.data)
        except ValueError as exc:
            raise RpcError(PARSE_ERROR, f"SSE event is not JSON ({exc})", synthetic=True) from exc
        if isinstance(parsed, dict) and isinstance(parsed.get("method"), str):
            await self._server_message(parsed, hooks)
            return None
        reply = _pick_reply(parsed)
        if reply is not None and reply.get("id") in (request_id, None):
            self.reply_text = event.data.encode()
            return reply
        if reply is not None:
            self._deliver(reply, event.data.encode())
        return None

    @asynccontextmanager
    async def _resume(self, last_id: str) -> AsyncIterator[httpx2.Response]:
        headers = self._headers(await self._authorized({"accept": "text/event-stream", "last-event-id": last_id}))
        headers.pop("content-type", None)
        if self.last_version:
            headers["mcp-protocol-version"] = self.last_version
        try:
            async with stream_within_origin(self.client, "GET", self.url, headers=headers,
                                            timeout=self.timeout) as response:
                yield response
        except httpx2.HTTPError as exc:
            raise ChannelError(_http_error_text(exc, self.url)) from exc

    async def _server_message(self, message: dict[str, Any], hooks: Hooks) -> None:
        params = message.get("params")
        params = params if isinstance(params, dict) else None
        if "id" not in message:
            await hooks.notification(message["method"], params)
            return
        reply = await answer(hooks, message["id"], message["method"], params)
        headers = {"mcp-protocol-version": self.last_version} if self.last_version else {}
        with anyio.move_on_after(self.timeout.read or 30.0):
            try:
                async with self._post(reply, headers) as response:
                    await self._read_body(response)
            except ChannelError:
                pass  # the server gives up on an unanswered request itself

    async def standing(self, hooks: Hooks, ready: anyio.Event | None = None) -> None:
        """Read the session's standalone ``GET`` stream (what the server sends outside any request)
        into ``hooks`` until the server ends it; a server that serves none (405, no session) ends it
        at once. The caller bounds it (the session's life).

        ``ready`` is set once the server has answered the ``GET`` (or the stream could not be had): a
        server may drop what it sends outside a request while no such stream is open (the TypeScript
        SDK's servers do, an elicitation asked during a call among them), so the session's first
        request should wait for it."""
        try:
            await self._stand(hooks, ready)
        finally:
            if ready is not None:
                ready.set()

    async def _stand(self, hooks: Hooks, ready: anyio.Event | None) -> None:
        if self.session_id is None:
            return
        headers = self._headers({"accept": "text/event-stream"})
        headers.pop("content-type", None)
        if self.last_version:
            headers["mcp-protocol-version"] = self.last_version
        # No read timeout: the stream is quiet until the server has something to say.
        timeout = httpx2.Timeout(None, connect=self.timeout.connect)
        try:
            async with stream_within_origin(self.client, "GET", self.url, headers=headers,
                                            timeout=timeout) as response:
                if ready is not None:
                    ready.set()
                content_type = response.headers.get("content-type", "").lower()
                if response.status_code != 200 or not content_type.startswith("text/event-stream"):
                    return
                events = httpx2.EventSource(response, max_event_size=self.max_event_bytes)
                async for event in events:
                    if event.event != "message" or not event.data:
                        continue
                    self._check_depth(event.data.encode())
                    parsed = loads(event.data)
                    if isinstance(parsed, dict) and isinstance(parsed.get("method"), str):
                        await self._server_message(parsed, hooks)
                    elif (reply := _pick_reply(parsed)) is not None:
                        self._deliver(reply, event.data.encode())
        except (httpx2.HTTPError, httpx2.SSEError, ValueError) as exc:
            raise ChannelError(f"the standalone stream ended: {type(exc).__name__}") from exc

    def _check_depth(self, text: bytes) -> None:
        if json_depth_exceeds(text, self.max_depth):
            raise ChannelError(f"the answer nests JSON deeper than {self.max_depth} levels "
                               "(TOOLVET_MAX_JSON_DEPTH); refused unparsed")

    async def notify(self, method: str, params: dict[str, Any] | None, headers: Mapping[str, str]) -> None:
        """POST one notification; the answer (202 normally) is drained and ignored, as the SDK does."""
        async with self._post(wire({"jsonrpc": "2.0", "method": method}, params), headers) as response:
            await self._read_body(response)

    async def close(self) -> None:
        """End a handshake-era session with DELETE (best effort, as the SDK's terminate_on_close)."""
        if self.session_id is None:
            return
        try:
            headers = self._headers(await self._authorized({}))
        except ChannelError:
            return  # no token to say goodbye with: the server reaps the session itself
        if self.last_version is not None:
            headers["mcp-protocol-version"] = self.last_version
        try:
            async with stream_within_origin(
                self.client, "DELETE", self.url, headers=headers, timeout=self.timeout
            ) as response:
                await self._read_body(response)
        except (httpx2.HTTPError, ChannelError):
            pass  # the server reaps idle sessions itself; a failed goodbye changes nothing we report
        self.session_id = None


async def answer(hooks: Hooks, request_id: Any, method: str, params: dict[str, Any] | None) -> dict[str, Any]:
    """The JSON-RPC response to a server request, as the hooks decide it."""
    try:
        result = await hooks.request(method, params)
    except RpcError as exc:
        error: dict[str, Any] = {"code": exc.code, "message": exc.message or str(exc)}
        if exc.data is not None:
            error["data"] = exc.data
        return {"jsonrpc": "2.0", "id": request_id, "error": error}
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


def _insufficient_scope(response: httpx2.Response) -> bool:
    """A 403 whose challenge says the token is too narrow (RFC 6750 ``insufficient_scope``): the one
    refusal a wider token can cure."""
    return extract_field_from_www_auth(response, "error") == "insufficient_scope"


def _http_error_text(exc: httpx2.HTTPError, url: str) -> str:
    if isinstance(exc, httpx2.TimeoutException):
        return f"HTTP timeout ({type(exc).__name__}) talking to {url}"
    if isinstance(exc, httpx2.ConnectError):
        return f"cannot connect to {url}: {exc or 'connection refused'}"
    return f"{type(exc).__name__} talking to {url}: {exc or 'connection failed'}"


def _pick_reply(parsed: Any) -> dict[str, Any] | None:
    """The JSON-RPC response in ``parsed``: an object with result or error, or one inside a batch."""
    candidates = parsed if isinstance(parsed, list) else [parsed]
    for item in candidates:
        if isinstance(item, dict) and ("result" in item or "error" in item) and "method" not in item:
            return item
    return None


def _unwrap(reply: dict[str, Any]) -> Any:
    error = reply.get("error")
    if error is not None:
        if not isinstance(error, dict):
            raise RpcError(PARSE_ERROR, "malformed JSON-RPC error object", synthetic=True)
        code = error.get("code")
        message = error.get("message")
        rpc_code = code if isinstance(code, int) and not isinstance(code, bool) else INTERNAL_ERROR
        raise RpcError(rpc_code, message if isinstance(message, str) else "", error.get("data"))
    return reply.get("result")
