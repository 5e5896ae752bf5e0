"""Pooled upstream sessions for forwarded requests (``tools/call``, ``resources/read`` ...).

A session is kept per (server, caller) and reused, so a call costs one request, not a handshake, and
one caller's session state (log level, subscriptions, what a stateful server remembers) never reaches
another caller. Streamable HTTP sessions share one HTTP connection pool and carry concurrent
requests; an SSE or stdio session is one long-lived connection (a child process, for stdio) that also
carries concurrent requests, owned by a task of the pool's own task group, never by the request that
happened to open it (the SDK's transports are task groups that must be left by the task that entered
them).

Every request is bounded by a per-server concurrency limit and a timeout. A session that breaks (the
process died, the connection closed) is dropped and opened again on the next request; a request the
upstream refused only because it forgot our session (it restarted: HTTP 404, or 400 with ``-32000``)
is sent once more on a new session, since the upstream never ran it. Idle sessions are closed after
``idle_seconds`` (not while the caller has resource subscriptions on them), and at most
``max_sessions`` are kept per server (the least recently used goes).

What a session's server sends outside any request goes to the pool's ``standing``, naming the server
and the caller (``upstream.standing``): the pool holds a handshake-era HTTP session's standalone GET
stream open, and a 2026-07-28 session's ``subscriptions/listen`` while the caller subscribes there
(:meth:`UpstreamPool.subscribe`).
"""

from __future__ import annotations

import logging
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Final

import anyio
import anyio.abc
import httpx2

from toolvet.errors import UpstreamError
from toolvet.upstream.errors import ChannelError, ProtocolError, RpcError, SessionExpired, describe, one_line
from toolvet.upstream.guard import AddressGuard
from toolvet.upstream.http import HttpChannel
from toolvet.upstream.protocol import NO_HOOKS, Hooks, Session, negotiate
from toolvet.upstream.standing import NO_STANDING, SessionHooks, Standing, WithSession, listen_params
from toolvet.upstream.streams import StreamChannel, open_sse, open_stdio
from toolvet.upstream.target import Target

__all__ = ["UpstreamPool"]

log = logging.getLogger("toolvet.upstream")

Key = tuple[str, str, bool]  # (server name, caller, whether the handshake era is asked for)
#: How long a new handshake-era HTTP session waits for its server to answer the standing GET.
STANDING_WAIT: Final = 2.0


@dataclass
class _Pooled:
    target: Target
    session: Session
    #: Where what no request claims goes (the caller's, see ``upstream.standing``).
    hooks: SessionHooks
    used: float = field(default_factory=time.monotonic)
    #: The task holding the session's standing stream open (handshake-era HTTP), or its
    #: ``subscriptions/listen`` (2026-07-28), ended with the session.
    standing: anyio.CancelScope | None = None
    #: The resources the caller subscribed to on a 2026-07-28 session (its listen filter).
    uris: set[str] = field(default_factory=set)

    @property
    def alive(self) -> bool:
        channel = self.session.channel
        return not isinstance(channel, StreamChannel) or channel.alive


@dataclass
class UpstreamPool:
    """Sessions to upstream servers, keyed by (server name, caller). Use as ``async with pool.run()``."""

    http: httpx2.AsyncClient
    connect_timeout: float = 10.0
    call_timeout: float = 60.0
    per_server: int = 16
    idle_seconds: float = 300.0
    max_sessions: int = 64
    #: Standing streams held open at once, over every server (each holds one HTTP connection of the
    #: shared client's pool); a session opened past it gets none.
    max_standing: int = 128
    max_event_bytes: int = 16 * 1024 * 1024
    max_depth: int = 64
    #: What toolvet declares to upstream servers (they may adapt their lists to it).
    capabilities: dict[str, Any] = field(default_factory=dict)
    #: Which addresses SSE connections may reach (HTTP ones go through ``http``'s own guard).
    guard: AddressGuard = field(default_factory=AddressGuard)
    #: Who hears what sessions are sent outside any request (the gateway sets its own).
    standing: Standing = NO_STANDING
    _sessions: dict[Key, _Pooled] = field(default_factory=dict)
    # Per server, at most ``per_server`` requests at once. A semaphore that takes an uncontended slot
    # without yielding to the event loop: a CapacityLimiter's acquire always does (one more loop
    # iteration per call).
    _limiters: dict[str, anyio.Semaphore] = field(default_factory=dict)
    _opening: dict[Key, anyio.Lock] = field(default_factory=dict)
    _tg: anyio.abc.TaskGroup | None = None
    _standing: int = 0

    @asynccontextmanager
    async def run(self) -> AsyncIterator[UpstreamPool]:
        """Own the stream sessions' tasks for the pool's lifetime; close every session at the end."""
        async with anyio.create_task_group() as tg:
            self._tg = tg
            tg.start_soon(self._reap)
            try:
                yield self
            finally:
                await self.aclose()
                self._tg = None
                tg.cancel_scope.cancel()

    def session_counts(self) -> dict[str, int]:
        """How many sessions the pool holds open now, by server."""
        counts: dict[str, int] = {}
        for server, _, _ in self._sessions:
            counts[server] = counts.get(server, 0) + 1
        return counts

    async def call(
        self, server: str, target: Target, method: str, params: dict[str, Any] | None, *,
        caller: str = "", hooks: Hooks = NO_HOOKS, handshake: bool = False, headers: Mapping[str, str] | None = None,
    ) -> Any:
        """Send one request to ``server`` on ``caller``'s session and return its raw result.

        ``handshake`` asks for a session in the handshake era where the server speaks it (the caller
        is a handshake-era client: see :func:`~toolvet.upstream.protocol.negotiate`). ``headers`` (a
        ``tools/call``'s ``Mcp-Param-*``) are sent if the session is in the 2026-07-28 era.
        Raises UpstreamError with a clear one-line reason for anything the upstream or network does.
        """
        key = (server, caller, handshake)
        limiter = self._limiters.get(server)
        if limiter is None:  # made on the first call only (setdefault would make one per call)
            limiter = self._limiters[server] = anyio.Semaphore(self.per_server, fast_acquire=True)
        async with limiter:
            with anyio.move_on_after(self.call_timeout) as scope:
                for attempt in range(2):
                    pooled = await self._session(key, target)
                    if hooks is not NO_HOOKS:
                        pooled.hooks.open.append(hooks)
                    try:
                        return await pooled.session.request(method, params, WithSession(hooks, pooled.hooks), headers)
                    except SessionExpired as exc:
                        await self.drop(key)
                        if attempt == 0:
                            continue  # the upstream restarted: it never ran this request
                        raise UpstreamError(one_line(f"{server}: {exc}")) from None
                    except RpcError as exc:
                        code = None if exc.synthetic else exc.code
                        raise UpstreamError(one_line(f"{server}: {exc}"), code, exc.data, exc.message) from None
                    except ChannelError as exc:
                        await self.drop(key)
                        raise UpstreamError(one_line(f"{server}: {exc}")) from None
                    finally:
                        if hooks is not NO_HOOKS:
                            pooled.hooks.open.remove(hooks)
                        pooled.used = time.monotonic()
            if scope.cancelled_caught:
                raise UpstreamError(f"{server}: no answer within {self.call_timeout:g} s")
        raise UpstreamError(f"{server}: session lost twice in a row")

    async def _session(self, key: Key, target: Target) -> _Pooled:
        pooled = self._sessions.get(key)
        if pooled is not None and pooled.target == target and pooled.alive:
            return pooled
        async with self._opening.setdefault(key, anyio.Lock()):
            pooled = self._sessions.get(key)
            if pooled is not None and pooled.target == target and pooled.alive:
                return pooled
            if pooled is not None:
                await self.drop(key)
            try:
                with anyio.fail_after(self.connect_timeout):
                    pooled = await self._open(target, key)
            except TimeoutError:
                raise UpstreamError(f"{key[0]}: could not connect within {self.connect_timeout:g} s") from None
            except Exception as exc:
                raise UpstreamError(one_line(f"{key[0]}: {describe(exc, target.url or target.command)}")) from None
            await self._make_room(key[0])
            self._sessions[key] = pooled
            return pooled

    async def _open(self, target: Target, key: Key) -> _Pooled:
        server, caller, handshake = key
        hooks = SessionHooks(self.standing, server, caller)
        if target.transport == "streamable-http":
            if not target.url:
                raise ProtocolError("the server has no url")
            channel = HttpChannel(self.http, target.url, target.headers,
                                  timeout=httpx2.Timeout(self.call_timeout, connect=self.connect_timeout),
                                  max_response_bytes=64 * 1024 * 1024, max_event_bytes=self.max_event_bytes,
                                  max_depth=self.max_depth, auth=target.auth)
            pooled = _Pooled(target, await negotiate(channel, self.capabilities, handshake_first=handshake), hooks)
            if not pooled.session.modern and channel.session_id is not None:
                # The session is handed out once its standing stream is open (or refused, or slow to
                # answer): what the server asks outside a request during the first call must find it.
                ready = anyio.Event()
                if self._stand(pooled, partial(channel.standing, hooks, ready)):
                    with anyio.move_on_after(min(STANDING_WAIT, self.connect_timeout)):
                        await ready.wait()
            return pooled
        if self._tg is None:
            raise RuntimeError("UpstreamPool.run() is not entered")
        started: _Pooled = await self._tg.start(self._own, target, handshake, hooks)
        return started

    def _stand(self, pooled: _Pooled, run: Callable[[], Awaitable[Any]]) -> bool:
        """Run ``run`` (a standing stream of ``pooled``'s) in a task of the pool's until the session ends
        or the next standing stream replaces it; False when the session gets none (too many open)."""
        if pooled.standing is not None:
            pooled.standing.cancel()
        if self._tg is None or self._standing >= self.max_standing:
            log.info("%d standing streams are open: this session gets none", self._standing)
            return False
        scope = pooled.standing = anyio.CancelScope()
        self._standing += 1

        async def stand() -> None:
            try:
                with scope:
                    await run()
            except (ChannelError, RpcError, ProtocolError) as exc:
                log.info("an upstream's standing stream ended: %s", exc)
            finally:
                self._standing -= 1

        self._tg.start_soon(stand)
        return True

    async def _own(self, target: Target, handshake: bool, hooks: SessionHooks, *,
                   task_status: anyio.abc.TaskStatus[_Pooled]) -> None:
        """The task that holds one stream session open, from its start until it is dropped or dies."""
        started = False
        try:
            async with AsyncExitStack() as stack:
                if target.transport == "sse":
                    if not target.url:
                        raise ProtocolError("the server has no url")
                    opened = open_sse(target.url, target.headers, connect_timeout=self.connect_timeout,
                                      read_timeout=self.call_timeout, guard=self.guard, on_notification=hooks)
                else:
                    if not target.command:
                        raise ProtocolError("the server has no command")
                    # The exit stack is the context manager: it closes the file when the session ends.
                    errlog = stack.enter_context(tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace"))  # noqa: SIM115
                    opened = open_stdio(target.command, list(target.args), target.env, target.cwd, errlog,
                                        on_notification=hooks)
                channel: StreamChannel = await stack.enter_async_context(opened)
                pooled = _Pooled(target, await negotiate(channel, self.capabilities, handshake_first=handshake),
                                 hooks)
                task_status.started(pooled)
                started = True
                await channel.closed.wait()
        except Exception as exc:
            if not started:
                raise
            log.info("upstream session ended: %s", describe(exc, target.url or target.command))

    async def _make_room(self, server: str) -> None:
        mine = [(p.used, key) for key, p in self._sessions.items() if key[0] == server]
        if len(mine) >= self.max_sessions:
            await self.drop(min(mine)[1])

    async def _reap(self) -> None:
        while True:
            await anyio.sleep(min(self.idle_seconds, 30.0))
            now = time.monotonic()
            for key, pooled in list(self._sessions.items()):
                if now - pooled.used > self.idle_seconds and not pooled.uris:  # subscribed: kept
                    await self.drop(key)

    async def drop(self, key: Key) -> None:
        """Forget a session (closing its connection), so the next request opens a new one."""
        pooled = self._sessions.pop(key, None)
        if pooled is None:
            return
        if pooled.standing is not None:
            pooled.standing.cancel()
        channel = pooled.session.channel
        if isinstance(channel, StreamChannel):
            channel.closed.set()  # its owner task leaves the transport, which ends the process
        elif isinstance(channel, HttpChannel):
            with anyio.CancelScope(shield=True), anyio.move_on_after(5):
                await channel.close()

    async def notify(self, caller: str, method: str, params: dict[str, Any] | None) -> None:
        """Send a notification on each of ``caller``'s handshake-era sessions (the client's
        ``notifications/roots/list_changed``: the 2026-07-28 era has none); best effort, bounded."""
        for key, pooled in list(self._sessions.items()):
            if key[1] != caller or pooled.session.modern:
                continue
            with anyio.move_on_after(self.connect_timeout):
                try:
                    await pooled.session.notify(method, params)
                except (ChannelError, RpcError, SessionExpired) as exc:
                    log.info("%s: could not pass on %s: %s", key[0], method, exc)

    async def subscribe(self, server: str, target: Target, uri: str, *, caller: str = "", hooks: Hooks = NO_HOOKS,
                        handshake: bool = False, on: bool = True) -> None:
        """Subscribe ``caller`` to updates of ``uri`` on ``server`` (``on=False``: unsubscribe).

        A handshake-era session is sent ``resources/subscribe`` (or ``unsubscribe``); a 2026-07-28 one,
        which has no such request, gets its ``subscriptions/listen`` opened again with the caller's
        resources. Raises UpstreamError as :meth:`call` does.
        """
        key = (server, caller, handshake)
        pooled = await self._session(key, target)
        if not pooled.session.modern:
            method = "resources/subscribe" if on else "resources/unsubscribe"
            await self.call(server, target, method, {"uri": uri}, caller=caller, hooks=hooks, handshake=handshake)
        if on:
            pooled.uris.add(uri)
        else:
            pooled.uris.discard(uri)
        if not pooled.session.modern:
            return
        if not pooled.uris:
            if pooled.standing is not None:
                pooled.standing.cancel()
            return
        self._stand(pooled, partial(self._listen, pooled, set(pooled.uris)))

    async def _listen(self, pooled: _Pooled, uris: set[str]) -> None:
        """Hold a 2026-07-28 ``subscriptions/listen`` open for ``uris``, opening it again when the server
        ends it (at most once a second, until the session ends or the filter changes)."""
        while pooled.alive:
            try:
                await pooled.session.request("subscriptions/listen", listen_params(uris), pooled.hooks)
            except RpcError as exc:
                log.info("an upstream refused subscriptions/listen: %s", exc)
                return
            except ChannelError as exc:  # a quiet stream timed out, or the connection broke: listen again
                log.debug("an upstream's subscriptions/listen ended: %s", exc)
            await anyio.sleep(1.0)

    async def drop_server(self, server: str) -> None:
        """Forget every caller's session to ``server``."""
        for key in [k for k in self._sessions if k[0] == server]:
            await self.drop(key)

    async def aclose(self) -> None:
        for key in list(self._sessions):
            await self.drop(key)
