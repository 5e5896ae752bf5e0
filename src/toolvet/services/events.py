"""An in-process event bus for live updates (``GET /api/v1/events`` and the console's pending list).

Events are small dicts with a ``type``. Each subscriber gets its own bounded buffer; a subscriber that
falls behind loses the oldest events rather than slowing the publisher (the call path must never wait
on a slow browser tab).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
from anyio.streams.memory import MemoryObjectSendStream

BUFFER = 256


class EventBus:
    """Publish to every current subscriber; subscribers come and go."""

    def __init__(self) -> None:
        self._subscribers: set[MemoryObjectSendStream[dict[str, Any]]] = set()

    def publish(self, event: dict[str, Any]) -> None:
        """Deliver ``event`` to every subscriber without waiting (thread-safe enough for one loop)."""
        for stream in list(self._subscribers):
            try:
                stream.send_nowait(event)
            except anyio.WouldBlock:
                pass  # that subscriber is behind; it misses this event rather than blocking the call
            except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                self._subscribers.discard(stream)

    @asynccontextmanager
    async def subscribe(self) -> AsyncIterator[AsyncIterator[dict[str, Any]]]:
        """``async with bus.subscribe() as events: async for event in events: ...``"""
        send, receive = anyio.create_memory_object_stream[dict[str, Any]](BUFFER)
        self._subscribers.add(send)
        try:
            async with receive:
                yield receive
        finally:
            self._subscribers.discard(send)
            send.close()
