"""JSON-RPC over message streams: a stdio child process, or a legacy HTTP+SSE connection.

The SDK's ``stdio_client`` and ``sse_client`` are used as byte pipes: they start and kill the process
(its whole tree), or hold the SSE GET and POST each message. Their streams carry ``SessionMessage``
objects whose ``JSONRPCResponse.result`` is the raw result dict, so nothing of a tool is dropped.

:func:`open_stream` wraps one in a :class:`StreamChannel` and starts a reader task beside it: any
number of requests may be open at once; each answer is handed to the request with its id, progress
notifications to the request that asked for them (by ``progressToken``), notifications about the
session (resource updates, list changes) to ``on_notification``, other notifications and the
server's own requests to the hooks of the latest open request (or to ``on_notification`` when none
is open). A request whose caller gives up is cancelled upstream with ``notifications/cancelled``.

Both SDK transports are anyio task groups: the task that enters :func:`open_stream` must be the one
that leaves it. A pooled connection therefore lives in a task of its own (see ``upstream.pool``).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import AsyncIterator, Iterable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, Final, Protocol, TextIO

import anyio
import httpx2
from mcp.client.sse import sse_client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.message import SessionMessage
from mcp.types import JSONRPCError, JSONRPCNotification, JSONRPCRequest, JSONRPCResponse

from toolvet.upstream.direct import GuardedTransport, proxy_mounts
from toolvet.upstream.errors import ChannelError, RpcError
from toolvet.upstream.guard import AddressGuard
from toolvet.upstream.http import answer
from toolvet.upstream.protocol import NO_HOOKS, Hooks, wire
from toolvet.upstream.standing import SESSION_NOTIFICATIONS

__all__ = ["EXTRA_INHERITED_ENV_VARS", "StderrTail", "StreamChannel", "open_sse", "open_stdio", "stdio_env"]

# On top of the SDK's default environment for a stdio child (HOME, LOGNAME, PATH, SHELL, TERM, USER on
# POSIX), which stdio_client always applies: locale and temp directory, so a server decodes text and
# writes scratch files like it would from a shell.
EXTRA_INHERITED_ENV_VARS: Final = ("LANG", "LC_ALL", "LC_CTYPE", "TMPDIR", "TEMP", "TMP")

_STDERR_TAIL_BYTES: Final = 2048
_CANCEL_BOUND: Final = 5.0


class _Receiving(Protocol):
    async def receive(self) -> SessionMessage | Exception: ...


class _Sending(Protocol):
    async def send(self, item: SessionMessage, /) -> None: ...


@dataclass
class _Open:
    """One request waiting for its answer."""

    hooks: Hooks
    done: anyio.Event = field(default_factory=anyio.Event)
    reply: JSONRPCResponse | JSONRPCError | None = None


class StreamChannel:
    """A channel over a (read, write) pair of SDK session-message streams (see the module docstring)."""

    def __init__(self, write_stream: _Sending, on_notification: Hooks = NO_HOOKS) -> None:
        self.write_stream = write_stream
        #: Receives the notifications no open request claims (list changes, when nothing is open).
        self.on_notification = on_notification
        self._next_id = 0
        self._open: dict[int, _Open] = {}
        self._progress: dict[Any, _Open] = {}
        self.closed = anyio.Event()  # the server's side ended (EOF, a broken pipe) or we closed it
        self.failure: str | None = None

    @property
    def alive(self) -> bool:
        return not self.closed.is_set()

    @property
    def next_request_id(self) -> int:
        """The id the next request will carry (a 2026-07-28 subscription is named by its request's id)."""
        return self._next_id + 1

    async def _send(self, message: dict[str, Any]) -> None:
        if self.closed.is_set():
            raise ChannelError(self.failure or "connection to the server is closed")
        try:
            if "method" in message and "id" in message:
                model: Any = JSONRPCRequest.model_validate(message)
            elif "method" in message:
                model = JSONRPCNotification.model_validate(message)
            elif "error" in message:
                model = JSONRPCError.model_validate(message)
            else:
                model = JSONRPCResponse.model_validate(message)
            # Built from the dict, so a missing "params" stays unset and is not written as null.
            await self.write_stream.send(SessionMessage(model))
        except (anyio.BrokenResourceError, anyio.ClosedResourceError) as exc:
            raise ChannelError("connection to the server is closed") from exc

    async def request(
        self, method: str, params: dict[str, Any] | None, headers: Mapping[str, str], hooks: Hooks = NO_HOOKS
    ) -> Any:
        """Send a request and wait for the answer with its id; headers do not exist on these pipes."""
        self._next_id += 1
        request_id = self._next_id
        waiting = _Open(hooks)
        self._open[request_id] = waiting
        meta = (params or {}).get("_meta")
        token = meta.get("progressToken") if isinstance(meta, dict) else None
        if token is not None:
            self._progress[token] = waiting
        try:
            await self._send(wire({"jsonrpc": "2.0", "id": request_id, "method": method}, params))
            await waiting.done.wait()
        except anyio.get_cancelled_exc_class():
            if waiting.reply is None and self.alive:
                with anyio.CancelScope(shield=True), anyio.move_on_after(_CANCEL_BOUND):
                    await self.notify("notifications/cancelled",
                                      {"requestId": request_id, "reason": "the caller gave up"}, {})
            raise
        finally:
            self._open.pop(request_id, None)
            if token is not None:
                self._progress.pop(token, None)
        reply = waiting.reply
        if reply is None:
            raise ChannelError(self.failure or "connection closed by the server before it answered")
        if isinstance(reply, JSONRPCError):
            raise RpcError(reply.error.code, reply.error.message, reply.error.data)
        return reply.result

    async def notify(self, method: str, params: dict[str, Any] | None, headers: Mapping[str, str]) -> None:
        """Send a notification."""
        await self._send(wire({"jsonrpc": "2.0", "method": method}, params))

    def _latest(self) -> Hooks:
        return next(reversed(self._open.values())).hooks if self._open else self.on_notification

    async def read(self, read_stream: _Receiving, tg: anyio.abc.TaskGroup) -> None:
        """Read the server's messages until the stream ends, then fail every open request."""
        try:
            while True:
                try:
                    item = await read_stream.receive()
                except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
                    self.failure = "connection closed by the server"
                    return
                if isinstance(item, Exception):
                    continue  # one line that is not JSON-RPC (a server's stray print) does not end the session
                await self._dispatch(item.message, tg)
        finally:
            self.closed.set()
            for waiting in list(self._open.values()):
                waiting.done.set()

    async def _dispatch(self, message: Any, tg: anyio.abc.TaskGroup) -> None:
        if isinstance(message, JSONRPCResponse | JSONRPCError):
            waiting = self._open.get(message.id) if isinstance(message.id, int) else None
            if waiting is not None:  # else the late answer to an abandoned request
                waiting.reply = message
                waiting.done.set()
        elif isinstance(message, JSONRPCNotification):
            params = message.params if isinstance(message.params, dict) else None
            token = (params or {}).get("progressToken")
            if message.method == "notifications/progress" and token in self._progress:
                hooks = self._progress[token].hooks
            elif message.method in SESSION_NOTIFICATIONS:
                hooks = self.on_notification  # about the session, not about the request that is open
            else:
                hooks = self._latest()
            tg.start_soon(hooks.notification, message.method, params)
        elif isinstance(message, JSONRPCRequest):
            params = message.params if isinstance(message.params, dict) else None
            # Answered in a task of its own: relaying an elicitation to a person may take minutes,
            # and meanwhile the server may answer other requests.
            tg.start_soon(self._answer, self._latest(), message.id, message.method, params)

    async def _answer(self, hooks: Hooks, request_id: Any, method: str, params: dict[str, Any] | None) -> None:
        reply = await answer(hooks, request_id, method, params)
        with contextlib.suppress(ChannelError):  # the connection ended meanwhile
            await self._send(reply)


@asynccontextmanager
async def open_stream(
    transport: Any, on_notification: Hooks = NO_HOOKS
) -> AsyncIterator[StreamChannel]:
    """Run ``transport`` (an SDK ``stdio_client``/``sse_client`` context) with a reader task beside it."""
    async with transport as (read_stream, write_stream), anyio.create_task_group() as tg:
        channel = StreamChannel(write_stream, on_notification)
        tg.start_soon(channel.read, read_stream, tg)
        try:
            yield channel
        finally:
            channel.closed.set()
            tg.cancel_scope.cancel()


def open_sse(
    url: str, headers: Mapping[str, str], *, connect_timeout: float, read_timeout: float,
    on_notification: Hooks = NO_HOOKS, guard: AddressGuard | None = None,
) -> Any:
    """Connect to a legacy HTTP+SSE endpoint with the SDK's ``sse_client``, on an httpx2 client of its
    own whose connections ``guard`` checks, as every upstream connection toolvet makes."""
    checked = guard or AddressGuard()

    def client(headers: dict[str, str] | None = None, timeout: httpx2.Timeout | None = None,
               auth: httpx2.Auth | None = None) -> httpx2.AsyncClient:
        return httpx2.AsyncClient(headers=headers, timeout=timeout, auth=auth,
                                  transport=GuardedTransport(checked, max_connections=4), mounts=proxy_mounts(checked))

    transport = sse_client(url, headers=dict(headers), timeout=connect_timeout, sse_read_timeout=read_timeout,
                           httpx_client_factory=client)
    return open_stream(transport, on_notification)


def stdio_env(server_env: Mapping[str, str]) -> dict[str, str]:
    """What we add to the SDK's default allow-list for a stdio child: locale, temp dir, its own env."""
    inherited = {key: os.environ[key] for key in EXTRA_INHERITED_ENV_VARS if key in os.environ}
    # Skip exported shell functions, as the SDK's default environment does.
    inherited = {key: value for key, value in inherited.items() if not value.startswith("()")}
    return inherited | dict(server_env)


@dataclass
class StderrTail:
    """Where a stdio child's stderr goes, so a failure can quote its last line."""

    file: TextIO

    def last_line(self, secrets: Iterable[str] = ()) -> str | None:
        """The last non-empty stderr line (from at most the final 2 KiB), or None; every value in
        ``secrets`` (the server's own environment, which a server may echo) replaced by ``[redacted]``."""
        try:
            fd = self.file.fileno()
            size = os.fstat(fd).st_size
            tail = os.pread(fd, _STDERR_TAIL_BYTES, max(0, size - _STDERR_TAIL_BYTES))
        except (OSError, ValueError):
            return None
        lines = [line.strip() for line in tail.decode("utf-8", errors="replace").splitlines() if line.strip()]
        if not lines:
            return None
        line = lines[-1]
        for secret in sorted((s for s in secrets if len(s) >= 4), key=len, reverse=True):
            line = line.replace(secret, "[redacted]")
        return line[:300]


def open_stdio(
    command: str, args: list[str], env: Mapping[str, str], cwd: str | None, errlog: TextIO,
    on_notification: Hooks = NO_HOOKS,
) -> Any:
    """Launch the server with the SDK's ``stdio_client``; it kills the process tree on exit or cancel.

    The child gets the SDK's default environment (applied inside ``stdio_client``) plus
    :func:`stdio_env`, never the rest of our environment (credentials, database URLs). Its stderr
    goes to ``errlog`` (a real file: the child writes to the descriptor directly).
    """
    params = StdioServerParameters(command=command, args=args, env=stdio_env(env), cwd=cwd)
    return open_stream(stdio_client(params, errlog=errlog), on_notification)
