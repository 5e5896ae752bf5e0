"""JSON-RPC over the SDK's message-stream transports (legacy HTTP+SSE and stdio).

The SDK transports are used only as byte pipes: their streams carry ``SessionMessage`` objects whose
``JSONRPCResponse.result`` is the raw result dict, so nothing of a tool is dropped. The protocol is
spoken by :mod:`toolvet.discovery.protocol`, the same code path as streamable HTTP.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, Final, TextIO

import anyio
from mcp.client._transport import ReadStream, WriteStream
from mcp.client.sse import sse_client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.message import SessionMessage
from mcp.types import (
    METHOD_NOT_FOUND,
    ErrorData,
    JSONRPCError,
    JSONRPCNotification,
    JSONRPCRequest,
    JSONRPCResponse,
)

from toolvet.discovery.protocol import ChannelError, RpcError

__all__ = ["EXTRA_INHERITED_ENV_VARS", "StderrTail", "StreamChannel", "open_sse", "open_stdio", "stdio_env"]

# On top of mcp.client.stdio.get_default_environment() (HOME, LOGNAME, PATH, SHELL, TERM, USER on
# POSIX; SYSTEMROOT, APPDATA, TEMP... on Windows), which stdio_client always applies: locale and temp
# directory, so a server decodes text and writes scratch files like it would from a shell.
EXTRA_INHERITED_ENV_VARS: Final = ("LANG", "LC_ALL", "LC_CTYPE", "TMPDIR", "TEMP", "TMP")

_STDERR_TAIL_BYTES: Final = 2048


class StreamChannel:
    """A channel over a (read, write) pair of SDK session-message streams; one request at a time."""

    def __init__(
        self,
        read_stream: ReadStream[SessionMessage | Exception],
        write_stream: WriteStream[SessionMessage],
    ) -> None:
        self.read_stream = read_stream
        self.write_stream = write_stream
        self._next_id = 0

    async def _send(
        self, message: JSONRPCRequest | JSONRPCNotification | JSONRPCResponse | JSONRPCError
    ) -> None:
        try:
            await self.write_stream.send(SessionMessage(message))
        except (anyio.BrokenResourceError, anyio.ClosedResourceError) as exc:
            raise ChannelError("connection to the server is closed") from exc

    async def request(self, method: str, params: dict[str, Any] | None, headers: Mapping[str, str]) -> Any:
        """Send a request and wait for the answer with its id; headers do not exist on these pipes."""
        self._next_id += 1
        request_id = self._next_id
        await self._send(JSONRPCRequest(jsonrpc="2.0", id=request_id, method=method, params=params))
        while True:
            try:
                item = await self.read_stream.receive()
            except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError) as exc:
                raise ChannelError("connection closed by the server before it answered") from exc
            if isinstance(item, Exception):
                detail = str(item).splitlines()[0][:200] if str(item) else type(item).__name__
                raise ChannelError(f"server sent a message that is not valid JSON-RPC ({detail})")
            message = item.message
            if isinstance(message, JSONRPCRequest):
                await self._refuse(message)
            elif isinstance(message, JSONRPCResponse) and message.id == request_id:
                return message.result
            elif isinstance(message, JSONRPCError) and message.id == request_id:
                error = message.error
                raise RpcError(error.code, error.message, error.data)
            # Anything else is a notification or the late answer to an abandoned request: skip it.

    async def _refuse(self, message: JSONRPCRequest) -> None:
        # A discovery client offers no client features; answer so the server is not left waiting.
        if message.method == "ping":
            await self._send(JSONRPCResponse(jsonrpc="2.0", id=message.id, result={}))
            return
        error = ErrorData(code=METHOD_NOT_FOUND, message=f"{message.method} is not supported by this client")
        await self._send(JSONRPCError(jsonrpc="2.0", id=message.id, error=error))

    async def notify(self, method: str, params: dict[str, Any] | None, headers: Mapping[str, str]) -> None:
        """Send a notification."""
        await self._send(JSONRPCNotification(jsonrpc="2.0", method=method, params=params))


@asynccontextmanager
async def open_sse(
    url: str, headers: Mapping[str, str], *, connect_timeout: float, read_timeout: float
) -> AsyncIterator[StreamChannel]:
    """Connect to a legacy HTTP+SSE endpoint with the SDK's ``sse_client`` (its own HTTP client)."""
    async with sse_client(
        url, headers=dict(headers), timeout=connect_timeout, sse_read_timeout=read_timeout
    ) as (read_stream, write_stream):
        yield StreamChannel(read_stream, write_stream)


def stdio_env(server_env: Mapping[str, str]) -> dict[str, str]:
    """What we add to the SDK's default allow-list for a stdio child: locale, temp dir, its own env."""
    inherited = {key: os.environ[key] for key in EXTRA_INHERITED_ENV_VARS if key in os.environ}
    # Skip exported shell functions, as get_default_environment() does.
    inherited = {key: value for key, value in inherited.items() if not value.startswith("()")}
    return inherited | dict(server_env)


@dataclass
class StderrTail:
    """Where a stdio child's stderr goes, so a failure can quote its last line."""

    file: TextIO

    def last_line(self) -> str | None:
        """The last non-empty stderr line (from at most the final 2 KiB), or None."""
        try:
            fd = self.file.fileno()
            size = os.fstat(fd).st_size
            tail = os.pread(fd, _STDERR_TAIL_BYTES, max(0, size - _STDERR_TAIL_BYTES))
        except (OSError, ValueError):
            return None
        lines = [line.strip() for line in tail.decode("utf-8", errors="replace").splitlines() if line.strip()]
        return lines[-1][:300] if lines else None


@asynccontextmanager
async def open_stdio(
    command: str, args: list[str], env: Mapping[str, str], cwd: str | None, errlog: TextIO
) -> AsyncIterator[StreamChannel]:
    """Launch the server with the SDK's ``stdio_client``; it kills the process tree on exit or cancel.

    The child gets ``get_default_environment()`` (applied inside ``stdio_client``) plus
    :func:`stdio_env`, never the rest of our environment (credentials, database URLs). Its stderr
    goes to ``errlog`` (a real file: the child writes to the descriptor directly).
    """
    params = StdioServerParameters(command=command, args=args, env=stdio_env(env), cwd=cwd)
    async with stdio_client(params, errlog=errlog) as (read_stream, write_stream):
        yield StreamChannel(read_stream, write_stream)
