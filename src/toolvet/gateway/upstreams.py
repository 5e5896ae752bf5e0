"""Pooled upstream sessions for forwarding ``tools/call`` (SPEC §6).

One negotiated session per server is kept and reused, so a call costs one request, not a handshake.
Streamable HTTP sessions share one HTTP connection pool and may carry concurrent calls; SSE and stdio
sessions are one long-lived connection each, used one request at a time. Every call is bounded by a
per-server concurrency limit and a timeout. A session that breaks is dropped and built again on the
next call; a call that failed only because the upstream forgot our session (it restarted) is retried
once on a new session, since the upstream never ran it.
"""

from __future__ import annotations

import logging
import tempfile
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from typing import Any

import anyio
import httpx2
from mcp.types import INVALID_REQUEST

from toolvet.discovery.http_channel import HttpChannel
from toolvet.discovery.listing import Target
from toolvet.discovery.protocol import ChannelError, RpcError, Session, negotiate
from toolvet.discovery.stream_channel import open_sse, open_stdio
from toolvet.errors import UpstreamError

log = logging.getLogger("toolvet.gateway")


@dataclass
class _Pooled:
    target: Target
    session: Session
    stack: AsyncExitStack | None = None  # holds a stream connection open (SSE, stdio)
    lock: anyio.Lock | None = None  # stream connections carry one request at a time


@dataclass
class UpstreamPool:
    """Sessions to upstream servers, keyed by server name."""

    http: httpx2.AsyncClient
    connect_timeout: float = 10.0
    call_timeout: float = 60.0
    per_server: int = 16
    _sessions: dict[str, _Pooled] = field(default_factory=dict)
    _limiters: dict[str, anyio.CapacityLimiter] = field(default_factory=dict)
    _opening: dict[str, anyio.Lock] = field(default_factory=dict)

    async def call(self, server: str, target: Target, method: str, params: dict[str, Any]) -> Any:
        """Send one request (``tools/call``, ``resources/read``) to ``server`` and return its raw result.

        Raises UpstreamError with a clear one-line reason for anything the upstream or network does.
        """
        limiter = self._limiters.setdefault(server, anyio.CapacityLimiter(self.per_server))
        async with limiter:
            with anyio.move_on_after(self.call_timeout) as scope:
                for attempt in range(2):
                    pooled = await self._session(server, target)
                    try:
                        return await self._send(pooled, method, params)
                    except RpcError as exc:
                        if exc.code == INVALID_REQUEST and "session terminated" in str(exc) and attempt == 0:
                            await self.drop(server)  # the upstream restarted: it never ran this call
                            continue
                        raise UpstreamError(f"{server}: {exc}") from None
                    except ChannelError as exc:
                        await self.drop(server)
                        raise UpstreamError(f"{server}: {exc}") from None
            if scope.cancelled_caught:
                await self.drop(server)
                raise UpstreamError(f"{server}: no answer within {self.call_timeout:g} s")
        raise UpstreamError(f"{server}: session lost twice in a row")

    async def _send(self, pooled: _Pooled, method: str, params: dict[str, Any]) -> Any:
        if pooled.lock is None:
            return await pooled.session.request(method, params)
        async with pooled.lock:
            return await pooled.session.request(method, params)

    async def _session(self, server: str, target: Target) -> _Pooled:
        pooled = self._sessions.get(server)
        if pooled is not None and pooled.target == target:
            return pooled
        async with self._opening.setdefault(server, anyio.Lock()):
            pooled = self._sessions.get(server)
            if pooled is not None and pooled.target == target:
                return pooled
            if pooled is not None:
                await self.drop(server)
            try:
                with anyio.fail_after(self.connect_timeout):
                    pooled = await self._open(target)
            except TimeoutError:
                raise UpstreamError(f"{server}: could not connect within {self.connect_timeout:g} s") from None
            except (RpcError, ChannelError) as exc:
                raise UpstreamError(f"{server}: {exc}") from None
            except OSError as exc:
                raise UpstreamError(f"{server}: cannot start: {exc}") from None
            self._sessions[server] = pooled
            return pooled

    async def _open(self, target: Target) -> _Pooled:
        if target.transport == "streamable-http":
            assert target.url
            channel = HttpChannel(self.http, target.url, target.headers,
                                  timeout=httpx2.Timeout(self.call_timeout, connect=self.connect_timeout),
                                  max_response_bytes=64 * 1024 * 1024)
            return _Pooled(target, await negotiate(channel))
        stack = AsyncExitStack()
        try:
            if target.transport == "sse":
                assert target.url
                stream = await stack.enter_async_context(open_sse(
                    target.url, target.headers, connect_timeout=self.connect_timeout, read_timeout=self.call_timeout))
            else:
                assert target.command
                # The exit stack is the context manager: it closes the file when the session is dropped.
                errlog = stack.enter_context(tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace"))  # noqa: SIM115
                stream = await stack.enter_async_context(
                    open_stdio(target.command, list(target.args), target.env, target.cwd, errlog))
            return _Pooled(target, await negotiate(stream), stack, anyio.Lock())
        except BaseException:
            with anyio.CancelScope(shield=True):
                await stack.aclose()
            raise

    async def drop(self, server: str) -> None:
        """Forget the server's session (closing its connection), so the next call opens a new one."""
        pooled = self._sessions.pop(server, None)
        if pooled is None:
            return
        with anyio.CancelScope(shield=True), anyio.move_on_after(5):
            if pooled.stack is not None:
                await pooled.stack.aclose()
            elif isinstance(pooled.session.channel, HttpChannel):
                await pooled.session.channel.close()

    async def aclose(self) -> None:
        for server in list(self._sessions):
            await self.drop(server)

