"""The event bus over PostgreSQL ``LISTEN``/``NOTIFY``: every process on one database sees every event.

One psycopg async connection per process listens on one channel, on its own task; another publishes.
A publish is delivered to this process's subscribers at once and queued for the publisher, so the
caller never waits for the database. A notification carries ``{"o": origin, "t": topic, "e": event}``;
an event too big for a ``NOTIFY`` payload (8000 bytes) is stored in ``bus_messages`` and its id sent
instead (``"r"``), which the receivers read. A process ignores its own notifications (it delivered
them when they were published).

When the listening connection drops, it is opened again with exponential back-off. Notifications
sent meanwhile are lost, so on every reconnection this process drops all it cached (a ``changed`` of
everything on the ``cache`` topic) and re-reads the offered tools (a ``tools-changed``); a call
waiting for its decision still polls its row now and then (``services.calls``), so it never waits
forever on a lost wake-up.

A process that never runs the bus (the CLI) publishes with one ``pg_notify`` on the engine instead:
``toolvet token revoke`` reaches every running server at once.
"""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import timedelta
from typing import Any, Final

import anyio
import psycopg
from anyio.streams.memory import MemoryObjectSendStream
from sqlalchemy import delete, func, insert, make_url, select

from toolvet.db.engine import Database
from toolvet.db.models import BusMessage
from toolvet.db.types import utcnow
from toolvet.errors import first_line
from toolvet.services.events import CACHE, CALLS, TOOLS, Event, EventBus

__all__ = ["CHANNEL", "MAX_PAYLOAD", "PostgresBus"]

log = logging.getLogger("toolvet.bus")

#: The one channel toolvet notifies on (a channel is per database, as the bus is).
CHANNEL: Final = "toolvet_events"
#: Largest payload sent inline; PostgreSQL's limit is 8000 bytes.
MAX_PAYLOAD: Final = 7900
#: How long a stored big event is kept for its receivers.
KEEP_MESSAGES: Final = timedelta(minutes=10)
#: Back-off between reconnections of the listening connection (seconds): first, growth, most.
BACKOFF_FIRST: Final = 0.2
BACKOFF_MAX: Final = 10.0
#: Events waiting for the publisher; past this a publish reaches this process only.
QUEUE: Final = 10_000
#: Seconds a stopping bus waits for its queued events to be sent.
DRAIN_SECONDS: Final = 2.0
#: Seconds one connection attempt may take.
CONNECT_TIMEOUT: Final = 10


class PostgresBus(EventBus):
    """The bus of a process on PostgreSQL; run it with ``async with bus.running():``."""

    def __init__(self, db: Database) -> None:
        super().__init__()
        self.db = db
        self.origin = uuid.uuid4().hex[:12]
        self.dsn = make_url(db.url).set(drivername="postgresql").render_as_string(hide_password=False)
        self._outbox: MemoryObjectSendStream[tuple[str, Event]] | None = None
        #: Set while the listening connection is up (tests wait on it; so does readiness).
        self.listening = anyio.Event()
        self.reconnections = 0
        self._drained = anyio.Event()

    @property
    def shared(self) -> bool:
        return True

    def publish(self, event: Event, topic: str = CALLS) -> None:
        self.deliver(event, topic)
        if self._loop is None:
            self._notify_now(topic, event)  # no running bus (the CLI): one statement on the engine
            return
        self.on_loop(self._enqueue, topic, event)

    def _enqueue(self, topic: str, event: Event) -> None:
        if self._outbox is None:
            return
        try:
            self._outbox.send_nowait((topic, event))
        except anyio.WouldBlock:
            log.warning("event bus: publisher behind, a %s event reached this process only", topic)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            pass

    @asynccontextmanager
    async def _connected(self) -> AsyncIterator[None]:
        send, receive = anyio.create_memory_object_stream[tuple[str, Event]](QUEUE)
        async with anyio.create_task_group() as tg:
            self._outbox, self._drained = send, anyio.Event()
            tg.start_soon(self._listen)
            tg.start_soon(self._publish_loop, receive)
            # A process starts serving once it hears the others (bounded: a database that is away
            # now is reconnected to in the background).
            with anyio.move_on_after(CONNECT_TIMEOUT):
                await self.listening.wait()
            try:
                yield
            finally:
                self._outbox = None
                send.close()  # the publisher sends what is queued, then ends (bounded)
                with anyio.move_on_after(DRAIN_SECONDS, shield=True):
                    await self._drained.wait()
                tg.cancel_scope.cancel()

    # ------------------------------------------------------------------ sending

    def _payload(self, topic: str, event: Event) -> str:
        return json.dumps({"o": self.origin, "t": topic, "e": event}, separators=(",", ":"), default=str)

    def _notify_now(self, topic: str, event: Event) -> None:
        """Publish synchronously through the engine (a process without a running bus). A failure is
        logged, never raised: the change that prompted the event is committed already, and the other
        processes' caches expire on their own within ``toolvet.cache.READ_TTL``."""
        payload = self._payload(topic, event)
        try:
            with self.db.engine.begin() as conn:
                if len(payload.encode()) > MAX_PAYLOAD:
                    payload = self._store(conn, topic, payload)
                conn.execute(select(func.pg_notify(CHANNEL, payload)))
        except Exception as exc:
            log.warning("event bus: a %s event reached this process only (%s)", topic, first_line(exc))

    def _store(self, conn: Any, topic: str, payload: str) -> str:
        """Keep a big event in ``bus_messages``; the reference to notify instead."""
        now = utcnow()
        conn.execute(delete(BusMessage).where(BusMessage.created_at < now - KEEP_MESSAGES))
        ref = conn.scalar(insert(BusMessage).values(topic=topic, payload=payload, created_at=now)
                          .returning(BusMessage.id))
        return json.dumps({"o": self.origin, "t": topic, "r": ref}, separators=(",", ":"))

    def _send_big(self, topic: str, payload: str) -> None:
        with self.db.engine.begin() as conn:
            conn.execute(select(func.pg_notify(CHANNEL, self._store(conn, topic, payload))))

    async def _publish_loop(self, receive: Any) -> None:
        backoff = BACKOFF_FIRST
        pending: tuple[str, Event] | None = None
        async with receive:
            while True:
                try:
                    async with await psycopg.AsyncConnection.connect(
                            self.dsn, autocommit=True, connect_timeout=CONNECT_TIMEOUT) as conn:
                        backoff = BACKOFF_FIRST
                        while True:
                            if pending is None:
                                pending = await receive.receive()
                            topic, event = pending
                            payload = self._payload(topic, event)
                            if len(payload.encode()) > MAX_PAYLOAD:
                                await anyio.to_thread.run_sync(self._send_big, topic, payload)
                            else:
                                await conn.execute("SELECT pg_notify(%s, %s)", (CHANNEL, payload))
                            pending = None
                except (anyio.EndOfStream, anyio.ClosedResourceError):
                    self._drained.set()
                    return
                except Exception as exc:  # the database went away: the event is sent once it is back
                    log.warning("event bus: publishing failed (%s); retrying in %.1fs", first_line(exc), backoff)
                    await anyio.sleep(backoff)
                    backoff = min(backoff * 2, BACKOFF_MAX)

    # ------------------------------------------------------------------ receiving

    async def _listen(self) -> None:
        backoff = BACKOFF_FIRST
        first = True
        while True:
            try:
                async with await psycopg.AsyncConnection.connect(
                        self.dsn, autocommit=True, connect_timeout=CONNECT_TIMEOUT) as conn:
                    await conn.execute(f"LISTEN {CHANNEL}")
                    backoff = BACKOFF_FIRST
                    self.listening.set()
                    if not first:
                        self.reconnections += 1
                        self._resync()
                    first = False
                    async for notice in conn.notifies():
                        await self._receive(notice.payload)
            except Exception as exc:
                log.warning("event bus: listening connection lost (%s); reconnecting in %.1fs",
                            first_line(exc), backoff)
            self.listening = anyio.Event()
            await anyio.sleep(backoff)
            backoff = min(backoff * 2, BACKOFF_MAX)

    def _resync(self) -> None:
        """What was published while this process was not listening is lost: drop every cache."""
        self.deliver({"type": "changed", "what": ["*"]}, CACHE)
        self.deliver({"type": "tools-changed", "server": None}, TOOLS)

    async def _receive(self, raw: str) -> None:
        try:
            message = json.loads(raw)
            if message.get("o") == self.origin:
                return  # delivered here when it was published
            topic = str(message["t"])
            if "r" in message:
                stored = await anyio.to_thread.run_sync(self._load, int(message["r"]))
                if stored is None:
                    return  # pruned already
                message = json.loads(stored)
            event = message["e"]
        except (ValueError, KeyError, TypeError):
            log.warning("event bus: ignored a malformed notification")
            return
        if isinstance(event, dict):
            self.deliver(event, topic)

    def _load(self, ref: int) -> str | None:
        with self.db.engine.connect() as conn:
            return conn.scalar(select(BusMessage.payload).where(BusMessage.id == ref))

