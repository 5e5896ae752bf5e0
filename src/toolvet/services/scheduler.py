"""Keeping the registry current inside ``toolvet serve`` (docs/discovery.md#keeping-current).

Every ``discovery_interval`` each enabled ``auto`` server is listed again; a server that signals that
its list changed is listed again after ``discovery_debounce`` seconds (signals inside that window
collapse into one pass). Several processes may run a scheduler on one database: each pass takes the
server's lease, and a pass finds out under the lease whether another process has just done the work.

Signals come from the gateway (a server that says, on a session of a call's, that its lists changed:
``events.UPSTREAM``) and from one :func:`~toolvet.discovery.watch.watch_list_changed` task per enabled
``auto`` server and fleet, kept in step with the registry on every tick: a new server gets a watcher, a
removed, disabled or now-manual server loses its one, and an edited server (another target) is
watched afresh. Each watcher is held under the lease ``watch:NAME``, so of all the processes on one
database only one watches a server; the leases are renewed while this process lives and taken over
by another process's scheduler within a tick of lapsing when it dies. Ticks come at least every
``lease_seconds``, so a dead process's watchers and due servers move within about twice that.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable
from datetime import datetime, timedelta

import anyio
import anyio.to_thread
import httpx2
from anyio.abc import TaskGroup, TaskStatus
from sqlalchemy import or_

from toolvet.db.models import Server
from toolvet.db.types import utcnow
from toolvet.discovery.watch import watch_list_changed
from toolvet.services import leases, retention
from toolvet.services.context import Context
from toolvet.services.discovery import OnRun, PassPlan, limits_from, plan, plans_where, run_passes, upstream_guard
from toolvet.services.events import LIST_CHANGED, UPSTREAM
from toolvet.upstream.http import http_client
from toolvet.upstream.target import Target

log = logging.getLogger("toolvet.scheduler")

#: The scheduler looks for due servers at least this often (seconds), so new servers are picked up.
MAX_TICK = 30.0
#: How far each tick's wait is moved at random, as a fraction of the tick.
TICK_JITTER = 0.3
#: Seconds between prunings of old call records (``services.retention``); the first is on the first tick.
PRUNE_EVERY = 3600.0


class Scheduler:
    """Re-discovers due servers and, debounced, servers that announced a change."""

    def __init__(self, ctx: Context, *, on_run: OnRun | None = None,
                 on_prune: Callable[[retention.Pruned], None] | None = None) -> None:
        self.ctx = ctx
        self.on_run = on_run  # called with every pass's run report (tests and logging hook in here)
        self.on_prune = on_prune  # called with what each pruning of old call records removed
        self._next_prune = 0.0
        self._wake = anyio.Event()
        # name -> (due on the loop clock, signal time)
        self._requested: dict[str, tuple[float, datetime]] = {}
        self._watchers: dict[str, tuple[Target, anyio.CancelScope]] = {}  # name -> (target, watcher scope)
        self.passes = 0
        #: Who this scheduler is as a watch-lease holder (the process's identity).
        self.holder = leases.HOLDER

    def request(self, name: str) -> None:
        """A server said its tool list changed: list it again after the debounce delay."""
        if name not in self._requested:
            self._requested[name] = (anyio.current_time() + self.ctx.settings.discovery_debounce, utcnow())
        self._wake.set()

    async def _hear_gateway(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Request a pass for each server the gateway heard say its lists changed (``events.UPSTREAM``: on
        a session of a call's, where the watcher's own session hears nothing of it), from any process."""
        async with self.ctx.bus.subscribe(UPSTREAM) as events:
            task_status.started()
            async for event in events:
                if event.get("type") == LIST_CHANGED and isinstance(server := event.get("server"), str):
                    self.request(server)

    def _due(self, now: datetime) -> list[PassPlan]:
        cutoff = now - timedelta(seconds=self.ctx.settings.discovery_interval)
        return plans_where(self.ctx, or_(Server.last_discovery_at.is_(None), Server.last_discovery_at <= cutoff))

    def _named(self, names: list[str]) -> list[PassPlan]:
        return plans_where(self.ctx, Server.name.in_(names))

    def watched(self) -> dict[str, Target]:
        """The servers that have a list-changed watcher now, and the target each one watches."""
        return {name: target for name, (target, _) in self._watchers.items()}

    async def run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Run until cancelled."""
        settings = self.ctx.settings
        tick = min(MAX_TICK, settings.discovery_interval, settings.lease_seconds)
        async with _http_client(self.ctx) as http, anyio.create_task_group() as watchers:
            watchers.start_soon(leases.keep_renewed, self.ctx.db, settings.lease_seconds, self.holder)
            await watchers.start(self._hear_gateway)
            task_status.started()
            try:
                await self._loop(watchers, http, tick)
            finally:
                with anyio.CancelScope(shield=True):
                    await self._release_watch_leases()

    async def _loop(self, watchers: TaskGroup, http: httpx2.AsyncClient, tick: float) -> None:
        """Tick until cancelled: watchers in step, due and requested servers listed, old calls pruned."""
        while True:
            try:
                await self._sync_watchers(watchers, http)
            except Exception:  # e.g. the database is briefly away: keep the watchers we have
                log.exception("updating the list-changed watchers failed")
            try:
                await self._once(http)
            except Exception:  # one bad sweep must not stop keeping the registry current
                log.exception("scheduled discovery sweep failed")
            await self._prune()
            # Jittered: processes sharing a database would otherwise tick in step, and the one a
            # little ahead would take every due server's lease at every tick.
            sleep = tick * random.uniform(1 - TICK_JITTER, 1 + TICK_JITTER)
            if self._requested:
                first_due = min(d for d, _ in self._requested.values())
                sleep = min(sleep, max(0.0, first_due - anyio.current_time()))
            with anyio.move_on_after(sleep):
                await self._wake.wait()
            self._wake = anyio.Event()

    async def _prune(self) -> None:
        """Old call records go once every PRUNE_EVERY seconds (bounded batches, off the event loop)."""
        if anyio.current_time() < self._next_prune:
            return
        self._next_prune = anyio.current_time() + PRUNE_EVERY
        try:
            pruned = await anyio.to_thread.run_sync(retention.prune, self.ctx)
        except Exception:  # the database is briefly away: try again next time
            log.exception("pruning old call records failed")
            return
        if pruned.calls or pruned.audit_entries:
            log.info("pruned %d calls and %d call audit entries", pruned.calls, pruned.audit_entries)
        if self.on_prune is not None:
            self.on_prune(pruned)

    async def _sync_watchers(self, tg: TaskGroup, http: httpx2.AsyncClient) -> None:
        """One watcher per enabled ``auto`` server in the fleet: take (or renew) the watch leases of
        the servers wanted, start the watchers this process now holds, cancel stale ones and those
        whose lease another process holds."""
        wanted = {p.name: p.target for p in await anyio.to_thread.run_sync(plan, self.ctx, None)
                  if p.problem is None}  # a server whose secrets do not open is not watched
        for name, (target, scope) in list(self._watchers.items()):
            if wanted.get(name) != target:  # removed, disabled, manual, or edited (url, command, headers...)
                scope.cancel()
                del self._watchers[name]
                await anyio.to_thread.run_sync(leases.release, self.ctx.db, _watch_key(name), self.holder)
        held = await anyio.to_thread.run_sync(self._take_watch_leases, list(wanted))
        for name, (_, scope) in list(self._watchers.items()):
            if name not in held:  # this process lost the lease (it stalled past it): the new holder watches
                scope.cancel()
                del self._watchers[name]
        for name, target in wanted.items():
            if name not in self._watchers and name in held:
                scope = anyio.CancelScope()
                self._watchers[name] = (target, scope)
                tg.start_soon(self._watch, name, target, http, scope)

    def _take_watch_leases(self, names: list[str]) -> set[str]:
        """The servers of ``names`` whose watch lease this process holds now (taken or renewed)."""
        with self.ctx.db.engine.begin() as conn:
            keys = leases.acquire_many(conn, [_watch_key(n) for n in names], self.ctx.settings.lease_seconds,
                                       self.holder)
        return {name for name in names if _watch_key(name) in keys}

    async def _release_watch_leases(self) -> None:
        names, self._watchers = list(self._watchers), {}
        for name in names:
            try:
                await anyio.to_thread.run_sync(leases.release, self.ctx.db, _watch_key(name), self.holder)
            except Exception:  # the database is away: the lease lapses on its own
                log.warning("could not release the watch lease of %s", name)

    async def _watch(
        self, name: str, target: Target, http: httpx2.AsyncClient, scope: anyio.CancelScope
    ) -> None:
        with scope:
            try:
                await watch_list_changed(target, limits_from(self.ctx), lambda: self.request(name), http=http)
            except Exception:  # a bug, not the server (the watcher never raises for those): log, don't spread
                log.exception("list-changed watcher of %s failed", name)

    async def _once(self, http: httpx2.AsyncClient) -> None:
        now = utcnow()
        clock = anyio.current_time()
        ready = [name for name, (due, _) in self._requested.items() if due <= clock]
        if ready:
            since = min(self._requested[name][1] for name in ready)
            for name in ready:
                del self._requested[name]
            plans = await anyio.to_thread.run_sync(self._named, ready)
            runs = await run_passes(self.ctx, plans, trigger="list-changed", http=http, on_run=self.on_run,
                                    unless_discovered_since=since)
            self.passes += sum(r.id is not None for r in runs)
        due = await anyio.to_thread.run_sync(self._due, now)
        if due:
            cutoff = now - timedelta(seconds=self.ctx.settings.discovery_interval)
            runs = await run_passes(self.ctx, due, trigger="schedule", http=http, on_run=self.on_run,
                                    unless_discovered_since=cutoff + timedelta(microseconds=1))
            self.passes += sum(r.id is not None for r in runs)


def _watch_key(name: str) -> str:
    return f"watch:{name}"


def _http_client(ctx: Context) -> httpx2.AsyncClient:
    """The scheduler's one HTTP client, shared by passes and watchers.

    Unlike ``shared_http_client`` it has no cap on open connections: every watched streamable-HTTP
    server holds one long-lived stream, and with a cap those streams would starve the passes of
    connections. Passes stay bounded by ``discovery_concurrency`` (a limiter in ``run_passes``).
    """
    s = ctx.settings
    return http_client(timeout=httpx2.Timeout(s.read_timeout, connect=s.connect_timeout), guard=upstream_guard(ctx),
                       max_connections=None, max_keepalive=max(s.discovery_concurrency * 2, 32))
