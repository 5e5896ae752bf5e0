"""Where a sweep's database work runs: in this process, or in a writer process of its own.

A pass has three database steps: ``begin`` (take the server's lease; a sweep takes those of its
next passes together), ``apply`` (reconcile the listing and record the run, releasing the lease in
that transaction) and ``release`` (give the lease back after a pass that never got to ``apply``).
Discovery is CPU-bound under the GIL: reconciling a listing of 50 new tools costs about as much as
fetching it, so in one process a big sweep runs at the sum of the two. :class:`ProcessWriter` runs
a sweep's three steps in one separate process, which reconciles on another core while this one
fetches the next listings; one writer also means the sweep's steps never wait on each other for
SQLite's lock (until that process is up, they run in this one).

:class:`InlineWriter` is the same three steps in this process, for small sweeps (a writer process
costs about a second to start) and as the fallback when a writer process dies. The writer process
imports only the write side (no HTTP client): ``domain.listing`` and ``services.discovery_writes`` are
all it needs; the MCP SDK is loaded only if a definition declares an ``x-mcp-header`` (the findings
take the SDK's judgement of the annotation, ``domain.findings.headers``).
"""

from __future__ import annotations

import asyncio
import gc
import logging
import multiprocessing
import os
import time
import traceback
from collections.abc import Awaitable, Callable, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import replace
from datetime import datetime
from functools import partial
from typing import Any, Final, Protocol, TypeVar

import anyio
import anyio.to_thread

from toolvet.db.engine import Database
from toolvet.domain.findings import screen
from toolvet.domain.listing import Listing
from toolvet.schemas.tools import DiscoveryRunOut
from toolvet.services import leases
from toolvet.services.context import Context
from toolvet.services.discovery_writes import ListingApply, ToolsWithheld, apply_listing, apply_listings, begin_passes
from toolvet.settings import Settings

log = logging.getLogger("toolvet.discovery")

#: Groups of applies in flight to the writer process at once: the next is in its pipe while it writes one.
PIPELINE: Final = 2

T = TypeVar("T")

__all__ = ["InlineWriter", "PassWriter", "ProcessWriter", "writer_for"]


class PassWriter(Protocol):
    """The database steps of discovery passes."""

    async def begin(self, passes: Sequence[tuple[str, int]], lease_seconds: float,
                    since: datetime | None) -> list[str | None]:
        """Take the leases of ``passes`` (lease key, server id) and, with ``since``, check nobody
        discovered their servers since. Per pass, why it is skipped (lease not held), or None."""
        ...

    async def apply(self, server_id: int, name: str, listing: Listing, started: datetime, trigger: str,
                    lease_key: str, *, likely_unchanged: bool) -> DiscoveryRunOut:
        """Reconcile and record the pass, releasing its lease in the same transaction."""
        ...

    async def release(self, key: str) -> None:
        """Give the lease back (a pass that never reached ``apply``)."""
        ...


class InlineWriter:
    """The steps in this process, each in a worker thread, one at a time (``limiter``): the pass is
    CPU-bound under the GIL, so more threads add no throughput and only fight the event loop for the
    GIL and each other for SQLite's write lock. Never on the event loop itself: every step writes, and
    a write waits for a lock another process may hold (SQLite's busy timeout is 30 s), which would stall
    every MCP session this process serves."""

    def __init__(self, ctx: Context, limiter: anyio.CapacityLimiter | None = None) -> None:
        self.ctx = ctx
        self.limiter = limiter if limiter is not None else anyio.CapacityLimiter(1)

    async def begin(self, passes: Sequence[tuple[str, int]], lease_seconds: float,
                    since: datetime | None) -> list[str | None]:
        return await anyio.to_thread.run_sync(begin_passes, self.ctx.db, passes, lease_seconds, since,
                                              limiter=self.limiter)

    async def apply(self, server_id: int, name: str, listing: Listing, started: datetime, trigger: str,
                    lease_key: str, *, likely_unchanged: bool) -> DiscoveryRunOut:
        apply = partial(apply_listing, self.ctx, server_id, name, listing, started, trigger, lease_key=lease_key)
        # likely_unchanged or not, the step writes: it goes to the thread (the flag serves ProcessWriter).
        return await anyio.to_thread.run_sync(apply, limiter=self.limiter)

    async def release(self, key: str) -> None:
        await anyio.to_thread.run_sync(leases.release, self.ctx.db, key, limiter=self.limiter)


# ------------------------------------------------------------------------------ the writer process
#
# Module-level functions: they run in the writer process, on the Context its initializer opened.

_child: Context | None = None


def _child_init(settings: Settings) -> None:
    global _child
    # No migration (the parent's Context did that) and no secret box (the write side opens no secret).
    _child = Context(settings=settings, db=Database(settings.resolved_database_url()), secrets=None)  # type: ignore[arg-type]
    # Every new tool is screened here: the screen's automaton (0.1 s) is built while the process starts,
    # which the sweep does not wait for, not on the first pass it writes.
    screen.prepare()
    # What start-up made lives as long as the process: the collector's full passes need not walk it
    # while the sweeps' listings come and go (services.heap says why).
    gc.freeze()


def child_context() -> Context:
    """The Context of the writer process, in the writer process (for functions given to ``call``)."""
    if _child is None:  # pragma: no cover - the initializer always ran first
        raise RuntimeError("discovery writer process not initialised")
    return _child


class WriterFailure(Exception):
    """An error inside the writer process, carried back as text (its own exception may not pickle)."""


class _SendAgain(Exception):
    """The sender of a batch of withheld applies stopped before this one went: send it again."""


def _failure(exc: BaseException) -> WriterFailure:
    """``exc`` as text that crosses back from the writer process: its one-line summary, then its traceback."""
    detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
    return WriterFailure(f"{detail}\n{''.join(traceback.format_exception(exc))}")


def _carried(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    try:
        return fn(*args, **kwargs)
    except ToolsWithheld:
        raise
    except Exception as exc:
        raise _failure(exc) from None


#: Seconds the writer process has spent in its steps, as (wall time, its thread's CPU time): wall time
#: well above CPU time is time the writer waited (for SQLite's write lock, or the disk). Read with
#: ``ProcessWriter.call(busy)`` (benchmarks, diagnostics).
_busy = [0.0, 0.0]


def busy() -> tuple[float, float]:
    """(wall, CPU) seconds this writer process has spent in its steps so far."""
    return _busy[0], _busy[1]


def _timed(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    wall, cpu = time.perf_counter(), time.thread_time()
    try:
        return fn(*args, **kwargs)
    finally:
        _busy[0] += time.perf_counter() - wall
        _busy[1] += time.thread_time() - cpu


def _child_apply(items: Sequence[ListingApply], holder: str) -> list[DiscoveryRunOut | WriterFailure | None]:
    """Apply several listings (``discovery_writes.apply_listings``: a group of them per transaction); per
    item its run, its failure, or None when its tools were withheld and it needs them after all (nothing
    was written for it)."""
    outcomes: list[DiscoveryRunOut | WriterFailure | None] = []
    for outcome in _timed(apply_listings, child_context(), items, holder):
        if isinstance(outcome, ToolsWithheld):
            outcomes.append(None)
        elif isinstance(outcome, Exception):
            outcomes.append(_failure(outcome))
        else:
            outcomes.append(outcome)
    return outcomes


def _child_begin(passes: Sequence[tuple[str, int]], lease_seconds: float, since: datetime | None,
                 holder: str) -> list[str | None]:
    return _timed(_carried, begin_passes, child_context().db, passes, lease_seconds, since, holder=holder)


def _child_release(key: str, holder: str) -> None:
    _timed(_carried, leases.release, child_context().db, key, holder)


def _child_pid() -> int:
    return os.getpid()


class ProcessWriter:
    """``begin``, ``apply`` and ``release`` in one writer process, first in first out, started with
    ``spawn`` (a fork of this threaded, event-looped process is not safe) and kept until :meth:`close`.

    Applies go to the writer together: every apply that arrives while one round trip is in flight goes
    in the next, and the writer writes a group of them per transaction (``apply_listings``). A listing
    that is likely unchanged is sent without its tools: the no-change fast path needs none, and
    pickling them would cost this process as much as the fast path costs the writer. Should the fast
    path not hold after all, the writer says so (nothing written) and the listing goes again, whole.
    Should the writer process die, the sweep goes on with an :class:`InlineWriter` (logged); a step in
    flight then may have been committed or not, and the inline writer's repeat of it is harmless
    (reconcile re-reads what is stored; the lease release matches nothing).
    """

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.inline = InlineWriter(ctx)
        self._pool: ProcessPoolExecutor | None = ProcessPoolExecutor(
            max_workers=1, mp_context=multiprocessing.get_context("spawn"),
            initializer=_child_init, initargs=(ctx.settings,),
        )
        # Starting the process takes about a second (a fresh interpreter importing the write side);
        # until it answers, passes write in this process, so a sweep never waits for it.
        self._started: Future[int] = self._pool.submit(_child_pid)
        # Applies waiting to go to the writer together (see _apply_together).
        self._waiting: list[tuple[ListingApply, asyncio.Future[Any]]] = []
        self._in_flight = 0  # groups sent to the writer and not answered yet (at most PIPELINE)
        self._inline_turn = anyio.Lock()  # held by the pass writing here while the process starts

    @property
    def alive(self) -> bool:
        return self._pool is not None

    @property
    def _up(self) -> bool:
        return self._started.done() and self._pool is not None

    async def _run(self, fn: Callable[..., T], *args: Any) -> T:
        pool = self._pool
        if pool is None:
            raise BrokenProcessPool("discovery writer process is gone")
        try:
            future: Future[T] = pool.submit(fn, *args)  # raises at once once the pool knows it is broken
            return await asyncio.wrap_future(future)
        except BrokenProcessPool:
            if self._pool is pool:
                log.warning("discovery writer process died; this process writes the rest of the sweep")
                self._pool = None
                pool.shutdown(wait=False, cancel_futures=True)
            raise

    async def begin(self, passes: Sequence[tuple[str, int]], lease_seconds: float,
                    since: datetime | None) -> list[str | None]:
        # Once the writer is up, leases are taken there too, queued behind at most PIPELINE groups of
        # applies (the sweep asks two chunks ahead of the passes that need them). Taken in a thread of
        # this process instead, they fought the writer for SQLite's write lock: each side's busy handler
        # sleeps in growing steps, the writer took the lock again between them, and a lease transaction
        # waited a second while the writer's next transaction waited for it (discovery Round 14).
        return await self._there_or_here(partial(self.inline.begin, passes, lease_seconds, since),
                                         _child_begin, passes, lease_seconds, since, leases.HOLDER)

    async def apply(self, server_id: int, name: str, listing: Listing, started: datetime, trigger: str,
                    lease_key: str, *, likely_unchanged: bool) -> DiscoveryRunOut:
        if not self._up or self._inline_turn.locked():
            # Until the process is up, passes write here, one at a time; those that waited their turn
            # meanwhile go to the process once it is up, and none goes there while one still writes
            # here. A pass left queued for this process's thread went on writing here for seconds after
            # the process was up, slowed by the event loop holding the GIL, while the process waited
            # for SQLite's write lock (discovery Round 14).
            async with self._inline_turn:
                if not self._up:
                    return await self.inline.apply(server_id, name, listing, started, trigger, lease_key,
                                                   likely_unchanged=likely_unchanged)
        try:
            if likely_unchanged:
                outcome = await self._apply_together(
                    (server_id, name, replace(listing, tools=[]), started, trigger, lease_key, True))
                if outcome is not None:
                    return outcome
            whole = await self._apply_together((server_id, name, listing, started, trigger, lease_key, False))
            if whole is None:  # pragma: no cover - only a withheld listing is sent back
                raise WriterFailure(f"the writer asked for the tools of {name!r} it was given")
            return whole
        except BrokenProcessPool:
            return await self.inline.apply(server_id, name, listing, started, trigger, lease_key,
                                           likely_unchanged=likely_unchanged)

    async def _apply_together(self, item: ListingApply) -> DiscoveryRunOut | None:
        """Send an apply to the writer with every other one waiting: one round trip for all.

        The round trip to the writer process (pickling, the executor's threads, waking this loop) costs
        this process about as much as a no-change pass's fetch, and each transaction costs the writer a
        commit: sent together, both are paid once per group. Up to PIPELINE groups are in flight, so
        the writer has the next group in its pipe while this process hears of the last one's outcome
        (with one in flight the writer sat idle for every round trip: discovery Round 12). A caller
        that finds a slot free sends what is waiting, then what gathered meanwhile, until none is left
        or another sender is in flight; the others wait for their outcome. Should the last sender in
        flight stop early (cancelled), the rest are told to send for themselves. None: a withheld
        listing needs its tools after all.
        """
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._waiting.append((item, future))
        while True:
            if self._in_flight < PIPELINE and self._waiting:
                self._in_flight += 1
                try:
                    while self._waiting:
                        batch, self._waiting = self._waiting, []
                        try:
                            outcomes = await self._run(_child_apply, [i for i, _ in batch], leases.HOLDER)
                        except BaseException as exc:
                            for _, waiting in batch:
                                if waiting is not future and not waiting.done():
                                    waiting.set_exception(exc if isinstance(exc, Exception) else _SendAgain())
                            raise
                        for (_, waiting), outcome in zip(batch, outcomes, strict=True):
                            if waiting.done():
                                continue
                            if isinstance(outcome, WriterFailure):
                                waiting.set_exception(outcome)
                            else:
                                waiting.set_result(outcome)
                        if self._in_flight > 1:
                            break  # the other sender in flight sends what waits when its group is back
                finally:
                    self._in_flight -= 1
                    if self._in_flight == 0:
                        for _, waiting in self._waiting:
                            if not waiting.done():
                                waiting.set_exception(_SendAgain())
                        self._waiting = [(i, w) for i, w in self._waiting if not w.done()]
            try:
                return await future  # type: ignore[no-any-return]
            except _SendAgain:
                future = asyncio.get_running_loop().create_future()
                self._waiting.append((item, future))

    async def release(self, key: str) -> None:
        await self._there_or_here(partial(self.inline.release, key), _child_release, key, leases.HOLDER)

    async def _there_or_here(self, here: Callable[[], Awaitable[T]], fn: Callable[..., T], *args: Any) -> T:
        """``fn`` in the writer process once it is up, else (or once it has died) ``here``, in this one."""
        if not self._up:
            return await here()
        try:
            return await self._run(fn, *args)
        except BrokenProcessPool:
            return await here()

    async def call(self, fn: Callable[..., T], *args: Any) -> T:
        """Run the module-level function ``fn`` in the writer process (tests, diagnostics, benchmarks)."""
        return await self._run(fn, *args)

    async def pid(self) -> int:
        """The writer process's id, once it has started (tests, diagnostics)."""
        return await self._run(_child_pid)

    def close(self) -> None:
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)


def writer_for(ctx: Context, servers: int) -> PassWriter:
    """The writer for a sweep of ``servers`` passes: the Context's writer process when the sweep is
    big enough (``discovery_writer_min_servers``; started on first use and kept for later sweeps),
    else an inline writer."""
    threshold = ctx.settings.discovery_writer_min_servers
    if threshold <= 0 or servers < threshold:
        return InlineWriter(ctx)
    writer = ctx.discovery_writer
    if not isinstance(writer, ProcessWriter) or not writer.alive:
        writer = ctx.discovery_writer = ProcessWriter(ctx)
    return writer
