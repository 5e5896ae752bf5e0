"""Discovery passes (SPEC §4): list each server, reconcile, write the result in one transaction.

The network half (``toolvet.discovery``) never raises for what a server does; this half turns its
listing into a change set with the pure ``domain.reconcile`` and writes it with statements built only
from discovery-owned columns, so an operator's edit racing a pass is never overwritten.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import anyio
import anyio.to_thread
import httpx2
from sqlalchemy import delete, func, insert, select, update
from sqlalchemy.orm import Session

from toolvet.db.models import DiscoveryRun, Server, Tool, ToolDefinition
from toolvet.db.ownership import DISCOVERY_COLUMNS, only
from toolvet.db.types import utcnow
from toolvet.discovery import Limits, Listing, Target, fetch_listing
from toolvet.domain.reconcile import ChangeSet, StoredTool, Upsert, reconcile
from toolvet.errors import InvalidInput, NotFound
from toolvet.schemas.common import Page
from toolvet.schemas.tools import DiscoveryRunOut
from toolvet.services import leases
from toolvet.services.auth import Permission, Principal
from toolvet.services.context import Context
from toolvet.services.servers import load as load_server

OnRun = Callable[[DiscoveryRunOut], None]


@dataclass(frozen=True)
class PassPlan:
    """One server to list: its id and name, and where it is (secrets opened)."""

    server_id: int
    name: str
    target: Target


def limits_from(ctx: Context) -> Limits:
    s = ctx.settings
    return Limits(connect_timeout=s.connect_timeout, read_timeout=s.read_timeout, pass_timeout=s.pass_timeout,
                  max_pages=s.max_pages, max_tools=s.max_tools)


def shared_http_client(ctx: Context) -> httpx2.AsyncClient:
    """One pool for a whole sweep: a connection per server is set up once, not once per request."""
    s = ctx.settings
    return httpx2.AsyncClient(
        timeout=httpx2.Timeout(s.read_timeout, connect=s.connect_timeout),
        limits=httpx2.Limits(max_connections=max(s.discovery_concurrency * 2, 32),
                             max_keepalive_connections=max(s.discovery_concurrency * 2, 32)),
    )


def _plan(ctx: Context, server: Server) -> PassPlan:
    return PassPlan(server.id, server.name, Target(
        transport=server.transport, url=server.url, headers=ctx.secrets.open(server.headers_secret),  # type: ignore[arg-type]
        command=server.command, args=tuple(server.args or ()), env=ctx.secrets.open(server.env_secret),
        cwd=server.cwd,
    ))


def plan(ctx: Context, names: Sequence[str] | None) -> list[PassPlan]:
    """The servers a pass covers: those named (each must exist and be ``auto``), else every enabled
    ``auto`` server."""
    with ctx.db.transaction() as session:
        if names:
            plans = []
            for name in dict.fromkeys(names):
                server = load_server(session, name)
                if server.discovery == "manual":
                    raise InvalidInput(f"server {name!r} is manual: toolvet never contacts it", "server")
                plans.append(_plan(ctx, server))
            return plans
        servers = session.scalars(
            select(Server).where(Server.enabled.is_(True), Server.discovery == "auto").order_by(Server.name)
        ).all()
        return [_plan(ctx, s) for s in servers]


async def discover(
    ctx: Context, principal: Principal, names: Sequence[str] | None = None, *, trigger: str = "manual",
    on_run: OnRun | None = None, http: httpx2.AsyncClient | None = None,
) -> list[DiscoveryRunOut]:
    """List the named servers (or all enabled ``auto`` ones), at most ``discovery_concurrency`` at a
    time, and return one run report per server in the order planned."""
    principal.require(Permission.DISCOVER)
    plans = await anyio.to_thread.run_sync(plan, ctx, names)
    return await run_passes(ctx, plans, trigger=trigger, on_run=on_run, http=http)


async def run_passes(
    ctx: Context, plans: Sequence[PassPlan], *, trigger: str, on_run: OnRun | None = None,
    http: httpx2.AsyncClient | None = None, unless_discovered_since: datetime | None = None,
) -> list[DiscoveryRunOut]:
    reports: list[DiscoveryRunOut | None] = [None] * len(plans)
    limiter = anyio.CapacityLimiter(ctx.settings.discovery_concurrency)
    owned = http is None
    client = http or shared_http_client(ctx)
    try:
        async def one(index: int, item: PassPlan) -> None:
            async with limiter:
                reports[index] = report = await run_pass(ctx, item, trigger=trigger, http=client,
                                                         unless_discovered_since=unless_discovered_since)
            if on_run is not None:
                on_run(report)

        async with anyio.create_task_group() as tg:
            for index, item in enumerate(plans):
                tg.start_soon(one, index, item)
    finally:
        if owned:
            await client.aclose()
    return [r for r in reports if r is not None]


def _skipped(item: PassPlan, trigger: str, why: str) -> DiscoveryRunOut:
    now = utcnow()
    return DiscoveryRunOut(id=None, server=item.name, trigger=trigger, runner=None, started_at=now, finished_at=now,
                           status="skipped", protocol_version=None, pages=0, added=0, changed=0, unchanged=0,
                           retired=0, rejected=0, rejections=[], error=why)


def _discovered_since(ctx: Context, server_id: int, since: datetime) -> bool:
    with ctx.db.transaction() as session:
        last = session.scalar(select(Server.last_discovery_at).where(Server.id == server_id))
    return last is not None and last >= since


async def run_pass(
    ctx: Context, item: PassPlan, *, trigger: str, http: httpx2.AsyncClient | None,
    unless_discovered_since: datetime | None = None,
) -> DiscoveryRunOut:
    """One pass over one server under its lease; a server another process is listing is skipped, and
    so is one discovered after ``unless_discovered_since`` (another process's scheduler beat us)."""
    key = f"discover:{item.name}"
    lease_for = max(ctx.settings.lease_seconds, ctx.settings.pass_timeout + 60)
    if not await anyio.to_thread.run_sync(leases.acquire, ctx.db, key, lease_for):
        return _skipped(item, trigger, "another toolvet process is discovering this server now")
    try:
        if unless_discovered_since is not None and await anyio.to_thread.run_sync(
            _discovered_since, ctx, item.server_id, unless_discovered_since
        ):
            return _skipped(item, trigger, "discovered by another toolvet process meanwhile")
        started = utcnow()
        listing = await fetch_listing(item.target, limits_from(ctx), http)
        return await anyio.to_thread.run_sync(apply_listing, ctx, item, listing, started, trigger)
    finally:
        with anyio.CancelScope(shield=True):
            await anyio.to_thread.run_sync(leases.release, ctx.db, key)


def _stored(session: Session, server_id: int) -> list[StoredTool]:
    rows = session.execute(
        select(Tool.id, Tool.name, Tool.definition_digest, Tool.input_schema, Tool.advertised_read_only,
               Tool.retired_at).where(Tool.server_id == server_id)
    ).all()
    return [StoredTool(id=r.id, name=r.name, digest=r.definition_digest, input_schema=r.input_schema,
                       advertised_read_only=r.advertised_read_only, retired=r.retired_at is not None) for r in rows]


def _claim_columns(upsert: Upsert, now: datetime) -> dict[str, Any]:
    c = upsert.claim
    return only(DISCOVERY_COLUMNS, {
        "title": c.title, "description": c.description, "input_schema": c.input_schema,
        "output_schema": c.output_schema, "annotations": c.annotations, "icons": c.icons, "meta": c.meta,
        "definition": c.definition, "advertised_read_only": c.advertised_read_only,
        "definition_fingerprint": c.fingerprint, "definition_digest": c.digest, "last_seen_at": now,
        "retired_at": None, "findings": upsert.findings,
    }, "discovery")


def write_changes(session: Session, server: Server, changes: ChangeSet, now: datetime) -> None:
    """Apply a change set; the caller's transaction makes it all or nothing."""
    history: list[dict[str, Any]] = []
    if changes.added:
        # New tools get their first operator-owned values here, once (SPEC §4.2); never again.
        rows = [{**_claim_columns(u, now), "server_id": server.id, "name": u.claim.name,
                 "enabled": server.new_tools_enabled, "writable": True, "first_seen_at": now}
                for u in changes.added]
        ids = session.execute(insert(Tool).returning(Tool.id, Tool.name), rows).all()
        by_name = {u.claim.name: u.claim for u in changes.added}
        history += [{"tool_id": r.id, "digest": by_name[r.name].digest, "fingerprint": by_name[r.name].fingerprint,
                     "definition": by_name[r.name].definition, "first_seen_at": now} for r in ids]
    if changes.changed:
        ids = [u.tool_id for u in changes.changed]
        known = {(r.tool_id, r.digest) for r in session.execute(
            select(ToolDefinition.tool_id, ToolDefinition.digest).where(ToolDefinition.tool_id.in_(ids))
        )}
        for u in changes.changed:
            session.execute(update(Tool).where(Tool.id == u.tool_id).values(**_claim_columns(u, now)))
            if (u.tool_id, u.claim.digest) not in known:
                history.append({"tool_id": u.tool_id, "digest": u.claim.digest, "fingerprint": u.claim.fingerprint,
                                "definition": u.claim.definition, "first_seen_at": now})
    if history:
        session.execute(insert(ToolDefinition), history)
    if changes.unchanged_ids:
        session.execute(update(Tool).where(Tool.id.in_(changes.unchanged_ids)).values(last_seen_at=now))
    if changes.retire_ids:
        if server.remove_stale:
            session.execute(delete(Tool).where(Tool.id.in_(changes.retire_ids)))
        else:
            # The one operator field discovery may touch, and only to clear it (SPEC §4.2).
            session.execute(update(Tool).where(Tool.id.in_(changes.retire_ids)).values(enabled=False, retired_at=now))


def apply_listing(ctx: Context, item: PassPlan, listing: Listing, started: datetime, trigger: str) -> DiscoveryRunOut:
    """Reconcile a listing and record the run, in one transaction. Only an ``ok`` listing changes
    tools: an incomplete or failed one is recorded and changes nothing (SPEC §4.2)."""
    now = utcnow()
    changes = ChangeSet()
    with ctx.db.transaction() as session:
        server = session.get(Server, item.server_id)
        if server is None:
            raise NotFound(f"server {item.name!r} was removed during its discovery pass")
        status, error = listing.status, listing.error
        if status == "ok":
            changes = reconcile(_stored(session, server.id), listing.tools, complete=True,
                                max_definition_bytes=ctx.settings.max_definition_bytes)
            write_changes(session, server, changes, now)
        values: dict[str, Any] = {"last_discovery_at": now, "last_discovery_status": status, "last_error": error,
                                  "updated_at": server.updated_at}
        if status == "ok":
            values |= {"protocol_version": listing.protocol_version, "server_info": listing.server_info,
                       "capabilities": listing.capabilities, "instructions": listing.instructions}
        session.execute(update(Server).where(Server.id == server.id).values(**values))
        counts = changes.counts()
        run = DiscoveryRun(server_id=server.id, server_name=server.name, started_at=started, finished_at=now,
                           status=status, trigger=trigger, runner=leases.HOLDER,
                           protocol_version=listing.protocol_version,
                           pages=listing.pages, rejections=[r.as_dict() for r in changes.rejected], error=error,
                           **counts)
        session.add(run)
        session.flush()
        return run_out(run)


def run_out(run: DiscoveryRun) -> DiscoveryRunOut:
    return DiscoveryRunOut(
        id=run.id, server=run.server_name, trigger=run.trigger, runner=run.runner, started_at=run.started_at,
        finished_at=run.finished_at, status=run.status, protocol_version=run.protocol_version, pages=run.pages,
        added=run.added, changed=run.changed, unchanged=run.unchanged, retired=run.retired, rejected=run.rejected,
        rejections=list(run.rejections or []), error=run.error,
    )


def list_runs(
    ctx: Context, principal: Principal, *, server: str | None = None, status: str | None = None,
    limit: int = 100, offset: int = 0,
) -> Page[DiscoveryRunOut]:
    """Discovery runs, newest first."""
    principal.require(Permission.READ)
    query = select(DiscoveryRun)
    if server:
        query = query.where(DiscoveryRun.server_name == server)
    if status:
        query = query.where(DiscoveryRun.status == status)
    with ctx.db.transaction() as session:
        total = session.scalar(select(func.count()).select_from(query.subquery())) or 0
        rows = session.scalars(query.order_by(DiscoveryRun.id.desc()).limit(limit).offset(offset)).all()
        return Page(items=[run_out(r) for r in rows], total=total, limit=limit, offset=offset)
