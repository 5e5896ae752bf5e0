"""Discovery passes (docs/discovery.md): list each server, reconcile, write the result in one transaction.

The network half (``toolvet.discovery``) never raises for what a server does; this half turns its
listing into a change set with the pure ``domain.reconcile`` and writes it with statements built only
from discovery-owned columns, so an operator's edit racing a pass is never overwritten.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Final

import anyio
import anyio.abc
import anyio.to_thread
import httpx2
from sqlalchemy import ColumnElement, func, select
from sqlalchemy.orm import defer

from toolvet.db.models import DiscoveryRun, Server
from toolvet.db.types import utcnow
from toolvet.discovery import Limits, Listing, fetch_listing
from toolvet.errors import InvalidInput, ToolvetError
from toolvet.schemas.common import Page
from toolvet.schemas.tools import DiscoveryRunOut
from toolvet.services import leases, metrics
from toolvet.services.auth import Permission, Principal
from toolvet.services.context import Context
from toolvet.services.discovery_writer import PassWriter, ProcessWriter, writer_for
from toolvet.services.discovery_writes import listing_key, run_out
from toolvet.services.events import TOOLS
from toolvet.services.heap import frozen_during
from toolvet.services.oauth import token_source
from toolvet.services.search import matching, order_of, page_of
from toolvet.services.servers import load as load_server
from toolvet.upstream.guard import AddressGuard
from toolvet.upstream.http import http_client
from toolvet.upstream.target import Target

OnRun = Callable[[DiscoveryRunOut], None]

#: How many fetched listings, per slot of ``discovery_concurrency``, may wait for the writer while the
#: slots fetch more: two keeps a writer process's groups full (``discovery_writes.GROUP_TOOLS``) for
#: the usual listing of tens of tools.
WRITE_BACKLOG: Final = 2


@dataclass(frozen=True)
class PassPlan:
    """One server to list: its id and name, and where it is (secrets opened)."""

    server_id: int
    name: str
    target: Target
    #: The server's remembered listing key when the plan was made: a fresh listing with this key will
    #: most likely take the no-change fast path (sent to a writer process without its tools, or run on
    #: the event loop by an inline writer).
    listing_key: str | None = None
    updated_at: datetime | None = None
    #: Why the server cannot be listed at all (its stored secrets do not open with this key): its pass
    #: records that as a failed run, and the other servers of the sweep go on.
    problem: str | None = None


def limits_from(ctx: Context) -> Limits:
    s = ctx.settings
    return Limits(connect_timeout=s.connect_timeout, read_timeout=s.read_timeout, pass_timeout=s.pass_timeout,
                  max_pages=s.max_pages, max_tools=s.max_tools, max_depth=s.max_json_depth)


def upstream_guard(ctx: Context) -> AddressGuard:
    """Which addresses toolvet may connect to for an upstream (link-local and metadata never; the
    ranges ``upstream_deny`` lists neither)."""
    return AddressGuard(ctx.settings.upstream_deny)


def shared_http_client(ctx: Context) -> httpx2.AsyncClient:
    """One pool for a whole sweep: a connection per server is set up once, not once per request."""
    s = ctx.settings
    size = max(s.discovery_concurrency * 2, 32)
    return http_client(timeout=httpx2.Timeout(s.read_timeout, connect=s.connect_timeout), guard=upstream_guard(ctx),
                       max_connections=size, max_keepalive=size)


def target_of(ctx: Context, server: Server) -> Target:
    """Where and how a server is reached, its secrets opened (for a pass, a watcher or a call)."""
    return Target(
        transport=server.transport, url=server.url, headers=ctx.secrets.open(server.headers_secret),  # type: ignore[arg-type]
        command=server.command, args=tuple(server.args or ()), env=ctx.secrets.open(server.env_secret),
        cwd=server.cwd, auth=token_source(ctx, server),
    )


def _plan(ctx: Context, server: Server) -> PassPlan:
    try:
        target = target_of(ctx, server)
    except ToolvetError as exc:  # this server's secrets only: it fails alone, never its sweep
        return PassPlan(server.id, server.name, Target(transport=server.transport, url=server.url,  # type: ignore[arg-type]
                                                       command=server.command), problem=exc.message)
    return PassPlan(server.id, server.name, target, listing_key=server.listing_key, updated_at=server.updated_at)


#: What the last pass stored of a server, which a plan never reads: not loaded (nor decoded) for a sweep's
#: servers, and an error if read (a lazy load per server would cost more than loading it).
_NOT_PLANNED = (defer(Server.server_info, raiseload=True), defer(Server.capabilities, raiseload=True),
                defer(Server.instructions, raiseload=True))


def plans_where(ctx: Context, *where: ColumnElement[bool]) -> list[PassPlan]:
    """The plans of the enabled ``auto`` servers that also match ``where``, in name order, from one query:
    a manual sweep of every server, the scheduler's sweep of those due, its passes after list_changed."""
    with ctx.db.transaction() as session:
        servers = session.scalars(
            select(Server).where(Server.enabled.is_(True), Server.discovery == "auto", *where)
            .order_by(Server.name).options(*_NOT_PLANNED)
        ).all()
        return [_plan(ctx, s) for s in servers]


def plan(ctx: Context, names: Sequence[str] | None) -> list[PassPlan]:
    """The servers a pass covers: those named (each must exist and be ``auto``), else every enabled
    ``auto`` server."""
    if not names:
        return plans_where(ctx)
    with ctx.db.transaction() as session:
        plans = []
        for name in dict.fromkeys(names):
            server = load_server(session, name)
            if server.discovery == "manual":
                raise InvalidInput(f"server {name!r} is manual: toolvet never contacts it", "server")
            plans.append(_plan(ctx, server))
        return plans


async def discover(
    ctx: Context, principal: Principal, names: Sequence[str] | None = None, *, trigger: str = "manual",
    on_run: OnRun | None = None, http: httpx2.AsyncClient | None = None,
) -> list[DiscoveryRunOut]:
    """List the named servers (or all enabled ``auto`` ones), at most ``discovery_concurrency`` at a
    time, and return one run report per server in the order planned."""
    principal.require(Permission.DISCOVER)
    plans = await anyio.to_thread.run_sync(plan, ctx, names)
    return await run_passes(ctx, plans, trigger=trigger, on_run=on_run, http=http)


def lease_seconds(ctx: Context) -> float:
    """How long a pass's lease lasts without renewal; a sweep renews its leases while it runs
    (``services.leases.keep_renewed``), however long its passes take or wait for a slot."""
    return ctx.settings.lease_seconds


async def run_passes(
    ctx: Context, plans: Sequence[PassPlan], *, trigger: str, on_run: OnRun | None = None,
    http: httpx2.AsyncClient | None = None, unless_discovered_since: datetime | None = None,
) -> list[DiscoveryRunOut]:
    """Run ``plans``, at most ``discovery_concurrency`` listings fetched at a time, their database steps
    through one writer (``services.discovery_writer``: a writer process for a big sweep, else this process).

    The bound is on fetching, what the upstreams feel: a pass whose listing is fetched gives its slot to
    the next one while it waits for the writer, and up to WRITE_BACKLOG x ``discovery_concurrency``
    fetched listings wait (their memory is the bound's price). A pass that held its slot while it
    waited left the writer idle between its groups: it wrote what the slots had fetched, then waited
    for the next round of fetches (docs/benchmarks.md, discovery Round 12).

    Leases are taken as many servers at a time as passes may be in flight, one transaction each, ahead
    of the passes that need them; a server another process is listing is skipped, and with
    ``unless_discovered_since`` so is one discovered since (another process's scheduler beat us).
    A lease taken for a pass that never starts (the sweep failed or was cancelled) is given back.
    """
    reports: list[DiscoveryRunOut | None] = [None] * len(plans)
    concurrency = ctx.settings.discovery_concurrency
    in_flight = concurrency * (1 + WRITE_BACKLOG)  # passes fetching, or fetched and waiting for the writer
    writer = writer_for(ctx, len(plans))
    leased: dict[int, str] = {}  # leases taken for passes not started yet, by plan index
    owned = http is None
    client = http or shared_http_client(ctx)

    def done(index: int, report: DiscoveryRunOut) -> None:
        reports[index] = report
        if report.added or report.changed or report.retired:  # the gateways re-read what they offer now
            ctx.bus.publish({"type": "tools-changed", "server": report.server}, TOOLS)
        if on_run is not None:
            on_run(report)

    # Two chunks of leased passes wait in the buffer: the next leases are taken (a transaction that may
    # wait for the writer's commit) while the passes already leased keep every slot busy.
    send, receive = anyio.create_memory_object_stream[tuple[int, PassPlan]](2 * in_flight)

    async def lease_ahead() -> None:
        async with send:
            for start in range(0, len(plans), in_flight):
                chunk = list(enumerate(plans[start:start + in_flight], start))
                keys = [(_lease_key(item), item.server_id) for _, item in chunk]
                whys = await writer.begin(keys, lease_seconds(ctx), unless_discovered_since)
                leased.update((index, key) for (index, _), (key, _), why in zip(chunk, keys, whys, strict=True)
                              if why is None)
                for (index, item), why in zip(chunk, whys, strict=True):
                    if why is None:
                        await send.send((index, item))
                    else:
                        done(index, _skipped(item, trigger, why))

    fetching = anyio.Semaphore(concurrency)

    async def work(queue: anyio.abc.ObjectReceiveStream[tuple[int, PassPlan]]) -> None:
        async with queue:
            async for index, item in queue:
                key = leased.pop(index)
                done(index, await run_pass(ctx, item, key, trigger=trigger, http=client, writer=writer,
                                           fetching=fetching))

    # A big sweep (one with a writer process) runs with the heap it found frozen (see services.heap).
    frozen = frozen_during() if isinstance(writer, ProcessWriter) else contextlib.nullcontext()
    try:
        with frozen:
            async with anyio.create_task_group() as beat:
                beat.start_soon(leases.keep_renewed, ctx.db, lease_seconds(ctx))
                async with anyio.create_task_group() as tg:
                    tg.start_soon(lease_ahead)
                    async with receive:
                        for _ in range(min(in_flight, len(plans))):
                            tg.start_soon(work, receive.clone())
                beat.cancel_scope.cancel()
    finally:
        with anyio.CancelScope(shield=True):
            for key in leased.values():
                await writer.release(key)
            if owned:
                await client.aclose()
    return [r for r in reports if r is not None]


def _lease_key(item: PassPlan) -> str:
    return f"discover:{item.name}"


def _skipped(item: PassPlan, trigger: str, why: str) -> DiscoveryRunOut:
    now = utcnow()
    return DiscoveryRunOut(id=None, server=item.name, trigger=trigger, runner=None, started_at=now, finished_at=now,
                           status="skipped", protocol_version=None, pages=0, added=0, changed=0, unchanged=0,
                           retired=0, rejected=0, rejections=[], error=why)


async def run_pass(
    ctx: Context, item: PassPlan, lease_key: str, *, trigger: str, http: httpx2.AsyncClient | None,
    writer: PassWriter, fetching: anyio.Semaphore,
) -> DiscoveryRunOut:
    """One pass over one server whose lease ``lease_key`` is held, its fetch inside a slot of
    ``fetching``. The lease is released in the transaction that records the run; only a pass that
    fails or is cancelled before that commits releases it separately, shielded."""
    released = False
    try:
        async with fetching:
            started, clock = utcnow(), time.perf_counter()
            listing = (await fetch_listing(item.target, limits_from(ctx), http) if item.problem is None
                       else Listing(status="failed", tools=[], error=item.problem, protocol_version=None,
                                    server_info=None, capabilities=None, instructions=None, pages=0))
        report = await writer.apply(item.server_id, item.name, listing, started, trigger, lease_key,
                                    likely_unchanged=_likely_unchanged(ctx, item, listing))
        released = True  # committed with the run (a thread hop is not abandoned on cancel)
        metrics.discovery_pass(report.status, time.perf_counter() - clock)
        return report
    finally:
        if not released:
            with anyio.CancelScope(shield=True):
                await writer.release(lease_key)


def _likely_unchanged(ctx: Context, item: PassPlan, listing: Listing) -> bool:
    if listing.status != "ok" or listing.digest is None or item.listing_key is None or item.updated_at is None:
        return False
    return listing_key(listing.digest, ctx.settings.max_definition_bytes, item.updated_at) == item.listing_key


#: The orders runs can be listed in (``started``, descending, is newest first).
RUN_SORTS: Final = {"started": (DiscoveryRun.id,), "server": (DiscoveryRun.server_name, DiscoveryRun.id)}


def list_runs(
    ctx: Context, principal: Principal, *, server: str | None = None, status: str | None = None,
    q: str = "", sort: str = "started", descending: bool = True, limit: int = 100, offset: int = 0,
) -> Page[DiscoveryRunOut]:
    """Discovery runs, newest first unless sorted otherwise; ``q`` searches the server's name and the error."""
    principal.require(Permission.READ)
    query = select(DiscoveryRun)
    if server:
        query = query.where(DiscoveryRun.server_name == server)
    if status:
        query = query.where(DiscoveryRun.status == status)
    if q:
        query = query.where(matching(q, DiscoveryRun.server_name, DiscoveryRun.error))
    with ctx.db.transaction() as session:
        return page_of(session, query, order_of(RUN_SORTS, sort, descending=descending), limit, offset, run_out)


def last_runs(ctx: Context, principal: Principal, servers: Sequence[str]) -> dict[str, DiscoveryRunOut]:
    """Each named server's newest run (servers never run are left out)."""
    principal.require(Permission.READ)
    if not servers:
        return {}
    newest = (select(func.max(DiscoveryRun.id)).where(DiscoveryRun.server_name.in_(servers))
              .group_by(DiscoveryRun.server_name))
    with ctx.db.transaction() as session:
        rows = session.scalars(select(DiscoveryRun).where(DiscoveryRun.id.in_(newest))).all()
        return {r.server_name: run_out(r) for r in rows}
