"""The per-token rate limit (``rate_limit_per_minute``), held across every replica of a fleet.

Requests are counted in fixed one-minute windows per token. On PostgreSQL the count is a row of
``rate_windows`` that every replica increments (one ``INSERT ... ON CONFLICT DO UPDATE ...
RETURNING``, a single round trip), so N replicas together allow the limit, not N times it. On SQLite
toolvet runs on one host, usually as one process, and counts in the process's memory. Past the limit
a request is refused (:class:`~toolvet.errors.RateLimited`, ``429`` with ``Retry-After`` over HTTP)
until the next window; windows that ended are deleted now and then. A request without a token is
not counted (it may use ``noauth`` tools only).
"""

from __future__ import annotations

import hashlib
import math
import threading
import time
from collections.abc import Callable
from typing import Final

from sqlalchemy import delete
from sqlalchemy.dialects import postgresql

from toolvet.db.models import RateWindow
from toolvet.errors import RateLimited
from toolvet.services.auth import Principal
from toolvet.services.context import Context

__all__ = ["WINDOW_SECONDS", "RateLimiter", "admit"]

WINDOW_SECONDS: Final = 60
#: Every this many counted requests, windows that ended are deleted.
PRUNE_EVERY: Final = 1000


class RateLimiter:
    """Counts one process's (SQLite) or the fleet's (PostgreSQL) requests per token and window."""

    def __init__(self, ctx: Context, clock: Callable[[], float] = time.time) -> None:
        self.ctx = ctx
        self.clock = clock
        self.shared = ctx.db.engine.dialect.name == "postgresql"
        self._lock = threading.Lock()
        self._counts: dict[tuple[str, int], int] = {}
        self._counted = 0

    def count(self, key: str, window: int) -> int:
        """Count one request of ``key`` in ``window``; how many it has made there now."""
        with self._lock:
            self._counted += 1
            prune = self._counted % PRUNE_EVERY == 0
            if not self.shared:
                if prune:
                    self._counts = {k: v for k, v in self._counts.items() if k[1] >= window}
                found = self._counts[(key, window)] = self._counts.get((key, window), 0) + 1
                return found
        upsert = postgresql.insert(RateWindow).values(key=key, window=window, count=1)
        statement = upsert.on_conflict_do_update(
            index_elements=[RateWindow.key, RateWindow.window], set_={"count": RateWindow.count + 1}
        ).returning(RateWindow.count)
        with self.ctx.db.engine.begin() as conn:
            counted = int(conn.execute(statement).scalar_one())
            if prune:
                conn.execute(delete(RateWindow).where(RateWindow.window < window))
        return counted

    def admit(self, principal: Principal) -> None:
        """Count a request of ``principal``'s token; RateLimited past the limit (blocking: a worker thread)."""
        limit = self.ctx.settings.rate_limit_per_minute
        if limit <= 0:
            return
        now = self.clock()
        window = int(now // WINDOW_SECONDS)
        key = hashlib.sha256(principal.actor.encode()).hexdigest()[:32]
        if self.count(key, window) > limit:
            retry_after = max(1, math.ceil((window + 1) * WINDOW_SECONDS - now))
            raise RateLimited(f"this token made more than {limit} requests this minute "
                              "(TOOLVET_RATE_LIMIT_PER_MINUTE); try again later", retry_after)


def admit(ctx: Context, principal: Principal | None) -> None:
    """:meth:`RateLimiter.admit` with the context's limiter (none counted without a token)."""
    if principal is None or ctx.settings.rate_limit_per_minute <= 0:
        return
    limiter = ctx.rate_limiter
    if limiter is None:
        limiter = ctx.rate_limiter = RateLimiter(ctx)
    limiter.admit(principal)
