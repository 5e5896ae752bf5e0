"""What a pooled upstream session hears outside any one request, and who it goes to.

A pooled session belongs to one caller (see ``upstream.pool``), so whatever its server sends that
no request claims belongs to that caller too: resource updates, list changes, a ``roots/list`` the
server asks on its own. The pool hands them to a :class:`Standing` (the gateway's), naming the
server and the caller, through each session's :class:`SessionHooks`.

Where they arrive depends on the pipe and the era:

- stdio and SSE: on the one stream, between or during requests (:data:`SESSION_NOTIFICATIONS` go to
  the session's hooks even while a request is open);
- streamable HTTP, handshake era: on the standalone ``GET`` stream, which the pool holds open for
  each such session (``HttpChannel.standing``), and on a request's own stream;
- 2026-07-28: on a ``subscriptions/listen`` request the pool keeps open while the caller has
  resource subscriptions there (that era has no ``resources/subscribe``).
"""

from __future__ import annotations

from typing import Any, Final, Protocol

from mcp.types import METHOD_NOT_FOUND

from toolvet.upstream.errors import RpcError
from toolvet.upstream.protocol import Hooks

__all__ = ["NO_STANDING", "SESSION_NOTIFICATIONS", "SessionHooks", "Standing", "WithSession", "listen_params"]

#: Notifications about the session rather than about one request.
SESSION_NOTIFICATIONS: Final = frozenset({
    "notifications/resources/updated",
    "notifications/resources/list_changed",
    "notifications/prompts/list_changed",
    "notifications/tools/list_changed",
})


class Standing(Protocol):
    """Who hears what a caller's upstream sessions send outside any request."""

    async def notification(self, server: str, caller: str, method: str, params: dict[str, Any] | None) -> None:
        """A session-level notification from ``server`` on ``caller``'s session."""
        ...

    async def request(self, server: str, caller: str, method: str, params: dict[str, Any] | None) -> Any:
        """A request ``server`` asked on ``caller``'s session outside any call; raise RpcError to refuse."""
        ...


class _Nobody:
    async def notification(self, server: str, caller: str, method: str, params: dict[str, Any] | None) -> None:
        return None

    async def request(self, server: str, caller: str, method: str, params: dict[str, Any] | None) -> Any:
        raise RpcError(METHOD_NOT_FOUND, f"{method[:100]} is not supported by this client", synthetic=True)


#: Hears nothing, refuses every request (a pool nobody listens to).
NO_STANDING: Final[Standing] = _Nobody()


class SessionHooks(Hooks):
    """The hooks of one pooled session for what no request claims: handed to the pool's Standing.

    A request the server asks on the standing stream while requests of the session are open goes to
    the latest of them, as on a stdio or SSE stream (``upstream.streams``): a server need not relate
    what it asks during a call to the call (the TypeScript SDK's ``server.request`` does not), and the
    caller that made the call is the one who can answer it."""

    def __init__(self, standing: Standing, server: str, caller: str) -> None:
        self.standing = standing
        self.server = server
        self.caller = caller
        #: The hooks of the session's requests in flight, oldest first (kept by the pool).
        self.open: list[Hooks] = []

    async def notification(self, method: str, params: dict[str, Any] | None) -> None:
        if method in SESSION_NOTIFICATIONS:
            await self.standing.notification(self.server, self.caller, method, params)

    async def request(self, method: str, params: dict[str, Any] | None) -> Any:
        if method == "ping":
            return {}
        if self.open:
            return await self.open[-1].request(method, params)
        return await self.standing.request(self.server, self.caller, method, params)


class WithSession(Hooks):
    """One request's hooks, with the session-level notifications sent to the session's hooks instead."""

    def __init__(self, inner: Hooks, session: Hooks) -> None:
        self.inner = inner
        self.session = session
        self.handshake_era = inner.handshake_era

    async def notification(self, method: str, params: dict[str, Any] | None) -> None:
        target = self.session if method in SESSION_NOTIFICATIONS else self.inner
        await target.notification(method, params)

    async def request(self, method: str, params: dict[str, Any] | None) -> Any:
        return await self.inner.request(method, params)

    async def input_required(self, result: dict[str, Any]) -> dict[str, Any] | None:
        return await self.inner.input_required(result)


def listen_params(uris: set[str]) -> dict[str, Any]:
    """A 2026-07-28 ``subscriptions/listen`` for the caller's resource subscriptions and list changes."""
    return {"notifications": {"resourcesListChanged": True, "promptsListChanged": True,
                              "resourceSubscriptions": sorted(uris)}}
