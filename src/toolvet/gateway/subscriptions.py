"""One endpoint's subscriptions: resources its clients subscribe to, their listen streams, their roots.

The endpoint's part of ``gateway.notices``: a handshake-era session is heard from its first request
in this process until this process's copy of it ends (``gateway.sessions``), and subscribes with
``resources/subscribe``; a
2026-07-28 client listens with ``subscriptions/listen``, whose ``resourceSubscriptions`` are
subscribed upstream for its caller while the stream is open and whose events come from a bus of its
own. Upstream, each subscription is made on the caller's session of the server that listed the URI
(``UpstreamPool.subscribe``, per era) and undone when the last connection of that caller holding it
unsubscribes or ends. A client's ``notifications/roots/list_changed`` goes to its caller's sessions.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any

import anyio
import mcp.types as types
from mcp.server.context import ServerRequestContext
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, ToolsListChanged
from mcp.shared.exceptions import MCPError

from toolvet.errors import UpstreamError
from toolvet.gateway.notices import Listener, Notices, session_listener, stream_listener
from toolvet.gateway.sessions import session_id_of
from toolvet.services.calls import CallService

__all__ = ["Subscriptions"]

log = logging.getLogger("toolvet.gateway")

#: Sends one URI's request to the server that claims it (the endpoint's ``_by_uri``): (server, the URI as
#: it wrote it, the result).
ByUri = Callable[[ServerRequestContext[Any], str, str, Callable[[str], dict[str, Any]]],
                 Awaitable[tuple[str, str, Any]]]
#: Bound on undoing a finished connection's subscriptions upstream.
RELEASE_BOUND = 10.0


def _uri(uri: str) -> dict[str, Any]:
    return {"uri": uri}


@dataclass
class Subscriptions:
    """The subscriptions of one endpoint's clients (see the module docstring)."""

    service: CallService
    notices: Notices
    #: The caller a request is made for (the pool's session key).
    caller: Callable[[ServerRequestContext[Any]], str]
    by_uri: ByUri
    #: Whether the endpoint serves a server (follows a tool set's edits).
    serves: Callable[[str], bool]
    _streams: dict[InMemorySubscriptionBus, ListenHandler] = field(default_factory=dict)
    _listeners: dict[str, Listener] = field(default_factory=dict)

    def _listener(self, ctx: ServerRequestContext[Any, Any]) -> Listener | None:
        session_id = session_id_of(ctx)
        return self._listeners.get(session_id) if session_id is not None else None

    def hears(self, session_id: str) -> bool:
        """Whether the handshake-era session ``session_id`` already hears its caller's upstreams here."""
        return session_id in self._listeners

    def hear(self, ctx: ServerRequestContext[Any, Any], session_id: str) -> Callable[[], Coroutine[Any, Any, None]]:
        """Let the handshake-era session of ``ctx`` hear its caller's upstream sessions; the callback
        returned ends that (and undoes its subscriptions upstream) when this process's copy of the
        session ends."""
        listener = session_listener(ctx.session, self.caller(ctx), self.serves)
        self._listeners[session_id] = listener
        remove = self.notices.add(listener)

        async def end() -> None:
            remove()
            self._listeners.pop(session_id, None)
            with anyio.CancelScope(shield=True), anyio.move_on_after(RELEASE_BOUND):
                await self._release(listener, handshake=True)

        return end

    async def subscribe(
        self, ctx: ServerRequestContext[Any], params: types.SubscribeRequestParams
    ) -> types.EmptyResult:
        uri = str(params.uri)
        server, own, _ = await self.by_uri(ctx, uri, "resources/subscribe", _uri)
        if (listener := self._listener(ctx)) is not None:
            listener.subscriptions[(server, own)] = uri  # its updates reach the client under its URI
        return types.EmptyResult()

    async def unsubscribe(
        self, ctx: ServerRequestContext[Any], params: types.UnsubscribeRequestParams
    ) -> types.EmptyResult:
        uri = str(params.uri)
        listener = self._listener(ctx)
        held = next((key for key, known in listener.subscriptions.items() if known == uri), None) if listener else None
        if listener is not None and held is not None:
            del listener.subscriptions[held]
            if self.notices.held_elsewhere(listener, *held):
                return types.EmptyResult()  # another connection of this caller's still listens
        await self.by_uri(ctx, uri, "resources/unsubscribe", _uri)
        return types.EmptyResult()

    async def listen(
        self, ctx: ServerRequestContext[Any], params: types.SubscriptionsListenRequestParams
    ) -> types.SubscriptionsListenResult:
        """A 2026-07-28 ``subscriptions/listen``: its resources subscribed to upstream for its caller,
        its stream fed from a bus of its own."""
        bus = InMemorySubscriptionBus()
        wanted = params.notifications
        listener = stream_listener(bus, self.caller(ctx), self.serves, wanted)
        for uri in wanted.resource_subscriptions or ():
            try:
                server, own, _ = await self.by_uri(ctx, uri, "resources/subscribe", _uri)
            except MCPError as exc:
                log.info("subscription to %s not made upstream: %s", uri[:200], exc.error.message)
                continue
            listener.subscriptions[(server, own)] = uri
        handler = self._streams[bus] = ListenHandler(bus)
        remove = self.notices.add(listener)
        try:
            return await handler(ctx, params)
        finally:
            remove()
            self._streams.pop(bus, None)
            with anyio.CancelScope(shield=True), anyio.move_on_after(RELEASE_BOUND):
                await self._release(listener, handshake=False)

    async def _release(self, listener: Listener, *, handshake: bool) -> None:
        """Unsubscribe upstream what a connection that ended subscribed to (unless another of its
        caller's connections still holds it)."""
        pool = self.service.pool
        for server, uri in list(listener.subscriptions):
            target = await self.service.server_target(server)
            if pool is None or target is None or self.notices.held_elsewhere(listener, server, uri):
                continue
            try:
                await pool.subscribe(server, target, uri, caller=listener.caller, handshake=handshake, on=False)
            except UpstreamError as exc:
                log.info("%s: unsubscribing %s failed: %s", server, uri[:200], exc.message)
        listener.subscriptions.clear()

    async def roots_changed(self, ctx: ServerRequestContext[Any], params: types.NotificationParams | None) -> None:
        """A handshake-era client's roots changed: its caller's upstream sessions hear it."""
        if self.service.pool is not None:
            await self.service.pool.notify(self.caller(ctx), "notifications/roots/list_changed", None)

    async def tools_changed(self) -> None:
        """Tell every listen stream open here that the tool list changed."""
        for bus in list(self._streams):
            await bus.publish(ToolsListChanged())

    def close(self) -> None:
        """End every listen stream open here (gracefully: each sends its final result)."""
        for handler in list(self._streams.values()):
            handler.close()
