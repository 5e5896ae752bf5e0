"""A lean raw JSON-RPC channel over streamable HTTP, on one shared ``httpx2.AsyncClient``.

The SDK's ``streamable_http_client`` spins up task groups, memory streams and pydantic parsing per
connection; at discovery's scale (thousands of servers per sweep) that overhead dominates, and its
models would re-shape the tool objects. This channel does one POST per JSON-RPC message and decodes
the body itself (``application/json`` or ``text/event-stream``), bounding every byte it reads. HTTP
behaviour follows ``mcp.client.streamable_http.StreamableHTTPTransport._handle_post_request`` so the
era negotiation sees the same JSON-RPC errors the SDK client would.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any, Final

import httpx2
from mcp.shared._httpx_utils import redirect_location, stream_within_origin
from mcp.types import INTERNAL_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, PARSE_ERROR

from toolvet.discovery.protocol import ChannelError, RpcError
from toolvet.lean_http import LeanResponse
from toolvet.upstream_http import UpstreamClient

__all__ = ["HttpChannel"]

SESSION_ID_HEADER: Final = "mcp-session-id"
_BASE_HEADERS: Final = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


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
    ) -> None:
        self.client = client
        self.url = url
        self.headers = dict(headers)
        self.timeout = timeout
        self.max_response_bytes = max_response_bytes
        self.session_id: str | None = None
        self._last_version: str | None = None
        self._next_id = 0
        #: The JSON text of the last reply, as received (a JSON body, or the data of the SSE event that
        #: answered), or None when the last request got no parsed reply. Listing digests hash it.
        self.reply_text: bytes | None = None
        #: Whether the last reply's JSON held a float (or NaN/Infinity). Decoding tells at no cost
        #: (the hook runs only for floats), and a listing without any spares discovery a search for them.
        self.reply_had_float = False

    def _headers(self, extra: Mapping[str, str]) -> dict[str, str]:
        merged = {**self.headers, **_BASE_HEADERS}
        if self.session_id is not None:
            merged[SESSION_ID_HEADER] = self.session_id
        merged.update(extra)
        return merged

    async def request(self, method: str, params: dict[str, Any] | None, headers: Mapping[str, str]) -> Any:
        """POST one request and return its raw result; JSON-RPC and HTTP rejections raise RpcError."""
        self._next_id += 1
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": self._next_id, "method": method}
        if params is not None:
            message["params"] = params
        if method == "initialize":
            # The handshake starts a session from scratch (SDK: a probe's version must not leak onto it).
            self.session_id = None
        if version := headers.get("mcp-protocol-version"):
            self._last_version = version
        self.reply_text = None
        self.reply_had_float = False
        async with self._post(message, headers) as response:
            reply = await self._read_reply(method, response)
        return _unwrap(method, reply)

    @asynccontextmanager
    async def _post(
        self, message: dict[str, Any], headers: Mapping[str, str]
    ) -> AsyncIterator[httpx2.Response | LeanResponse]:
        """POST one JSON-RPC message (same-origin redirects only, as the SDK); HTTP failures, while
        sending or while the caller reads the answer, become ChannelError.

        On an :class:`UpstreamClient` the POST goes through its lean pool when httpx2 would connect
        directly; a redirect answered there is drained and the POST sent again through httpx2, which
        follows it within the origin (the server did not run a request it redirected)."""
        content = json.dumps(message, separators=(",", ":")).encode()
        merged = self._headers(headers)
        client = self.client
        try:
            if isinstance(client, UpstreamClient) and (route := client.lean_route(self.url)) is not None:
                async with client.lean.stream(
                    "POST", *route, content=content, headers=merged, timeout=self.timeout
                ) as lean:
                    if not (300 <= lean.status_code < 400 and "location" in lean.headers):
                        yield lean
                        return
                    await self._read_body(lean)
            async with stream_within_origin(
                self.client, "POST", self.url, content=content, headers=merged, timeout=self.timeout
            ) as response:
                yield response
        except httpx2.HTTPError as exc:
            raise ChannelError(_http_error_text(exc, self.url)) from exc

    async def _read_reply(self, method: str, response: httpx2.Response | LeanResponse) -> dict[str, Any]:
        status = response.status_code
        if status == 202:
            # A request's answer travels on this POST's body; 202 says none will follow.
            raise RpcError(INVALID_REQUEST, "server answered a request with 202 Accepted", synthetic=True)
        if isinstance(response, httpx2.Response) and (location := redirect_location(response)) is not None:
            raise RpcError(
                INVALID_REQUEST, f"HTTP {status} redirect to {location} not followed", synthetic=True
            )
        content_type = response.headers.get("content-type", "").lower()
        if status >= 400:
            # A spec-correct server may put a JSON-RPC error in the body of a 4xx; surface that one.
            if content_type.startswith("application/json"):
                try:
                    body = json.loads(await self._read_body(response))
                except (ValueError, ChannelError):
                    body = None
                if isinstance(body, dict) and isinstance(body.get("error"), dict):
                    return body
            if status == 404 and self.session_id is None:
                # No session yet: a 404 is the HTTP spelling of "method not found" (SDK does the same).
                raise RpcError(METHOD_NOT_FOUND, "HTTP 404 Not Found", synthetic=True)
            if status == 404:
                raise RpcError(INVALID_REQUEST, "HTTP 404, session terminated by the server", synthetic=True)
            raise RpcError(INTERNAL_ERROR, f"HTTP {status} {response.reason_phrase}".rstrip(), synthetic=True)
        if method == "initialize" and (session_id := response.headers.get(SESSION_ID_HEADER)):
            self.session_id = session_id
        if content_type.startswith("application/json"):
            body = await self._read_body(response)
            try:
                parsed = json.loads(body, parse_float=self._float, parse_constant=self._float)
            except ValueError as exc:
                raise RpcError(PARSE_ERROR, f"response body is not JSON ({exc})", synthetic=True) from exc
            reply = _pick_reply(parsed)
            if reply is None:
                raise RpcError(PARSE_ERROR, "response body is not a JSON-RPC response", synthetic=True)
            self.reply_text = body
            return reply
        if content_type.startswith("text/event-stream"):
            return await self._read_sse_reply(method, response)
        shown = content_type[:60] or "none"
        raise RpcError(INVALID_REQUEST, f"unexpected content type {shown!r} (HTTP {status})", synthetic=True)

    async def _read_body(self, response: httpx2.Response | LeanResponse) -> bytes:
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

    async def _read_sse_reply(self, method: str, response: httpx2.Response | LeanResponse) -> dict[str, Any]:
        # Like the SDK transport: the first response or error on this POST's stream answers it;
        # notifications and server requests interleaved before it are skipped.
        async for data in _sse_data(response.aiter_bytes(), self.max_response_bytes):
            if not data:
                continue  # priming event (resumability) or keep-alive
            try:
                parsed = json.loads(data, parse_float=self._float, parse_constant=self._float)
            except ValueError as exc:
                raise RpcError(PARSE_ERROR, f"SSE event is not JSON ({exc})", synthetic=True) from exc
            reply = _pick_reply(parsed)
            if reply is not None:
                self.reply_text = data.encode()
                return reply
        raise ChannelError("SSE stream ended without a response")

    def _float(self, text: str) -> float:
        # json.loads's own conversion (float() of the token: NaN and the infinities included), noted.
        self.reply_had_float = True
        return float(text)

    async def notify(self, method: str, params: dict[str, Any] | None, headers: Mapping[str, str]) -> None:
        """POST one notification; the answer (202 normally) is drained and ignored, as the SDK does."""
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        async with self._post(message, headers) as response:
            await self._read_body(response)

    async def close(self) -> None:
        """End a handshake-era session with DELETE (best effort, as the SDK's terminate_on_close)."""
        if self.session_id is None:
            return
        headers = self._headers({})
        if self._last_version is not None:
            headers["mcp-protocol-version"] = self._last_version
        try:
            async with stream_within_origin(
                self.client, "DELETE", self.url, headers=headers, timeout=self.timeout
            ) as response:
                await self._read_body(response)
        except (httpx2.HTTPError, ChannelError):
            pass  # the server reaps idle sessions itself; a failed goodbye changes nothing we report
        self.session_id = None


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


def _unwrap(method: str, reply: dict[str, Any]) -> Any:
    error = reply.get("error")
    if error is not None:
        if not isinstance(error, dict):
            raise RpcError(PARSE_ERROR, "malformed JSON-RPC error object", synthetic=True)
        code = error.get("code")
        message = error.get("message")
        rpc_code = code if isinstance(code, int) and not isinstance(code, bool) else INTERNAL_ERROR
        raise RpcError(rpc_code, message if isinstance(message, str) else "", error.get("data"))
    return reply.get("result")


async def _sse_data(chunks: AsyncIterator[bytes], max_bytes: int) -> AsyncIterator[str]:
    """Yield the data of each ``message`` event of a server-sent-event byte stream, reading at most max_bytes.

    A minimal parser of the WHATWG event-stream format: CRLF, LF and CR line ends (a CR at a chunk's
    end is held until the next chunk shows whether an LF follows), ``data`` lines joined by LF,
    comments and ``id``/``retry`` ignored.
    """
    total = 0
    buffer = b""
    data_lines: list[bytes] = []
    event = b"message"
    async for chunk in chunks:
        total += len(chunk)
        if total > max_bytes:
            raise ChannelError(f"SSE response exceeds {max_bytes} bytes")
        buffer += chunk
        while True:
            cr = buffer.find(b"\r")
            lf = buffer.find(b"\n")
            if cr == -1 and lf == -1:
                break
            if cr != -1 and (lf == -1 or cr < lf):
                if cr == len(buffer) - 1:
                    break  # a CR at the end: wait for the next chunk to see whether LF follows
                end, skip = cr, 2 if buffer[cr + 1 : cr + 2] == b"\n" else 1
            else:
                end, skip = lf, 1
            line, buffer = buffer[:end], buffer[end + skip :]
            if not line:
                if data_lines and event == b"message":
                    yield b"\n".join(data_lines).decode("utf-8", errors="replace")
                data_lines, event = [], b"message"
                continue
            name, _, value = line.partition(b":")
            if value.startswith(b" "):
                value = value[1:]
            if name == b"data":
                data_lines.append(value)
            elif name == b"event":
                event = value or b"message"
    tail = buffer.rstrip(b"\r")
    if tail.startswith(b"data:"):
        data_lines.append(tail[5:].removeprefix(b" "))
    if data_lines and event == b"message":
        # A stream that ends without the final blank line still delivered its last event.
        yield b"\n".join(data_lines).decode("utf-8", errors="replace")
