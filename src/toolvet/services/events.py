"""The event bus: live updates inside one process, and between every process on one database.

Events are small dicts with a ``type``, published on a topic:

- ``calls`` (the default): ``tool-call-pending`` and ``tool-call-decided``, for ``GET /api/v1/events``
  and the console's pending list, and to wake a call waiting for its decision;
- ``cache``: ``changed`` after an operator's edit or a token's revocation commits, so every process
  drops what it cached of the registry at once instead of serving it for another second;
- ``tools``: ``tools-changed`` after a discovery pass changed a server's tools, so the gateway tells
  its clients now rather than at its next poll;
- ``upstream``: ``list-changed`` when a server says, on a session of the gateway's, that its tools,
  prompts or resources changed, so the scheduler lists it again now rather than at its next interval.

:class:`EventBus` is the interface and the in-process delivery both implementations share: each
subscriber gets its own bounded buffer, and a subscriber that falls behind loses the oldest events
rather than slowing the publisher (the call path never waits on a slow browser tab). On SQLite it is
the whole bus (:class:`InProcessBus`); on PostgreSQL, :class:`toolvet.services.pg_bus.PostgresBus`
also carries every event to the other processes with ``LISTEN``/``NOTIFY``. :func:`open_bus` picks
one by the database URL.
"""

from __future__ import annotations

import threading
from asyncio import AbstractEventLoop, get_running_loop
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any, Final

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from toolvet.db.engine import Database

__all__ = ["BUFFER", "CACHE", "CALLS", "LIST_CHANGED", "STOPPING", "TOOLS", "UPSTREAM", "Event", "EventBus",
           "InProcessBus", "open_bus"]

BUFFER: Final = 256
#: Call events (the default topic).
CALLS: Final = "calls"
#: Cache invalidation: ``{"type": "changed", "what": [object types]}``.
CACHE: Final = "cache"
#: Tool-list changes found by discovery: ``{"type": "tools-changed", "server": name}``.
TOOLS: Final = "tools"
#: A server's own change signal heard by the gateway: ``{"type": "list-changed", "server": name}``.
UPSTREAM: Final = "upstream"
LIST_CHANGED: Final = "list-changed"
#: The type of the event this process's ``calls`` subscribers get (never sent to other processes)
#: when it starts to stop: live streams end then, instead of holding the shutdown's grace period.
STOPPING: Final = "stopping"

Event = dict[str, Any]


class EventBus:
    """Publish to every current subscriber of a topic; subscribers come and go.

    ``publish`` never blocks and may be called from any thread (a service's worker thread publishes
    once its transaction commits): off the loop the bus runs on, delivery hops onto that loop.
    """

    def __init__(self) -> None:
        self._subscribers: dict[str, set[MemoryObjectSendStream[Event]]] = {}
        self._loop: AbstractEventLoop | None = None
        self._loop_thread: int | None = None
        self._depth = 0

    @property
    def shared(self) -> bool:
        """Whether events reach other processes (False: this process only)."""
        return False

    def publish(self, event: Event, topic: str = CALLS) -> None:
        """Deliver ``event`` to every subscriber of ``topic``, here and (for a shared bus) elsewhere."""
        self.deliver(event, topic)

    def deliver(self, event: Event, topic: str) -> None:
        """Hand ``event`` to this process's subscribers of ``topic`` only."""
        self.on_loop(self._deliver_here, event, topic)

    def on_loop(self, fn: Callable[..., None], *args: Any) -> None:
        """Call ``fn(*args)`` on the bus's loop: now when called there (or with no running bus), else
        scheduled onto it from this thread."""
        loop = self._loop
        if loop is not None and threading.get_ident() != self._loop_thread:
            if not loop.is_closed():
                loop.call_soon_threadsafe(fn, *args)
            return
        fn(*args)

    def _deliver_here(self, event: Event, topic: str) -> None:
        streams = self._subscribers.get(topic)
        if not streams:
            return
        for stream in list(streams):
            try:
                stream.send_nowait(event)
            except anyio.WouldBlock:
                pass  # that subscriber is behind; it misses this event rather than blocking the publisher
            except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                streams.discard(stream)

    @asynccontextmanager
    async def subscribe(self, topic: str = CALLS) -> AsyncIterator[MemoryObjectReceiveStream[Event]]:
        """``async with bus.subscribe() as events: async for event in events: ...``"""
        send, receive = anyio.create_memory_object_stream[Event](BUFFER)
        streams = self._subscribers.setdefault(topic, set())
        streams.add(send)
        try:
            async with receive:
                yield receive
        finally:
            streams.discard(send)
            send.close()

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """Run the bus while the block runs (the app's lifespan, ``toolvet serve``): publishes from
        worker threads are delivered on this loop; a shared bus also connects to the other processes.
        Re-entrant: only the outermost block starts and stops it."""
        if self._depth:
            self._depth += 1
            try:
                yield
            finally:
                self._depth -= 1
            return
        self._depth = 1
        self._loop, self._loop_thread = get_running_loop(), threading.get_ident()
        try:
            async with self._connected():
                yield
        finally:
            self._depth = 0
            self._loop = self._loop_thread = None

    @asynccontextmanager
    async def _connected(self) -> AsyncIterator[None]:
        """What a shared bus runs beside its subscribers (nothing, in-process)."""
        yield


class InProcessBus(EventBus):
    """The bus of a process on SQLite: events reach this process's subscribers only (another process
    on the same file sees a change within ``toolvet.cache.READ_TTL``, when its caches expire)."""


def open_bus(db: Database) -> EventBus:
    """The bus for ``db``: over ``LISTEN``/``NOTIFY`` on PostgreSQL, in-process on SQLite."""
    if db.engine.dialect.name == "postgresql":
        from toolvet.services.pg_bus import PostgresBus  # psycopg's async machinery, for PostgreSQL only

        return PostgresBus(db)
    return InProcessBus()
