"""What upstream sessions send outside any call, passed to the clients of the caller they belong to.

Every pooled upstream session belongs to one caller (``upstream.pool``), so what its server sends on
its own belongs to that caller's clients, and to nobody else's:

- ``notifications/resources/updated`` goes to each of the caller's connections that subscribed to
  that server's URI (``resources/subscribe`` in the handshake era, ``resourceSubscriptions`` of a
  ``subscriptions/listen`` at 2026-07-28), with the URI as the client knows it;
- ``notifications/resources/list_changed`` and ``notifications/prompts/list_changed`` go to each of
  the caller's connections whose endpoint serves that server (a 2026-07-28 stream only when it asked
  for that kind);
- a ``roots/list`` the server asks on its own is asked of the caller's latest handshake-era
  connection that declared ``roots`` (2026-07-28 clients are asked for roots only within a call), and
  refused, saying why, when there is none.

A :class:`Listener` is one such connection; :class:`Notices` holds them per caller and is the pool's
:class:`~toolvet.upstream.standing.Standing`.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Final

import anyio
import mcp.types as types
from mcp.server.session import ServerSession
from mcp.server.subscriptions import InMemorySubscriptionBus, PromptsListChanged, ResourcesListChanged, ResourceUpdated
from mcp.types import INVALID_PARAMS

from toolvet.services.calls import CallService
from toolvet.services.events import LIST_CHANGED, UPSTREAM
from toolvet.upstream.errors import RpcError

__all__ = ["CHANGE_SIGNALS", "LIST_CHANGES", "MAX_LISTENERS", "Listener", "Notices", "notices_of", "session_listener",
           "stream_listener"]

log = logging.getLogger("toolvet.gateway")

#: The list changes relayed to clients (tool list changes are toolvet's own: the offered set).
LIST_CHANGES: Final = frozenset({"notifications/resources/list_changed", "notifications/prompts/list_changed"})
#: Connections remembered per caller (the oldest is forgotten first).
MAX_LISTENERS: Final = 256
#: How long one client may take to take a notification, or to answer a roots/list.
DELIVERY_BOUND: Final = 10.0
ROOTS_BOUND: Final = 60.0

Deliver = Callable[[str, dict[str, Any] | None], Awaitable[None]]


@dataclass(eq=False)
class Listener:
    """One connection of a caller's that hears its upstream sessions."""

    caller: str
    #: Whether the connection's endpoint serves a server (its list changes reach it).
    serves: Callable[[str], bool]
    #: Sends (method, params) to the client.
    deliver: Deliver
    #: The list changes it wants (a 2026-07-28 stream names them; a handshake-era session takes all).
    lists: frozenset[str] = LIST_CHANGES
    #: Asks the client for its roots (a handshake-era session that declared them), else None.
    roots: Callable[[], Awaitable[Any]] | None = None
    #: (server, URI as the server knows it) -> the URI as the client knows it.
    subscriptions: dict[tuple[str, str], str] = field(default_factory=dict)


#: The notifications by which a server says its lists changed: each asks discovery to list it again.
CHANGE_SIGNALS: Final = frozenset({"notifications/tools/list_changed", *LIST_CHANGES})


@dataclass
class Notices:
    """The listeners of every caller (see the module docstring); the upstream pool's Standing.

    ``changed`` is told the server's name whenever one says on a pooled session (in a call or outside
    one) that its tools, prompts or resources changed: the scheduler hears it and lists that server
    again after its debounce, instead of at the next interval. Tool lists are not passed on to clients
    (they list toolvet's vetted tools, told of a change when discovery stores one)."""

    changed: Callable[[str], None] | None = None
    _listeners: dict[str, list[Listener]] = field(default_factory=dict)

    def add(self, listener: Listener) -> Callable[[], None]:
        """Remember ``listener`` until the returned callable is called."""
        mine = self._listeners.setdefault(listener.caller, [])
        if len(mine) >= MAX_LISTENERS:
            mine.pop(0)
        mine.append(listener)

        def remove() -> None:
            listeners = self._listeners.get(listener.caller, [])
            if listener in listeners:
                listeners.remove(listener)
            if not listeners:
                self._listeners.pop(listener.caller, None)

        return remove

    def held_elsewhere(self, listener: Listener, server: str, uri: str) -> bool:
        """Whether another connection of the same caller is subscribed to ``uri`` on ``server`` (the
        upstream subscription, which the caller's connections share, then stays)."""
        return any((server, uri) in other.subscriptions
                   for other in self._listeners.get(listener.caller, ()) if other is not listener)

    async def notification(self, server: str, caller: str, method: str, params: dict[str, Any] | None) -> None:
        if method in CHANGE_SIGNALS and self.changed is not None:
            self.changed(server)
        listeners = list(self._listeners.get(caller, ()))
        if method == "notifications/resources/updated":
            uri = (params or {}).get("uri")
            if not isinstance(uri, str):
                return
            for listener in listeners:
                if (known := listener.subscriptions.get((server, uri))) is not None:
                    await _deliver(listener, method, {"uri": known})
        elif method in LIST_CHANGES:
            for listener in listeners:
                if method in listener.lists and listener.serves(server):
                    await _deliver(listener, method, None)

    async def request(self, server: str, caller: str, method: str, params: dict[str, Any] | None) -> Any:
        if method != "roots/list":
            raise RpcError(INVALID_PARAMS, f"toolvet relays {method[:100]} only while a call runs", synthetic=True)
        asker = next((li for li in reversed(self._listeners.get(caller, ())) if li.roots is not None), None)
        if asker is None or asker.roots is None:
            raise RpcError(INVALID_PARAMS, "no client behind toolvet that declared roots is connected", synthetic=True)
        try:
            with anyio.fail_after(ROOTS_BOUND):
                return await asker.roots()
        except TimeoutError:
            raise RpcError(INVALID_PARAMS, "the client behind toolvet did not answer roots/list in time",
                           synthetic=True) from None
        except Exception as exc:  # its connection is gone, or it refused: the server hears why
            raise RpcError(INVALID_PARAMS, f"the client behind toolvet could not list its roots: {exc}"[:300],
                           synthetic=True) from None


async def _deliver(listener: Listener, method: str, params: dict[str, Any] | None) -> None:
    try:
        with anyio.fail_after(DELIVERY_BOUND):
            await listener.deliver(method, params)
    except Exception:  # the connection is gone or stuck: the others still hear it
        log.debug("could not pass %s to a client", method, exc_info=True)


def notices_of(service: CallService) -> Notices:
    """The Notices of the service's upstream pool (made, and handed to the pool, on first use)."""
    pool = service.pool
    if pool is not None and isinstance(pool.standing, Notices):
        return pool.standing
    bus = service.ctx.bus
    notices = Notices(changed=lambda server: bus.publish({"type": LIST_CHANGED, "server": server}, UPSTREAM))
    if pool is not None:
        pool.standing = notices
    return notices


def session_listener(session: ServerSession, caller: str, serves: Callable[[str], bool]) -> Listener:
    """A handshake-era client's connection (its standalone stream carries what it is sent)."""

    async def deliver(method: str, params: dict[str, Any] | None) -> None:
        if method == "notifications/resources/updated" and params is not None:
            await session.send_resource_updated(params["uri"])
        elif method == "notifications/resources/list_changed":
            await session.send_resource_list_changed()
        elif method == "notifications/prompts/list_changed":
            await session.send_prompt_list_changed()

    roots = None
    capabilities = session.client_capabilities
    if capabilities is not None and capabilities.roots is not None and session.can_send_request:
        async def roots() -> Any:
            listed = await session.send_request(types.ListRootsRequest(), types.ListRootsResult)
            return listed.model_dump(by_alias=True, mode="json", exclude_none=True)

    return Listener(caller, serves, deliver, roots=roots)


_STREAM_KINDS: Final = {"notifications/resources/list_changed": "resources_list_changed",
                        "notifications/prompts/list_changed": "prompts_list_changed"}


def stream_listener(bus: InMemorySubscriptionBus, caller: str, serves: Callable[[str], bool],
                    wanted: types.SubscriptionFilter) -> Listener:
    """A 2026-07-28 client's ``subscriptions/listen`` stream, fed through its own bus (so its events
    are never another caller's)."""

    async def deliver(method: str, params: dict[str, Any] | None) -> None:
        if method == "notifications/resources/updated" and params is not None:
            await bus.publish(ResourceUpdated(uri=params["uri"]))
        elif method == "notifications/resources/list_changed":
            await bus.publish(ResourcesListChanged())
        elif method == "notifications/prompts/list_changed":
            await bus.publish(PromptsListChanged())

    lists = frozenset(method for method, flag in _STREAM_KINDS.items() if getattr(wanted, flag))
    return Listener(caller, serves, deliver, lists=lists)
