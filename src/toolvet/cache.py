"""One small cache for what toolvet reads often and may serve slightly stale: :class:`TtlCache`.

The gateway and the call service read the registry on every request (a tool's claim and settings, a
user's permission mode, a scope's lists, a server's target, a token's principal, the offered set).
Each read is kept for :data:`READ_TTL` seconds, so a change made by another process (the CLI, another
worker, discovery) is seen within that time; a change made in this process drops the entries it
touches at once.
"""

from __future__ import annotations

import enum
import time
from collections.abc import Awaitable, Callable, Hashable
from typing import Final, Generic, Literal, TypeVar

import anyio

__all__ = ["MISSING", "READ_TTL", "Loader", "TtlCache"]

#: Seconds a cached registry read is served before it is read again (every cache of toolvet's).
READ_TTL: Final = 1.0


class _Missing(enum.Enum):
    MISSING = "missing"


#: What :meth:`TtlCache.get` returns for a key it holds no fresh value for. A sentinel, not None: None
#: is a value worth caching ("no such tool").
MISSING: Final = _Missing.MISSING

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class TtlCache(Generic[K, V]):
    """At most ``max_size`` values, each served for ``ttl`` seconds after it was put.

    Every entry lives equally long, so the order of insertion is the order of expiry: a put drops
    the expired entries at the front, and a full cache drops its oldest entry to make room. ``clock``
    is ``time.monotonic`` unless a test gives its own.
    """

    def __init__(self, ttl: float = READ_TTL, max_size: int = 10_000,
                 clock: Callable[[], float] = time.monotonic) -> None:
        if ttl <= 0 or max_size < 1:
            raise ValueError("a TtlCache needs a positive ttl and room for one entry")
        self.ttl = ttl
        self.max_size = max_size
        self._clock = clock
        self._entries: dict[K, tuple[float, V]] = {}

    def get(self, key: K) -> V | Literal[_Missing.MISSING]:
        """The value put for ``key`` less than ``ttl`` seconds ago, else :data:`MISSING`."""
        entry = self._entries.get(key)
        if entry is None or entry[0] <= self._clock():
            return MISSING
        return entry[1]

    def peek(self, key: K) -> V | Literal[_Missing.MISSING]:
        """The value held for ``key`` however old (until it is dropped to make room), else :data:`MISSING`."""
        entry = self._entries.get(key)
        return MISSING if entry is None else entry[1]

    def put(self, key: K, value: V) -> V:
        """Keep ``value`` for ``key`` for ``ttl`` seconds from now; returns it."""
        now = self._clock()
        self._entries.pop(key, None)  # re-inserted at the end: the order stays the order of expiry
        while self._entries:
            oldest = next(iter(self._entries))
            if self._entries[oldest][0] > now and len(self._entries) < self.max_size:
                break
            del self._entries[oldest]
        self._entries[key] = (now + self.ttl, value)
        return value

    def pop(self, key: K) -> None:
        """Forget ``key`` (a change made here must be seen at once)."""
        self._entries.pop(key, None)

    def clear(self) -> None:
        """Forget everything."""
        self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)


class Loader(Generic[K, V]):
    """A :class:`TtlCache` filled by one async loader, one load per key at a time: callers that miss
    the same key together wait for the one load in flight instead of each reading it again (at a
    cache entry's expiry, every concurrent call misses at once)."""

    def __init__(self, load: Callable[[K], Awaitable[V]], cache: TtlCache[K, V] | None = None) -> None:
        self.load = load
        self.cache: TtlCache[K, V] = cache if cache is not None else TtlCache()
        self._loading: dict[K, anyio.Event] = {}

    async def get(self, key: K) -> V:
        while True:
            hit = self.cache.get(key)
            if hit is not MISSING:
                return hit
            loading = self._loading.get(key)
            if loading is None:
                break
            await loading.wait()  # another caller's load: its value, once put
        done = self._loading[key] = anyio.Event()
        try:
            return self.cache.put(key, await self.load(key))
        finally:
            del self._loading[key]
            done.set()

    def pop(self, key: K) -> None:
        self.cache.pop(key)

    def clear(self) -> None:
        self.cache.clear()
