"""What can go wrong talking to an MCP server, and the one table that turns it into a sentence.

Inside :mod:`toolvet.upstream` three exceptions describe a failure (a
:class:`ChannelError` may be :class:`NeedsReconnect`: an OAuth-protected server that must be
connected again); everything else a transport raises
(httpx2's errors, an OS error starting a process, an anyio stream closing, an exception group from a
task group) is mapped by :func:`describe`, the only place that knows those types. Callers outside the
package see :class:`toolvet.errors.UpstreamError` (calls) or a failed listing's one-line text
(discovery), both built from :func:`describe`.
"""

from __future__ import annotations

import re
from typing import Any, Final

import anyio
import httpx2

__all__ = ["ChannelError", "NeedsReconnect", "ProtocolError", "RpcError", "SessionExpired", "describe", "one_line"]


class RpcError(Exception):
    """A JSON-RPC error from the server, or one the transport synthesised the way the SDK does.

    The streamable-HTTP transport turns HTTP-level rejections (4xx/5xx without a JSON-RPC body, 202 to
    a request, an unfollowed redirect) into JSON-RPC errors, as the SDK's transport does; the era
    negotiation relies on that.
    """

    def __init__(self, code: int, message: str, data: Any = None, *, synthetic: bool = False) -> None:
        text = message if synthetic else f"server returned JSON-RPC error {code}: {message or 'no message'}"
        super().__init__(text)
        self.code = code
        self.message = message
        self.data = data
        self.synthetic = synthetic


class ChannelError(Exception):
    """The pipe failed: connection refused or reset, stream closed, unparseable or oversized data."""


class SessionExpired(ChannelError):
    """The server no longer knows our handshake-era session (it restarted or reaped it).

    Servers say so in three shapes: HTTP 404 (with or without a JSON-RPC ``-32600`` body, the Python
    SDK), and HTTP 400 with JSON-RPC ``-32000`` "No valid session ID" (the TypeScript SDK). The server
    ran nothing, so the request may be sent again on a new session, once.
    """


class NeedsReconnect(ChannelError):
    """An OAuth-protected server's authorization is gone (never connected, or a refresh the
    authorization server refused): a person must Connect again. Calls and discovery fail with this
    reason, ``needs reconnect: ...``, until they do."""

    def __init__(self, reason: str) -> None:
        super().__init__(f"needs reconnect: {reason}")
        self.reason = reason


class ProtocolError(Exception):
    """The server answered, but not in a shape the protocol allows (e.g. an unknown handshake version)."""


_CONTROL: Final = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]+")


def one_line(text: str, limit: int = 500) -> str:
    """Server-chosen text made fit for a log line or an error: control characters folded, bounded."""
    flat = _CONTROL.sub(" ", text).strip()
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def describe(exc: BaseException, where: str | None = None) -> str:
    """One operator-readable phrase for an exception raised anywhere while talking to a server.

    ``where`` names the server's address (URL or command) for the texts that need it.
    """
    if isinstance(exc, BaseExceptionGroup):
        # Transports fail inside task groups; the first leaf is the cause.
        leaf: BaseException = exc
        while isinstance(leaf, BaseExceptionGroup) and leaf.exceptions:
            leaf = leaf.exceptions[0]
        return describe(leaf, where)
    if isinstance(exc, RpcError | ChannelError | ProtocolError):
        return str(exc)
    target = where or "the server"
    if isinstance(exc, httpx2.HTTPStatusError):
        return f"HTTP {exc.response.status_code} from {exc.request.url}"
    if isinstance(exc, httpx2.TimeoutException):
        return f"HTTP timeout ({type(exc).__name__}) talking to {target}"
    if isinstance(exc, httpx2.ConnectError):
        return f"cannot connect to {target}: {exc or 'connection refused'}"
    if isinstance(exc, httpx2.HTTPError):
        return f"{type(exc).__name__} talking to {target}: {exc or 'connection failed'}"
    if isinstance(exc, anyio.BrokenResourceError | anyio.ClosedResourceError | anyio.EndOfStream):
        return "connection to the server is closed"
    if isinstance(exc, TimeoutError):
        return "timed out"
    if isinstance(exc, OSError):
        return f"cannot run {where!r}: {exc.strerror or exc}" if where else f"OSError: {exc.strerror or exc}"
    return f"{type(exc).__name__}: {exc}"
